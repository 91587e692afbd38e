"""Restarts from zero, found in the team's own job logs (SPEC G1, Q4).

The article's Friday-night case is visible in any scheduler log: a run lost its node
(NODE_FAIL), was preempted or timed out, and its re-run took about as long as a full run,
so it started over instead of resuming. `restarts_from_zero(attempts)` lists every re-run
after node_fail / preempted / timeout / requeued with:

- the failed attempt (W: its run time) and its re-run (R), as the next attempt of the same
  job (a requeue) or the next job of the same name, user and chain submitted within the
  restart window after it ended;
- the judgement, each with its basis:
  * with a reference (the median run time F of clean, completed runs of the same name and
    GPU count): restarted from zero when R >= (1 - tolerance) * F, else resumed;
  * without one: restarted from zero when the re-run redid at least the failed attempt's
    time (R >= (1 - tolerance) * W) and the failure came late (W >= late_share * R, so a
    resume would have taken a fraction of R); resumed when R < (1 - tolerance) * W; else
    unclear (an early failure: a resume and a restart look alike in a log);
- the GPU-hours lost (restarted from zero: the whole failed attempt; resumed: the time
  since its last checkpoint, when the log has one) and whether a checkpoint time was known.

Input is the canonical attempts table (`gpudecide.jobs.load.load_logs(...).attempts`).
"""

from __future__ import annotations

import statistics
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from gpudecide.jsonio import utc_iso
from gpudecide.message import Message, english, message
from gpudecide.queue.model import Figure
from gpudecide.queue.words import LOST_BY, word_message, yes_no

if TYPE_CHECKING:
    # The figures' readers (drills, assess, the report) need no Arrow: only the finder's
    # argument is a table.
    import pyarrow as pa

__all__ = [
    "LATE_SHARE",
    "LOST_STATES",
    "TOLERANCE",
    "RestartFigures",
    "RestartsFigures",
    "finding_of",
    "restarts_from_zero",
]

LOST_STATES = ("node_fail", "preempted", "timeout", "requeued")
TOLERANCE = 0.15
LATE_SHARE = 0.5


class RestartFigures(Figure):
    """One re-run after a lost attempt, judged (`restarts_from_zero`)."""

    job_id: str
    attempt: int
    name: str | None
    state: str
    gpus: int
    lost_at: str | None
    lost_attempt_s: float
    rerun_job_id: str
    rerun_attempt: int
    rerun_s: float
    reference_full_run_s: float | None
    verdict: Literal["restarted_from_zero", "resumed", "unclear"]
    basis: str
    gpu_hours_lost: float | None
    checkpoint_known: bool
    checkpoint_age_at_loss_s: float | None


class RestartsFigures(Figure):
    """Every re-run after a lost node, preemption or timeout, the totals and the findings
    (in English) of the runs restarted from zero (G1)."""

    restarts: list[RestartFigures]
    from_zero: int
    unclear: int
    # a sum over no run is the integer 0, kept as the record writes it
    gpu_hours_lost: float | int
    tolerance: float
    findings: list[str]


def _seconds(a: datetime | None, b: datetime | None) -> float | None:
    if a is None or b is None:
        return None
    return (b - a).total_seconds()


def _ran(row: dict[str, Any]) -> bool:
    return row["start"] is not None and row["end"] is not None and row["end"] > row["start"]


def _family(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["name"], row["user"], row["chain_id"])


def _rerun(
    row: dict[str, Any], by_job: dict[str, list[dict[str, Any]]], window_s: float
) -> dict[str, Any] | None:
    """The attempt that re-ran `row`: its job's next attempt, else the next same-named job.

    A same-named job counts when it started after the loss (within the window) and was
    submitted after the lost attempt started: teams often resubmit as soon as they see the
    node die, before the scheduler records the end.
    """
    later = [a for a in by_job[row["job_id"]] if a["attempt"] > row["attempt"] and _ran(a)]
    if later:
        return later[0]
    best: dict[str, Any] | None = None
    for attempts in by_job.values():
        first = next((a for a in attempts if _ran(a)), None)
        if first is None or first["job_id"] == row["job_id"] or _family(first) != _family(row):
            continue
        gap = _seconds(row["end"], first["start"])
        submitted = first["submit"] or first["start"]
        if gap is None or gap < 0 or gap > window_s or submitted < row["start"]:
            continue
        if best is None or first["start"] < best["start"]:
            best = first
    return best


def _reference(
    rows: list[dict[str, Any]], rerun_ids: set[tuple[str, int]], like: dict[str, Any]
) -> float | None:
    """Median run time of clean completed runs of the same name and GPU count."""
    clean = [
        _seconds(r["start"], r["end"])
        for r in rows
        if r["state"] == "completed"
        and _ran(r)
        and r["attempt"] == 1
        and (r["job_id"], r["attempt"]) not in rerun_ids
        and r["name"] == like["name"]
        and r["gpu_count"] == like["gpu_count"]
    ]
    values = [v for v in clean if v is not None]
    return statistics.median(values) if values else None


def _judge(w: float, r: float, f: float | None, tol: float) -> tuple[str, str]:
    if f is not None:
        if r >= (1 - tol) * f:
            return "restarted_from_zero", f"re-run {r / f:.0%} of a full run ({f / 3600:.1f} h)"
        return "resumed", f"re-run {r / f:.0%} of a full run ({f / 3600:.1f} h)"
    if r >= (1 - tol) * w and w >= LATE_SHARE * r:
        return "restarted_from_zero", (
            f"re-run ({r / 3600:.1f} h) redid the whole lost attempt ({w / 3600:.1f} h), "
            f"which had got {w / r:.0%} of the way"
        )
    if r < (1 - tol) * w:
        return (
            "resumed",
            f"re-run ({r / 3600:.1f} h) shorter than the lost attempt ({w / 3600:.1f} h)",
        )
    return "unclear", (
        f"early failure ({w / 3600:.1f} h of a {r / 3600:.1f} h re-run): a resume and a "
        "restart look alike without a reference run"
    )


def restarts_from_zero(
    attempts: pa.Table, *, window_hours: float = 72.0, tolerance: float = TOLERANCE
) -> dict[str, Any]:
    """Every re-run after a lost node, preemption or timeout, judged; totals and findings."""
    rows = sorted(attempts.to_pylist(), key=lambda a: (a["job_id"], a["attempt"]))
    by_job: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_job.setdefault(row["job_id"], []).append(row)
    pairs = []
    for row in rows:
        if row["state"] in LOST_STATES and _ran(row):
            again = _rerun(row, by_job, window_hours * 3600)
            if again is not None:
                pairs.append((row, again))
    rerun_ids = {(b["job_id"], b["attempt"]) for _, b in pairs}
    out = [_entry(a, b, _reference(rows, rerun_ids, a), tolerance) for a, b in pairs]
    zero = [e for e in out if e["verdict"] == "restarted_from_zero"]
    lost = round(sum(e["gpu_hours_lost"] or 0.0 for e in zero), 2)
    findings = [english(finding_of(RestartFigures.model_validate(e))) for e in zero]
    return {
        "restarts": out,
        "from_zero": len(zero),
        "unclear": sum(1 for e in out if e["verdict"] == "unclear"),
        "gpu_hours_lost": lost,
        "tolerance": tolerance,
        "findings": findings,
    }


def finding_of(entry: RestartFigures) -> Message:
    """The finding for one run restarted from zero."""
    return message(
        "queue",
        "{job} ({name}) lost its run after {hours:.1f} h ({state}) and restarted from zero: "
        "{gpu_hours:.1f} GPU-hours lost; checkpoint time known: {known}",
        job=entry.job_id,
        name=entry.name,
        hours=entry.lost_attempt_s / 3600,
        state=word_message(LOST_BY, entry.state),
        gpu_hours=entry.gpu_hours_lost or 0.0,
        known=yes_no(entry.checkpoint_known),
    )


def _entry(a: dict[str, Any], b: dict[str, Any], ref: float | None, tol: float) -> dict[str, Any]:
    w = _seconds(a["start"], a["end"]) or 0.0
    r = _seconds(b["start"], b["end"]) or 0.0
    verdict, basis = _judge(w, r, ref, tol)
    gpus = a["gpu_count"] or 0
    ckpt = a["last_checkpoint"]
    since = _seconds(ckpt, a["end"])
    if verdict == "restarted_from_zero":
        lost: float | None = gpus * w / 3600
    elif since is not None:
        lost = gpus * max(since, 0.0) / 3600
    else:
        lost = None
    return {
        "job_id": a["job_id"],
        "attempt": a["attempt"],
        "name": a["name"],
        "state": a["state"],
        "gpus": gpus,
        "lost_at": utc_iso(a["end"]),
        "lost_attempt_s": round(w, 1),
        "rerun_job_id": b["job_id"],
        "rerun_attempt": b["attempt"],
        "rerun_s": round(r, 1),
        "reference_full_run_s": None if ref is None else round(ref, 1),
        "verdict": verdict,
        "basis": basis,
        "gpu_hours_lost": None if lost is None else round(lost, 2),
        "checkpoint_known": ckpt is not None,
        "checkpoint_age_at_loss_s": None if since is None else round(since, 1),
    }
