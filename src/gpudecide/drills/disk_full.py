"""Drill disk-full: the kernel answers ENOSPC while a checkpoint is being written (SPEC G4, A2).

The job's working folder is a small tmpfs (or loop-mounted ext4) sized for one checkpoint
and a half: the first checkpoint fits, the second runs out of space half-way. The
half-written one must never look whole (no `checkpoint-N` folder that fails its sums), the
previous one must verify and resume, the status must say what happened. The negative twin
copies a checkpoint the naive way (`shutil.copytree` under its final name) onto the same
full disk: a `checkpoint-N` folder is left that looks whole and is not, and the drill fails.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from gpudecide.drills import runner
from gpudecide.drills.faults import (
    MOUNT_NAME,
    FaultUnsupported,
    SmallFilesystem,
    Stale,
    clear_stale,
)
from gpudecide.drills.journal import Journal, Probe, always, rollbacks
from gpudecide.drills.runner import DrillContext, DrillResult, last, steps_of
from gpudecide.message import Message, english, message, nmessage
from gpudecide.portability.lm import CausalLM
from gpudecide.portability.trainer import (
    CheckpointError,
    TrainConfig,
    list_checkpoints,
    train,
    verify_checkpoint,
)

__all__ = [
    "OVERHEAD_BYTES",
    "checkpoint_estimate",
    "run",
]

# Checkpoint overhead beyond weights and two Adam moments (RNG states, JSON, pickle framing).
OVERHEAD_BYTES = 48 << 10


def checkpoint_estimate(train_cfg: dict[str, Any]) -> int:
    """Bytes one checkpoint takes: fp32 weights plus two fp32 optimizer moments, plus files."""
    params = sum(p.numel() for p in CausalLM(TrainConfig(**train_cfg).dims()).parameters())
    return 12 * params + OVERHEAD_BYTES


def _inspect(workdir: Path, naive_copy: bool) -> dict[str, Any]:
    """What is on the full disk: published checkpoints, which verify, leftovers."""
    facts: dict[str, Any] = {"naive_copy_error": None}
    published = list_checkpoints(workdir)
    if naive_copy and published:
        step, good = published[-1]
        try:
            shutil.copytree(good, workdir / f"checkpoint-{step + 10_000}")
        except shutil.Error as exc:
            # The reasons, not the (long) paths first: the kernel's words must survive the cut.
            reasons = sorted({str(why) for _src, _dst, why in exc.args[0]})
            facts["naive_copy_error"] = "; ".join(reasons)[:300]
        except OSError as exc:
            facts["naive_copy_error"] = f"[Errno {exc.errno}] {exc.strerror}"[:300]
        published = list_checkpoints(workdir)
    verified, broken = [], []
    for step, path in published:
        try:
            verify_checkpoint(path)
            verified.append(step)
        except CheckpointError as exc:
            broken.append({"step": step, "reason": exc.reason})
    facts.update(
        published=[s for s, _ in published],
        verified=verified,
        looks_whole_but_broken=broken,
        leftovers=sorted(p.name for p in workdir.iterdir() if p.name.startswith(".")),
    )
    return facts


def _resume_one_step(ctx: DrillContext, good: Path, step: int, dest: Path) -> Probe:
    """Prove the previous checkpoint is usable: resume from it for one step, on a good disk."""
    try:
        torch.set_num_threads(1)
        done = train(TrainConfig(**ctx.train), dest, resume_from=good, stop_at=step + 1)
    except (CheckpointError, OSError) as exc:
        return Probe(f"checkpoint-{step} resumes", False, str(exc))
    return Probe(f"checkpoint-{step} resumes", done.start_step == step, done.final_step)


def run(ctx: DrillContext, *, naive_copy: bool = False) -> DrillResult:
    """Run the drill; `naive_copy` is the negative twin."""
    run_dir = ctx.root / ("disk-full-naive-copy" if naive_copy else "disk-full")
    url = ctx.storage_url(run_dir)
    j = runner.new_journal(
        "disk-full",
        "Disk full while a checkpoint is written",
        "The job's working folder is a small filesystem; the kernel returns ENOSPC.",
        "no half-written checkpoint looks whole; the previous checkpoint verifies and resumes",
    )
    size = int(checkpoint_estimate(ctx.train) * 1.5)
    # A run killed before its rollback (SIGKILL) left its small filesystem mounted: found
    # and unmounted now, or reported when it cannot be.
    stale = clear_stale(ctx.root.parent)
    for found in stale:
        j.observe("stale mount of an earlier run", asdict(found))
    fs = SmallFilesystem(run_dir / MOUNT_NAME, size)
    j.steady("before", [runner.storage_probe(ctx, url) if url else Probe("node disk", True)])
    facts: dict[str, Any] = {}
    job = None
    events: list[dict[str, Any]] = []
    try:
        with j.activity("action", f"mount a {size} byte filesystem as the working folder") as rec:
            try:
                rec["output"] = fs.mount()
            except FaultUnsupported as exc:
                return runner.cannot_inject(j, "disk-full", run_dir, exc.said)
        j.fault = {"type": "ENOSPC", "filesystem": fs.kind, "size_bytes": size}
        workdir = fs.mountpoint / "job"
        with j.activity("action", "train until the disk is full") as rec:
            spec = runner.job_spec(
                ctx, run_dir, "train", workdir, restore_dir=str(run_dir / "restore")
            )
            files = runner.write_job(run_dir, "train", spec)
            job = runner.submit(ctx, files)
            status = job.wait(ctx.timeout_s)
            events = files.events_now()
            rec["output"] = {"returncode": status.returncode}
        with j.activity("probe", "inspect the full disk") as rec:
            facts = _inspect(workdir, naive_copy)
            facts["free_bytes"] = fs.free_bytes()
            rec["output"] = facts
        if facts["verified"]:
            step = facts["verified"][-1]
            good_copy = run_dir / f"good-checkpoint-{step}"
            shutil.rmtree(good_copy, ignore_errors=True)
            shutil.copytree(workdir / f"checkpoint-{step}", good_copy)
            facts["good_copy"] = str(good_copy)
    finally:
        with rollbacks():
            always(j, "stop the job", lambda: runner.cancel(job))
            always(j, "unmount the small filesystem", fs.unmount)
    result = _judge(ctx, j, run_dir, url, events, facts)
    if stale:
        result.details["stale_mounts"] = [asdict(x) for x in stale]
        result.note_messages.extend(_stale_message(x) for x in stale)
        j.write(result.journal, result.as_dict())
    return result


def _stale_message(found: Stale) -> Message:
    """What became of a small filesystem an earlier run left mounted."""
    if found.removed:
        return message(
            "drills",
            "an earlier disk-full drill, stopped before its rollback, had left {path} mounted: "
            "unmounted",
            path=found.path,
        )
    return message(
        "drills",
        "an earlier disk-full drill left {path} mounted and it cannot be unmounted ({problem}): "
        "unmount it by hand",
        path=found.path,
        problem=found.problem or "-",
    )


def _judge(
    ctx: DrillContext,
    j: Journal,
    run_dir: Path,
    url: str | None,
    events: list[dict[str, Any]],
    facts: dict[str, Any],
) -> DrillResult:
    failed = last(events, "failed")
    step_at_failure = max(steps_of(events, "step") or [0])
    good = facts.get("verified", [])
    from_step = good[-1] if good else 0
    after: list[Probe] = []
    if good:
        after.append(_resume_one_step(ctx, Path(facts["good_copy"]), from_step, run_dir / "resume"))
        if url is not None and from_step in steps_of(events, "uploaded"):
            after.append(
                runner.verify_stored(runner.open_store(ctx, url), from_step, run_dir / "v")
            )
    j.steady("after", after)
    noticed = failed is not None and failed.get("errno") == "ENOSPC"
    kept = bool(good) and not facts["looks_whole_but_broken"] and all(p.ok for p in after)
    explained = noticed and "No space left on device" in (failed or {}).get("message", "")
    broken = facts.get("looks_whole_but_broken") or []
    said = _status_message(kept, step_at_failure, from_step, len(broken))
    j.observe("status", english(said))
    result = DrillResult(
        drill="disk-full",
        status_message=said,
        verdict=runner.verdict_of(noticed, kept, explained),
        noticed=noticed,
        data_kept=kept,
        explained=explained,
        resumed_from_step=from_step,
        lost_steps=step_at_failure - from_step,
        lost_seconds=runner.seconds_between(
            runner.step_time(events, from_step), failed["at"] if failed else None
        ),
        journal=run_dir / "journal.json",
        storage_url=url,
        details={"disk": {k: v for k, v in facts.items() if k != "good_copy"}},
    )
    j.write(result.journal, result.as_dict())
    return result


def _status_message(kept: bool, step: int, from_step: int, broken: int) -> Message:
    """The drill's status: the kernel's ENOSPC and what was left on the full disk."""
    if kept:
        return message(
            "drills",
            "disk full (ENOSPC from the kernel) at step {step} while writing a checkpoint; "
            "checkpoint-{good} intact and resumable",
            step=step,
            good=from_step,
        )
    if broken:
        return nmessage(
            "drills",
            "disk full at step {step}; {n} checkpoint folder looks whole but fails its sums",
            "disk full at step {step}; {n} checkpoint folders look whole but fail their sums",
            step=step,
            n=broken,
        )
    return message("drills", "disk full at step {step}; no usable checkpoint left", step=step)
