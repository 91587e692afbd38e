"""What a job log value may be: the ranges every job reader checks (issue 14 items 1, 2).

A value outside these parses but cannot be true (a GPU count of 3e9, a start in year 9999,
an end before the start); read as is it crashes an analysis or silently skews its figures.
Each reader turns a problem into a row error naming file, line and field (or, with
`--skip-bad-rows`, a counted and listed skip). The functions return the reason (a `Reason`:
an `errors` msgid and the values that fill it), or None when the value is possible, so
SQL-based and Python readers word them the same way in every language.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from gpudecide.errors import InputError
from gpudecide.jsonio import EARLIEST, LATEST, stamp_problem

__all__ = [
    "EARLIEST",
    "INT_RANGES",
    "LATEST",
    "MAX_ATTEMPT",
    "MAX_EXTRAS_CHARS",
    "MAX_GPU_COUNT",
    "MAX_PRIORITY",
    "MAX_RUN",
    "MAX_TEXT_CHARS",
    "MAX_TIME_LIMIT_S",
    "MIN_PRIORITY",
    "TEXT_COLUMNS",
    "Reason",
    "check_rows",
    "int_problem",
    "reason_text",
    "row_problem",
    "shape",
    "span_problem",
    "stamp_problem",
]

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
# Job logs of GPU schedulers: nothing before EARLIEST (2000), nothing from LATEST (2100) on;
# the times are checked where every JSON reader parses them (`gpudecide.jsonio`).
# One attempt running longer than this is a clock or parsing error, not a job.
MAX_RUN = timedelta(days=400)
# Text fields (names, reasons): longer ones are not what the column holds.
MAX_TEXT_CHARS = 4096
# Columns a source has beyond the canonical ones, kept per row as JSON: a summary, not a dump.
MAX_EXTRAS_CHARS = 65_536

INT_RANGES: dict[str, tuple[int, int]] = {
    "attempt": (1, MAX_ATTEMPT),
    "gpu_count": (0, MAX_GPU_COUNT),
    "req_gpus": (0, MAX_GPU_COUNT),
    "priority": (MIN_PRIORITY, MAX_PRIORITY),
    "time_limit_s": (0, MAX_TIME_LIMIT_S),
}


# Why a value is impossible: a msgid of the `errors` catalogue and the values that fill it
# (shown as written in every language). A tuple, so that the catalogue test finds the msgid
# where it is written.
Reason = tuple[str, dict[str, Any]]


def reason_text(reason: Reason) -> str:
    """A reason in English, filled (the text a record and `--json` keep)."""
    template, values = reason
    return template.format(**values) if values else template


def int_problem(column: str, value: int) -> Reason | None:
    """Why an integer of a canonical column is impossible, or None."""
    low, high = INT_RANGES.get(column, (MIN_PRIORITY, MAX_PRIORITY))
    if value < low:
        return ("{value} is below {low}", {"value": value, "low": low})
    if value > high:
        return (
            "{value} is above {high}, the most this column can be",
            {"value": value, "high": high},
        )
    return None


def span_problem(start: datetime | None, end: datetime | None) -> Reason | None:
    """Why an attempt's start/end pair is impossible (end first, or over 400 days), or None."""
    if start is None or end is None:
        return None
    if end < start:
        return ("is before start", {})
    if end - start > MAX_RUN:
        return ("is more than {days} days after start", {"days": MAX_RUN.days})
    return None


# Text columns of the canonical table (jobs.schema.ATTEMPTS_SCHEMA): a number or an object
# there from a JSON source is not text and cannot go into the table.
TEXT_COLUMNS = (
    "job_id",
    "array_job_id",
    "chain_id",
    "name",
    "kind_label",
    "user",
    "team",
    "partition",
    "gpu_type",
    "priority_class",
    "site",
    "state",
    "state_detail",
    "exit_code",
    "wait_reason",
    "extras",
)


def row_problem(row: dict[str, object]) -> tuple[str, Reason] | None:
    """The first impossible value of a canonical row as (column, reason), or None.

    For readers that build rows from nested documents (Kubernetes, SageMaker, OpenAI):
    integer columns must be whole numbers in range, times in range, end not before start.
    """
    for column in INT_RANGES:
        value = row.get(column)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            return column, ("is not a whole number", {})
        problem = int_problem(column, value)
        if problem is not None:
            return column, problem
    for column in TEXT_COLUMNS:
        value = row.get(column)
        if value is not None and not isinstance(value, str):
            return column, ("is a {type}, not text", {"type": type(value).__name__})
    for column, value in row.items():
        if isinstance(value, datetime):
            problem = stamp_problem(value)
            if problem is not None:
                return column, problem
        elif isinstance(value, str):
            limit = MAX_EXTRAS_CHARS if column == "extras" else MAX_TEXT_CHARS
            if len(value) > limit:
                return column, ("is longer than {limit} characters", {"limit": limit})
    start, end = row.get("start"), row.get("end")
    if isinstance(start, datetime) and isinstance(end, datetime):
        problem = span_problem(start, end)
        if problem is not None:
            return "end", problem
    return None


def check_rows(rows: list[dict[str, object]], path: Path, where: str) -> None:
    """Raise the first impossible value of rows read from one document item, by field."""
    for row in rows:
        found = row_problem(row)
        if found is not None:
            column, (template, values) = found
            raise InputError(template, path=path, field=f"{where}: {column}", **values)


@contextmanager
def shape(path: Path, where: str) -> Iterator[None]:
    """A document item of the wrong shape (a number where an object belongs, ...) is bad input.

    Readers of nested JSON call `.get` on what should be objects; a list or a number there
    raised AttributeError or TypeError, a traceback instead of one line.
    """
    try:
        yield
    except (AttributeError, TypeError, KeyError, IndexError, ValueError, OverflowError):
        raise InputError(
            "does not have the shape this source has (a value of the wrong type)",
            path=path,
            field=where,
        ) from None
