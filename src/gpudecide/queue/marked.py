"""The lifecycle marks the queue's logs are read with (SPEC Q1, Q4, G1).

A scheduler prints when a job was submitted, got its node and ended; only the training code
knows when preparation began, the first training step ran and each checkpoint was written
(`gpudecide.marks`). `queue` and `replay` read the marks the team points them at
(`--marks PATH`, repeatable), else the workspace's `marks/` folder when it has one, and join
them to the jobs of the logs once they are read:

    folders = marks_folders(given, ws)        checked before a log is read (jobs.log_command)
    loads, report = with_marks(loads, folders)

The marks of every log a command reads are joined together, in one join: a run of one
option's job is then never counted as unknown by the records of the other options, and a
job id two logs share is said to be ambiguous rather than filled twice. Each record holds
that one join report (`figures["marks"]`). A value a log gives is never overwritten.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from gpudecide.jobs.log_command import Loaded
from gpudecide.marks.apply import mark_jobs
from gpudecide.marks.join import JoinReport

__all__ = ["with_marks"]


def with_marks(
    loads: Sequence[Loaded], folders: Sequence[Path]
) -> tuple[list[Loaded], JoinReport | None]:
    """The logs with `prep_start`, `first_step` and `last_checkpoint` filled from the marks
    in `folders` (`gpudecide.marks.apply.mark_jobs`), joined to the jobs of all of them at
    once, and the join report; without folders the logs as they are and no report. The
    logs given are not changed: each comes back as a copy."""
    if not folders or not loads:
        return list(loads), None
    tables = [loaded.log.attempts for loaded in loads]
    combined = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    marked = mark_jobs(combined, list(folders))
    out: list[Loaded] = []
    offset = 0
    for loaded, table in zip(loads, tables, strict=True):
        attempts = marked.attempts.slice(offset, table.num_rows)
        offset += table.num_rows
        log = dataclasses.replace(loaded.log, attempts=attempts)
        out.append(dataclasses.replace(loaded, log=log))
    return out, marked.report
