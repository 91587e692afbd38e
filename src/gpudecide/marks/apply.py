"""The canonical job table with what the marks measured (SPEC Q1, Q4, G1).

    marks = read_marks([Path("marks")])
    marked = apply_marks(log.attempts, marks)
    marked.attempts       # the same rows; prep_start, first_step, last_checkpoint filled
    marked.report         # JoinReport: matched / ambiguous / unmatched runs, problems

A value the job log gave is never overwritten (the report counts those as kept); a field is
filled only where the log has none and a mark of a run joined to that attempt says so: the
earliest `prep_start` and `first_step`, the latest `checkpoint` (see `gpudecide.marks.join`
for how runs are joined and which marks are not used).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

import pyarrow as pa

from gpudecide.marks.join import (
    FILLED_FIELDS,
    TOLERANCE_S,
    JoinReport,
    attempts_from_rows,
    join_runs,
)
from gpudecide.marks.model import MarkSet
from gpudecide.marks.read import read_marks

__all__ = ["MarkedJobs", "apply_marks", "mark_jobs"]

_COLUMNS = ("job_id", "attempt", "start", "end", "site", "extras")


@dataclass(frozen=True)
class MarkedJobs:
    """The job table with the fields marks filled, and how the marks were joined."""

    attempts: pa.Table
    report: JoinReport


def apply_marks(
    attempts: pa.Table, marks: MarkSet, *, tolerance_s: float = TOLERANCE_S
) -> MarkedJobs:
    """`attempts` (the canonical table, `gpudecide.jobs.schema.ATTEMPTS_SCHEMA`) with
    `prep_start`, `first_step` and `last_checkpoint` filled from `marks` where the log has no
    value; the schema, the rows and their order are unchanged."""
    rows = attempts.select(list(_COLUMNS)).to_pylist()
    values, report = join_runs(attempts_from_rows(rows), marks, tolerance_s=tolerance_s)
    table = attempts
    for name in FILLED_FIELDS:
        column = attempts.column(name).to_pylist()
        counts = report.fields[name]
        changed = False
        for index, old in enumerate(column):
            new = values.get(index, {}).get(name)
            if new is None:
                continue
            if old is not None:
                counts.kept += 1
                continue
            column[index] = new.astimezone(UTC)
            counts.filled += 1
            changed = True
        if changed:
            position = table.schema.get_field_index(name)
            field = table.schema.field(position)
            table = table.set_column(position, field, pa.array(column, type=field.type))
    return MarkedJobs(attempts=table, report=report)


def mark_jobs(
    attempts: pa.Table, folders: Sequence[Path], *, tolerance_s: float = TOLERANCE_S
) -> MarkedJobs:
    """Read the marks in `folders` (`read_marks`) and apply them (`apply_marks`); with no
    folder the table comes back as it is, with an empty report."""
    if not folders:
        return MarkedJobs(attempts=attempts, report=JoinReport())
    return apply_marks(attempts, read_marks(list(folders)), tolerance_s=tolerance_s)
