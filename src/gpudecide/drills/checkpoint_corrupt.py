"""Drill checkpoint-corrupt: flip bytes in the newest checkpoint copy in external storage;
the restore must detect the hash mismatch and fall back to the previous good one (SPEC G4, A2).

The negative twin corrupts every stored copy: nothing verifies, the job restarts from zero
and the drill fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpudecide.drills import runner
from gpudecide.drills.faults import flip_bytes
from gpudecide.drills.job import stored_steps
from gpudecide.drills.journal import Journal, Probe, always, rollbacks
from gpudecide.drills.runner import DrillContext, DrillResult, last
from gpudecide.message import nmessage

__all__ = [
    "run",
]


def run(ctx: DrillContext, *, corrupt_all: bool = False) -> DrillResult:
    """Run the drill; `corrupt_all` is the negative twin."""
    run_dir = ctx.root / ("checkpoint-corrupt-all" if corrupt_all else "checkpoint-corrupt")
    url = ctx.storage_url(run_dir)
    if url is None:
        return runner.without_external_storage("checkpoint-corrupt", run_dir)
    j = runner.new_journal(
        "checkpoint-corrupt",
        "Corrupt checkpoint copy in external storage",
        "Flip bytes in the newest stored checkpoint; restore the run from storage.",
        "a restore rejects the corrupt copy and resumes from the previous good checkpoint",
    )
    j.steady("before", [runner.storage_probe(ctx, url)])
    job = job2 = None
    flipped: list[dict[str, Any]] = []
    try:
        with j.activity("action", "train and publish checkpoints") as rec:
            files = runner.write_job(
                run_dir, "train", runner.job_spec(ctx, run_dir, "train", run_dir / "node-a")
            )
            job = runner.submit(ctx, files)
            rec["output"] = {"returncode": job.wait(ctx.timeout_s).returncode}
        trained = files.events_now()
        store = runner.open_store(ctx, url)
        steps = stored_steps(store, "run")
        with j.activity("action", "flip bytes in stored checkpoint copies") as rec:
            targets = steps if corrupt_all else steps[:1]
            for step in targets:
                flipped.append(flip_bytes(store, f"run/checkpoint-{step}/model.safetensors"))
            rec["output"] = flipped
        j.fault = {"type": "bit flips", "steps": targets, "files": [f["file"] for f in flipped]}
        with j.activity("action", "restore the run from external storage") as rec:
            files2 = runner.write_job(
                run_dir, "restore", runner.job_spec(ctx, run_dir, "restore", run_dir / "node-b")
            )
            job2 = runner.submit(ctx, files2)
            rec["output"] = {"returncode": job2.wait(ctx.timeout_s).returncode}
        restored = files2.events_now()
    finally:
        with rollbacks():
            always(
                j, "stop any job still running", lambda: [runner.cancel(job), runner.cancel(job2)]
            )
    return _judge(ctx, j, run_dir, steps, targets, trained, restored)


def _judge(
    ctx: DrillContext,
    j: Journal,
    run_dir: Path,
    steps: list[int],
    corrupted: list[int],
    trained: list[dict[str, Any]],
    events: list[dict[str, Any]],
) -> DrillResult:
    rejected = [e for e in events if e["event"] == "restore_rejected"]
    resumed = last(events, "resumed")
    finished = last(events, "finished")
    newest = steps[0] if steps else 0
    from_step = int(resumed["step"]) if resumed else 0
    good = [s for s in steps if s not in corrupted]
    expected = good[0] if good else None
    j.steady(
        "after",
        [Probe("the job finished", finished is not None and finished["final_step"] == ctx.steps)],
    )
    noticed = bool(rejected) and all(e["reason"] == "hash_mismatch" for e in rejected)
    kept = expected is not None and from_step == expected and finished is not None
    explained = noticed and (resumed is not None or last(events, "fresh_start") is not None)
    for e in rejected:
        j.observe(f"checkpoint-{e['step']} rejected", e["message"])
    if resumed is not None:
        said = nmessage(
            "drills",
            "checkpoint-{newest} failed its SHA-256 check and was rejected; resumed from "
            "checkpoint-{step}; lost {lost} step",
            "checkpoint-{newest} failed its SHA-256 check and was rejected; resumed from "
            "checkpoint-{step}; lost {lost} steps",
            count="lost",
            newest=newest,
            step=from_step,
            lost=newest - from_step,
        )
    else:
        said = nmessage(
            "drills",
            "the {n} stored checkpoint failed its SHA-256 check: restarted from zero",
            "all {n} stored checkpoints failed their SHA-256 check: restarted from zero",
            n=len(rejected),
        )
    result = DrillResult(
        drill="checkpoint-corrupt",
        verdict=runner.verdict_of(noticed, kept, explained),
        noticed=noticed,
        data_kept=kept,
        explained=explained,
        resumed_from_step=from_step,
        lost_steps=newest - from_step,
        lost_seconds=runner.seconds_between(
            runner.step_time(trained, from_step), runner.step_time(trained, newest)
        ),
        status_message=said,
        journal=run_dir / "journal.json",
        storage_url=ctx.storage_url(run_dir),
        details={
            "rejected": [{"step": e["step"], "reason": e["reason"]} for e in rejected],
            "corrupted_steps": corrupted,
        },
    )
    j.write(result.journal, result.as_dict())
    return result
