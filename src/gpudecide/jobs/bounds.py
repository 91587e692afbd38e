"""What a job log value may be: the ranges every job reader checks (issue 14 items 1, 2).

A value outside these parses but cannot be true (a GPU count of 3e9, a start in year 9999,
an end before the start); read as is it crashes an analysis or silently skews its figures.
Each reader turns a problem into a row error naming file, line and field (or, with
`--skip-bad-rows`, a counted and listed skip). The functions return the reason, or None when
the value is possible, so SQL-based and Python readers word them the same way.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

# The largest GPU clusters hold about 10^5 GPUs: one job attempt cannot have more.
MAX_GPU_COUNT = 100_000
# Requeues of one job: far more than any scheduler retries.
MAX_ATTEMPT = 100_000
# Scheduler time limits: ten years is beyond any queue's maximum (Slurm's is "UNLIMITED",
# which sacct prints as text, not a number).
MAX_TIME_LIMIT_S = 10 * 366 * 86_400
# Priorities are 32-bit in Slurm and Kubernetes; 64-bit leaves room for any other scheduler.
MIN_PRIORITY = -(2**63)
MAX_PRIORITY = 2**63 - 1
# Job logs of GPU schedulers: nothing before 2000, nothing after 2100.
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
LATEST = datetime(2100, 1, 1, tzinfo=UTC)
# One attempt running longer than this is a clock or parsing error, not a job.
MAX_RUN = timedelta(days=400)
# Text fields (names, reasons): longer ones are not what the column holds.
MAX_TEXT_CHARS = 4096

INT_RANGES: dict[str, tuple[int, int]] = {
    "attempt": (1, MAX_ATTEMPT),
    "gpu_count": (0, MAX_GPU_COUNT),
    "req_gpus": (0, MAX_GPU_COUNT),
    "priority": (MIN_PRIORITY, MAX_PRIORITY),
    "time_limit_s": (0, MAX_TIME_LIMIT_S),
}


def int_problem(column: str, value: int) -> str | None:
    """Why an integer of a canonical column is impossible, or None."""
    low, high = INT_RANGES.get(column, (MIN_PRIORITY, MAX_PRIORITY))
    if value < low:
        return f"{value} is below {low}"
    if value > high:
        return f"{value} is above {high}, the most this column can be"
    return None


def time_problem(stamp: datetime) -> str | None:
    """Why a time is impossible for a job log (outside 2000-2100 UTC), or None."""
    if stamp < EARLIEST or stamp >= LATEST:
        return (
            f"{stamp.year:04d}-{stamp.month:02d}-{stamp.day:02d} is outside "
            f"{EARLIEST.year}-{LATEST.year - 1}, not a time a job ran"
        )
    return None


def span_problem(start: datetime | None, end: datetime | None) -> str | None:
    """Why an attempt's start/end pair is impossible (end first, or over 400 days), or None."""
    if start is None or end is None:
        return None
    if end < start:
        return "is before start"
    if end - start > MAX_RUN:
        return f"is more than {MAX_RUN.days} days after start"
    return None
