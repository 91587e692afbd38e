"""What the profile and the queue analysis both print: rounded figures, one job reconciliation.

`profile` counts GPU jobs, `queue` counts every job: without one reconciliation printed by
both, a reader cannot tell why the numbers differ (SPEC F1, Q1). Jobs are counted in tasks:
a pending array range `123_[9-11,13%4]` is four jobs, not one line.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from gpudecide.message import Message, english, nmessage

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "RECONCILIATION_KEYS",
    "reconciliation",
    "reconciliation_line",
    "reconciliation_message",
    "rounded",
]


def rounded(x: Any, digits: int = 3) -> Any:
    """A figure for JSON: floats rounded to `digits`, NaN and None as None, ints unchanged.

    One helper for the profile (3 digits) and the queue (1 digit, seconds). NaN becomes None
    (JSON has no NaN); integers stay integers (counts are never rounded into floats).
    """
    if x is None or isinstance(x, bool):
        return x
    if isinstance(x, int):
        return x
    value = float(x)
    if math.isnan(value):
        return None
    return round(value, digits)


RECONCILIATION_KEYS = (
    "gpu_jobs",
    "cpu_only",
    "no_gpu_information",
    "never_started",
    "pending",
)


def reconciliation(jobs: pa.Table) -> dict[str, int]:
    """Every job of a log in exactly one group (in tasks), and the total.

    gpu_jobs: ran on at least one GPU; cpu_only: ran on none; no_gpu_information: ran but
    the log gives no GPU count (no AllocTRES, GRES or request); never_started: ended (mostly
    cancelled) before a node was assigned; pending: still queued at the end of the log.
    """
    # DuckDB loads here: the words and readers of this module need no engine.
    from gpudecide.jobs import sql

    con = sql.connect(jobs=jobs)
    row = con.execute(
        """SELECT
          coalesce(sum(w) FILTER (WHERE ran AND gpus > 0), 0),
          coalesce(sum(w) FILTER (WHERE ran AND gpus = 0), 0),
          coalesce(sum(w) FILTER (WHERE ran AND gpus IS NULL), 0),
          coalesce(sum(w) FILTER (WHERE NOT ran AND final_state NOT IN ('pending', 'requeued')),
            0),
          coalesce(sum(w) FILTER (WHERE NOT ran AND final_state IN ('pending', 'requeued')), 0)
        FROM (SELECT *, coalesce(pending_tasks, 1) AS w FROM jobs)"""
    ).fetchall()[0]
    con.close()
    out = {k: int(v) for k, v in zip(RECONCILIATION_KEYS, row, strict=True)}
    out["total"] = sum(out.values())
    return out


def reconciliation_message(r: dict[str, int]) -> Message:
    """The reconciliation in one sentence (the same words in `profile` and `queue`)."""
    return nmessage(
        "jobs",
        "{total:num} job in the log: {gpu:num} GPU jobs, {cpu:num} CPU-only, {unknown:num} "
        "without GPU information, {never:num} never started, {pending:num} pending (array "
        "tasks counted one by one)",
        "{total:num} jobs in the log: {gpu:num} GPU jobs, {cpu:num} CPU-only, {unknown:num} "
        "without GPU information, {never:num} never started, {pending:num} pending (array "
        "tasks counted one by one)",
        count="total",
        total=r["total"],
        gpu=r["gpu_jobs"],
        cpu=r["cpu_only"],
        unknown=r["no_gpu_information"],
        never=r["never_started"],
        pending=r["pending"],
    )


def reconciliation_line(r: dict[str, int]) -> str:
    """The reconciliation sentence in English (the text a record keeps)."""
    return english(reconciliation_message(r))
