"""TensorBoard event files: the wall time of the first scalar is the run's `first_step`.

Read with the `tensorboard` package's own loader (`event_file_loader.EventFileLoader`, which
also turns old `simple_value` scalars into tensors tagged with the scalars plugin), up to the
first scalar. That time is an upper bound of the first step: a trainer that logs every 50
steps writes its first scalar after step 50; a marks file from the training script is exact
and, joined to the same job, wins (the earliest first step is kept). The file's first event
(the writer's start) joins the run to a job by time. The host comes from the file's name
(`events.out.tfevents.<time>.<host>.<pid>.<n>`, as PyTorch's and TensorFlow's writers name
it); TensorBoard keeps no job id, so a run is joined by a job-named folder or by host and
time. A truncated last record (a job killed while writing) ends the file quietly.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpudecide.marks.model import Identity, Mark, MarkSet, Problem, Run, Where
from gpudecide.message import message

__all__ = ["EVENT_FILE", "MAX_EVENTS", "is_event_file", "read_event_file"]

EVENT_FILE = re.compile(
    r"^events\.out\.tfevents\.(?P<time>\d+)(?:\.(?P<host>.+?))?"
    r"(?:\.(?P<pid>\d+)\.(?P<n>\d+))?(?:\.v2)?$"
)
# Events read before giving up on finding a scalar (images and graphs come first at times).
MAX_EVENTS = 100_000


def is_event_file(name: str) -> bool:
    """Whether a file name is a TensorBoard event file's."""
    return EVENT_FILE.match(name) is not None


def _is_scalar(value: Any) -> bool:
    if value.HasField("simple_value"):
        return True
    return bool(value.metadata.plugin_data.plugin_name == "scalars")


def _moment(wall_time: float) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(wall_time), UTC)
    except (OverflowError, OSError, ValueError):
        return None


def read_event_file(path: Path, shown: str, folders: list[str] | None = None) -> MarkSet:
    """One event file as a run: its first event (`seen`) and its first scalar
    (`first_step`, with the scalar's step)."""
    out = MarkSet(files=1)
    where = Where(path=shown)
    try:
        from tensorboard.backend.event_processing.event_file_loader import (
            EventFileLoader,
        )
    except ImportError:
        out.add(
            Problem(
                kind="reader_missing",
                where=where,
                message=message(
                    "marks",
                    "TensorBoard event file not read: the tensorboard package is not installed "
                    "(pip install 'gpudecide[marks]')",
                ),
            )
        )
        return out
    named = EVENT_FILE.match(path.name)
    host = named.group("host") if named else None
    marks: list[Mark] = []
    events = 0
    try:
        for event in EventFileLoader(str(path)).Load():
            events += 1
            if events > MAX_EVENTS:
                break
            at = _moment(event.wall_time)
            if at is None:
                continue
            if not marks:
                marks.append(Mark(kind="seen", at=at, where=where))
            if event.HasField("summary") and any(_is_scalar(v) for v in event.summary.value):
                marks.append(Mark(kind="first_step", at=at, step=int(event.step), where=where))
                break
    except Exception:
        # tensorboard and protobuf raise their own errors for a foreign or damaged file (a
        # record length past the end is a MemoryError): what was read before stays
        pass
    if not marks:
        out.add(
            Problem(
                kind="not_event_file",
                where=where,
                message=message("marks", "not a TensorBoard event file, or an empty one"),
            )
        )
        return out
    if not any(m.kind == "first_step" for m in marks):
        out.add(
            Problem(
                kind="no_scalar",
                where=where,
                message=message("marks", "no scalar in this event file: no first step from it"),
            )
        )
    out.runs.append(
        Run(
            source="tensorboard",
            name=shown,
            identity=Identity(host=host),
            marks=marks,
            folders=list(folders or []),
            where=where,
        )
    )
    return out
