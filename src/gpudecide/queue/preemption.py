"""Preemption (SPEC Q4): how often, what it cost, whether a checkpoint came first.

Also the priority signal: when most jobs run at the top priority, a scheduler cannot tell
what matters, and preemption protects nothing.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from gpudecide.jobs import sql

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


def _priority_findings(levels: list[tuple[Any, ...]]) -> tuple[float | None, list[str]]:
    """The share of jobs at the top priority level, and what it says about the scheduler."""
    total_jobs = sum(int(j) for _, _, j in levels)
    findings = []
    top_share = None
    if levels and total_jobs:
        top_level, _, top_jobs = levels[0]
        top_share = int(top_jobs) / total_jobs
        if len(levels) == 1 and total_jobs > 1:
            findings.append(
                f"every job runs at one priority level ({top_level}): the scheduler gets no "
                "signal about what matters (Q4)"
            )
        elif top_share > TOP_PRIORITY_SHARE:
            findings.append(
                f"{top_share:.0%} of jobs run at the top priority ({top_level}): the scheduler "
                "gets little signal, and preemption protects little (Q4)"
            )
    return top_share, findings


def preemption_summary(attempts: pa.Table) -> dict[str, Any]:
    """Preempted/requeued attempts, GPU-minutes lost since the last checkpoint, priority mix."""
    con = sql.connect(attempts=attempts)
    rows = con.sql(_STOPS_SQL).fetchall()
    levels = con.sql(_PRIORITY_LEVELS_SQL).fetchall()
    con.close()
    tally = _StopTally()
    for row in rows:
        tally.add(row)
    top_share, findings = _priority_findings(levels)
    if tally.unknown:
        findings.append(
            f"{tally.unknown} stop(s) without a checkpoint time: lost work is unmeasured, at most "
            f"{tally.lost_upper:,.0f} GPU-minutes (everything since the attempt started)"
        )
    return {
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
        "findings": findings,
        "attempts": tally.stops[:200],
    }
