"""Preemption (SPEC Q4): how often, what it cost, whether a checkpoint came first.

Also the priority signal: when most jobs run at the top priority, a scheduler cannot tell
what matters, and preemption protects nothing.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from gpudecide.jobs import sql
from gpudecide.message import Message, english, message, nmessage
from gpudecide.queue.figures import PreemptionFigures

__all__ = [
    "CHECKPOINT_GRACE_S",
    "TOP_PRIORITY_SHARE",
    "findings_of",
    "preemption_summary",
]

# A checkpoint this close before the stop counts as "taken before the stop".
CHECKPOINT_GRACE_S = 600.0
# A finding when more than this share of jobs sits at the highest priority level.
TOP_PRIORITY_SHARE = 0.5


_STOPS_SQL = """
        SELECT job_id, attempt, state, state_detail, gpu_count,
          epoch("end") - epoch(start) AS ran_s,
          epoch("end") - epoch(last_checkpoint) AS since_ckpt_s,
          last_checkpoint IS NOT NULL AS has_ckpt
        FROM attempts
        WHERE state IN ('preempted', 'requeued') AND start IS NOT NULL
          -- a CPU-only job loses no GPU time: its stops are not this analysis' business
          AND coalesce(gpu_count, req_gpus, 0) > 0
        """

_PRIORITY_LEVELS_SQL = """
        SELECT coalesce(priority_class, CAST(priority AS VARCHAR)) AS level,
          max(priority) AS prio, count(DISTINCT job_id) AS jobs
        FROM attempts WHERE start IS NOT NULL AND gpu_count > 0
        GROUP BY 1 ORDER BY prio DESC NULLS LAST, jobs DESC
        """


class _StopTally:
    """GPU-minutes lost over the stops, and whether a checkpoint came before each."""

    def __init__(self) -> None:
        self.lost_known = 0.0
        self.lost_upper = 0.0
        self.before_stop = self.not_before = self.unknown = 0
        self.stops: list[dict[str, Any]] = []

    def add(self, row: tuple[Any, ...]) -> None:
        job_id, attempt, state, detail, gpus, ran_s, since_s, has_ckpt = row
        g = gpus or 0
        if has_ckpt and since_s is not None:
            self.lost_known += g * max(since_s, 0.0) / 60.0
            if since_s <= CHECKPOINT_GRACE_S:
                self.before_stop += 1
            else:
                self.not_before += 1
        else:
            self.lost_upper += g * (ran_s or 0.0) / 60.0
            self.unknown += 1
        self.stops.append(
            {
                "job_id": job_id,
                "attempt": attempt,
                "state": state,
                "detail": detail,
                "gpus": g,
                "checkpoint_before_stop": (
                    None
                    if not has_ckpt
                    else bool(since_s is not None and since_s <= CHECKPOINT_GRACE_S)
                ),
            }
        )


def _top_priority(levels: list[tuple[Any, ...]]) -> float | None:
    """The share of jobs at the top priority level (None without a started GPU job)."""
    total_jobs = sum(int(j) for _, _, j in levels)
    return int(levels[0][2]) / total_jobs if levels and total_jobs else None


def findings_of(p: PreemptionFigures) -> list[Message]:
    """What the preemption figures (`preemption_summary`) say about the scheduler and the
    work lost (Q4): one priority level for every job, most jobs at the top level, stops
    without a checkpoint time."""
    findings: list[Message] = []
    levels, share = p.priority_levels, p.top_priority_share
    if share is not None:
        top_level = levels[0].level
        if len(levels) == 1 and levels[0].jobs > 1:
            findings.append(
                message(
                    "queue",
                    "every job runs at one priority level ({level}): the scheduler gets no "
                    "signal about what matters (Q4)",
                    level=top_level,
                )
            )
        elif share > TOP_PRIORITY_SHARE:
            findings.append(
                message(
                    "queue",
                    "{share:.0%} of jobs run at the top priority ({level}): the scheduler gets "
                    "little signal, and preemption protects little (Q4)",
                    share=share,
                    level=top_level,
                )
            )
    unknown = p.checkpoint_before_stop.unknown
    if unknown:
        findings.append(
            nmessage(
                "queue",
                "{n} stop(s) without a checkpoint time: lost work is unmeasured, at most "
                "{minutes:,.0f} GPU-minutes (everything since the attempt started)",
                "{n} stop(s) without a checkpoint time: lost work is unmeasured, at most "
                "{minutes:,.0f} GPU-minutes (everything since the attempt started)",
                n=unknown,
                minutes=p.gpu_minutes_lost_upper_bound_unmeasured,
            )
        )
    return findings


def preemption_summary(attempts: pa.Table) -> dict[str, Any]:
    """Preempted/requeued attempts, GPU-minutes lost since the last checkpoint, priority mix."""
    con = sql.connect(attempts=attempts)
    rows = con.sql(_STOPS_SQL).fetchall()
    levels = con.sql(_PRIORITY_LEVELS_SQL).fetchall()
    con.close()
    tally = _StopTally()
    for row in rows:
        tally.add(row)
    top_share = _top_priority(levels)
    out: dict[str, Any] = {
        "stops": len(rows),
        "preempted": sum(1 for r in rows if r[2] == "preempted"),
        "requeued": sum(1 for r in rows if r[2] == "requeued"),
        "gpu_minutes_lost_since_checkpoint": round(tally.lost_known, 1),
        "gpu_minutes_lost_upper_bound_unmeasured": round(tally.lost_upper, 1),
        "checkpoint_before_stop": {
            "yes": tally.before_stop,
            "no": tally.not_before,
            "unknown": tally.unknown,
        },
        "checkpoint_grace_s": CHECKPOINT_GRACE_S,
        "priority_levels": [{"level": lv, "jobs": int(j)} for lv, _, j in levels[:10]],
        "top_priority_share": None if top_share is None else round(top_share, 4),
        "findings": [],
        "attempts": tally.stops[:200],
    }
    out["findings"] = [english(m) for m in findings_of(PreemptionFigures.model_validate(out))]
    return out
