"""Drill node-loss: SIGKILL the training process after a checkpoint, lose the node's disk,
restart on another node from external storage (SPEC G1, G4).

The article's Friday-night case: a node lost at 82 %, the last checkpoint on the node's own
disk, the re-run from zero. With external storage the job must resume from the last
checkpoint there; with `--storage node` (checkpoints on local disk only, the negative twin)
the same drill reports "restarted from zero" and fails.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from gpudecide.drills import runner
from gpudecide.drills.job import now_iso
from gpudecide.drills.journal import Journal, Probe, always, rollbacks
from gpudecide.drills.runner import DrillContext, DrillResult, last, steps_of
from gpudecide.message import Message, english, message, nmessage

__all__ = ["fresh_reason", "run"]


def _kill_after_checkpoint(
    ctx: DrillContext, run_dir: Path, external: bool
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Start on node A, wait for a committed checkpoint and two more steps, SIGKILL."""
    node_a = run_dir / "node-a"
    files = runner.write_job(
        run_dir, "attempt-1", runner.job_spec(ctx, run_dir, "attempt-1", node_a)
    )
    job = runner.submit(ctx, files)
    committed = "uploaded" if external else "checkpoint"

    # Locally the kill lands at once: wait two steps past the checkpoint, so steps are lost.
    # scancel takes seconds to reach the node: it is sent as soon as a checkpoint is stored.
    extra = 2 if ctx.executor == "local" else 0

    def ready(events: list[dict[str, Any]]) -> bool:
        done = steps_of(events, committed)
        return bool(done) and max(steps_of(events, "step") or [0]) >= done[-1] + extra

    events = runner.wait_for(files, job, ready, ctx.timeout_s)
    job.kill()
    killed_at = now_iso()
    status = job.wait(30)
    events = files.events_now()
    local = sorted(p.name for p in node_a.glob("checkpoint-*"))
    # The node is gone, and its disk with it.
    shutil.rmtree(node_a, ignore_errors=True)
    return {
        "job": job,
        "killed_at": killed_at,
        "signal": status.signal_name,
        "returncode": status.returncode,
        "step_at_kill": max(steps_of(events, "step") or [0]),
        "committed": steps_of(events, committed),
        "local_checkpoints_lost": local,
    }, events


def run(ctx: DrillContext) -> DrillResult:
    """Run the drill; the journal goes to ctx.root/node-loss.journal.json."""
    run_dir = ctx.root / "node-loss"
    url = ctx.storage_url(run_dir)
    external = url is not None
    j = runner.new_journal(
        "node-loss",
        "Node lost mid-training",
        "SIGKILL the training process after at least one checkpoint; its node's disk is lost; "
        "the job restarts on another node.",
        "the job resumes from the last checkpoint in external storage",
    )
    j.steady("before", [runner.storage_probe(ctx, url)])
    fault: dict[str, Any] = {}
    job2 = None
    try:
        with j.activity("action", "SIGKILL the training process, lose the node's disk") as rec:
            fault, first = _kill_after_checkpoint(ctx, run_dir, external)
            rec["output"] = {k: v for k, v in fault.items() if k != "job"}
        j.fault = {"type": "SIGKILL", "at": fault["killed_at"], "step": fault["step_at_kill"]}
        j.observe("job state after the kill", fault["signal"] or fault["returncode"])
        with j.activity("action", "restart the job on node B") as rec:
            node_b = run_dir / "node-b"
            spec = runner.job_spec(ctx, run_dir, "attempt-2", node_b)
            files2 = runner.write_job(run_dir, "attempt-2", spec)
            job2 = runner.submit(ctx, files2)
            st = job2.wait(ctx.timeout_s)
            second = files2.events_now()
            rec["output"] = {"returncode": st.returncode}
    finally:
        with rollbacks():
            always(j, "stop any job still running", lambda: runner.cancel(job2))
            always(j, "stop the first job", lambda: runner.cancel(fault.get("job")))
    return _judge(ctx, j, run_dir, url, fault, first, second)


def _judge(
    ctx: DrillContext,
    j: Journal,
    run_dir: Path,
    url: str | None,
    fault: dict[str, Any],
    first: list[dict[str, Any]],
    second: list[dict[str, Any]],
) -> DrillResult:
    resumed = last(second, "resumed")
    fresh = last(second, "fresh_start")
    finished = last(second, "finished")
    from_step = int(resumed["step"]) if resumed else 0
    committed = fault["committed"]
    kill_step = fault["step_at_kill"]
    lost_s = runner.seconds_between(runner.step_time(first, from_step), fault["killed_at"])
    after = []
    if url is not None and committed:
        store = runner.open_store(ctx, url)
        after.append(runner.verify_stored(store, committed[-1], run_dir / "verify"))
    after.append(
        Probe("the job finished", finished is not None and finished["final_step"] == ctx.steps)
    )
    j.steady("after", after)
    noticed = fault["signal"] == "SIGKILL"
    # No committed checkpoint lost: resumed from the last one the job reported stored, or a
    # later one whose upload finished as the kill landed.
    kept = bool(committed) and from_step >= committed[-1] and all(p.ok for p in after)
    explained = noticed and (resumed is not None or fresh is not None) and finished is not None
    if resumed is not None:
        said = nmessage(
            "drills",
            "killed (SIGKILL) at step {step}; resumed on a new node from checkpoint-{resumed} "
            "in {source}; lost {lost} step",
            "killed (SIGKILL) at step {step}; resumed on a new node from checkpoint-{resumed} "
            "in {source}; lost {lost} steps",
            count="lost",
            step=kill_step,
            resumed=from_step,
            source=resumed["source"],
            lost=kill_step - from_step,
        )
    else:
        said = message(
            "drills",
            "killed (SIGKILL) at step {step}; restarted from zero: {why}",
            step=kill_step,
            why=fresh_reason(fresh),
        )
    j.observe("status", english(said))
    result = DrillResult(
        drill="node-loss",
        verdict=runner.verdict_of(noticed, kept, explained),
        noticed=noticed,
        data_kept=kept,
        explained=explained,
        resumed_from_step=from_step,
        lost_steps=kill_step - from_step,
        lost_seconds=lost_s,
        status_message=said,
        journal=run_dir / "journal.json",
        storage_url=url,
        stopped_at={"attempt-1": fault["killed_at"]},
        details={
            "restarted_from_zero": from_step == 0,
            # The node's disk went with the node: checkpoints kept only there were lost.
            "would_restart_from_zero_on_local_disk": True,
            "local_checkpoints_lost": fault["local_checkpoints_lost"],
            "external_storage": url,
        },
    )
    j.write(result.journal, result.as_dict())
    return result


def fresh_reason(fresh: dict[str, Any] | None) -> Message:
    """Why a job started from zero (its `fresh_start` event), as a message."""
    if fresh is None:
        return message("drills", "no resume point")
    where = fresh.get("where")
    if fresh.get("code") == "no_local_checkpoint" and where:
        return message("drills", "no checkpoint on the node's disk {path}", path=where)
    if fresh.get("code") == "no_verified_checkpoint" and where:
        return message("drills", "no verifiable checkpoint in {path}", path=where)
    return message("drills", "{text}", text=str(fresh.get("reason")))
