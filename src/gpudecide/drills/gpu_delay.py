"""Drill gpu-delay: the GPU is assigned late; the job must show as waiting, with a reason
(SPEC G4, Q1, Q4).

Local executor: the executor starts the job only after a delay; Slurm executor (only when
`--executor slurm`): the job is submitted held (`sbatch --hold`) and `scontrol release`d
after the delay. The drill samples the job's state the whole time: during the delay it must
be pending with a reason, never running, and the job's own events must be silent. The
attempt then goes through the queue analysis (`gpudecide.queue.lifecycle`), which must
measure the wait. The negative twin reads the state the naive way (a submitted job counts as
running): the delay goes unnoticed and the drill fails.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpudecide.drills import runner
from gpudecide.drills.job import now_iso
from gpudecide.drills.journal import Journal, Probe, always, rollbacks
from gpudecide.drills.launch import LOCAL_WAIT_REASON, SlurmJob, Status
from gpudecide.drills.runner import DrillContext, DrillResult, last
from gpudecide.jobs.classify import jobs_table
from gpudecide.jobs.schema import attempts_table
from gpudecide.message import message
from gpudecide.queue import lifecycle

__all__ = [
    "DELAY_S",
    "run",
]

DELAY_S = 2.0


def _sample(job: Any, files: runner.JobFiles, naive: bool) -> dict[str, Any]:
    st: Status = job.status()
    started = any(e["event"] == "started" for e in files.events_now())
    state = "running" if naive else st.state
    return {"at": now_iso(), "state": state, "reason": st.reason, "job_started": started}


def _queue_wait(
    events: list[dict[str, Any]], submitted: str, started: str | None, reason: str | None
) -> float | None:
    """The queue analysis of this one attempt: its wait from eligible to start, in seconds."""

    def ts(s: str) -> datetime:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)

    finished = last(events, "finished")
    if started is None or finished is None:
        return None
    row = {
        "job_id": "drill-gpu-delay",
        "attempt": 1,
        "name": "gpu-delay-drill",
        "gpu_count": 1,
        "state": "completed",
        "wait_reason": reason,
        "submit": ts(submitted),
        "eligible": ts(submitted),
        "start": ts(started),
        "end": ts(finished["at"]),
    }
    attempts = attempts_table([row], "drill")
    lc = lifecycle.job_lifecycles(attempts, jobs_table(attempts), ts(finished["at"]))
    wait = lc.to_pylist()[0]["queue_wait_s"]
    return None if wait is None else round(float(wait), 3)


def run(ctx: DrillContext, *, naive_status: bool = False) -> DrillResult:
    """Run the drill; `naive_status` is the negative twin."""
    run_dir = ctx.root / ("gpu-delay-naive" if naive_status else "gpu-delay")
    j = runner.new_journal(
        "gpu-delay",
        "GPU assigned late",
        f"The job gets its GPU {DELAY_S:g} s after submission.",
        "while it waits the job is pending with a reason, not running; the wait is measured",
    )
    j.steady("before", [runner.storage_probe(ctx, ctx.storage_url(run_dir))])
    samples: list[dict[str, Any]] = []
    job = None
    try:
        with j.activity("action", "submit with the GPU assignment delayed") as rec:
            files = runner.write_job(
                run_dir, "train", runner.job_spec(ctx, run_dir, "train", run_dir / "node-a")
            )
            submitted = now_iso()
            if ctx.executor == "slurm":
                job = runner.submit(ctx, files, hold=True)
            else:
                job = runner.submit(ctx, files, delay_s=DELAY_S)
            rec["output"] = {"submitted": submitted, "executor": ctx.executor}
        j.fault = {"type": "GPU assignment delayed", "seconds": DELAY_S, "at": submitted}
        with j.activity("probe", "sample the job's state while it waits") as rec:
            deadline = time.monotonic() + DELAY_S
            while time.monotonic() < deadline - 0.1:
                samples.append(_sample(job, files, naive_status))
                time.sleep(0.1)
            if isinstance(job, SlurmJob):
                job.release()
            rec["output"] = samples[-1] if samples else None
        with j.activity("action", "let the job run") as rec:
            rec["output"] = {"returncode": job.wait(ctx.timeout_s).returncode}
        events = files.events_now()
        # The start is when the node was assigned: the executor's start time, else the
        # job's own first event (a Slurm job: its start as sacct prints it).
        started = getattr(job, "started_at", None) or next(
            (e["at"] for e in events if e["event"] == "started"), None
        )
    finally:
        with rollbacks():
            always(j, "stop the job", lambda: runner.cancel(job))
    return _judge(ctx, j, run_dir, samples, events, submitted, started)


def _judge(
    ctx: DrillContext,
    j: Journal,
    run_dir: Path,
    samples: list[dict[str, Any]],
    events: list[dict[str, Any]],
    submitted: str,
    started: str | None,
) -> DrillResult:
    # The samples taken before the executor gave the job its node (its own start time).
    early = [s for s in samples if started is None or s["at"] < started]
    reasons = {s["reason"] for s in early if s["reason"]}
    reason = sorted(reasons)[0] if reasons else None
    finished = last(events, "finished")
    wait = _queue_wait(events, submitted, started, reason)
    j.steady(
        "after",
        [Probe("the job finished", finished is not None and finished["final_step"] == ctx.steps)],
    )
    j.observe("states while waiting", sorted({s["state"] for s in early}))
    noticed = bool(early) and all(s["state"] == "pending" and s["reason"] for s in early)
    kept = finished is not None and finished["final_step"] == ctx.steps
    # sacct prints whole seconds: a Slurm start may read up to 1 s early.
    tolerance = 1.0 if ctx.executor == "slurm" else 0.2
    explained = noticed and wait is not None and wait >= DELAY_S - tolerance
    # The local executor's own reason is explained in the reader's language; Slurm's as is.
    local_reason = message("drills", "Resources (GPU not yet assigned)")
    said = (
        message(
            "drills",
            "pending for {wait:num} s ({reason}) before its GPU was assigned; then ran to step "
            "{step}",
            wait=wait,
            reason=local_reason if reason == LOCAL_WAIT_REASON else str(reason),
            step=finished["final_step"] if finished else "?",
        )
        if noticed
        else message("drills", "reported as running while it had no GPU: the wait was not visible")
    )
    result = DrillResult(
        drill="gpu-delay",
        status_message=said,
        verdict=runner.verdict_of(noticed, kept, explained),
        noticed=noticed,
        data_kept=kept,
        explained=explained,
        resumed_from_step=0,
        lost_steps=0,
        lost_seconds=wait,
        journal=run_dir / "journal.json",
        storage_url=ctx.storage_url(run_dir),
        details={"queue_wait_s": wait, "wait_reason": reason, "samples_while_waiting": len(early)},
    )
    j.write(result.journal, result.as_dict())
    return result
