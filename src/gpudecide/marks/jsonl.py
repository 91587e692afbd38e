"""The marks JSONL that `gpudecide.marks.writer` appends (one JSON object a line), read
back into runs: bad lines are counted and named file:line, never raised.

What is not used, and why: a line that is not UTF-8, not JSON, longer than MAX_LINE bytes
(skipped without reading it into memory), not a mark (no `kind`), a value of the wrong type
or a time without an offset; a duplicated line (the same run and number, or the same text,
again: the first is kept); a mark whose time goes backwards in its run (the clock was set
back: the later line is dropped); a last line cut short (no newline and no complete JSON:
the file was being written or was cut off). Hand-written files may leave out `run` and
`seq`: their lines are grouped by the job they name.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from gpudecide.errors import excerpt
from gpudecide.fsutil import open_regular_raw
from gpudecide.marks.model import Identity, Mark, MarkSet, Problem, ProblemKind, Run, Where
from gpudecide.marks.sources import unreadable
from gpudecide.marks.writer import KINDS
from gpudecide.message import Message, message

__all__ = ["MAX_LINE", "MAX_LINES", "read_marks_file"]

# The writer keeps a line under 4 KiB; a hand-written line may be longer, this much is plenty.
MAX_LINE = 64 * 1024
# Lines read from one file; a file longer than this is read up to here and said so.
MAX_LINES = 2_000_000
_CHUNK = 1 << 16
_ID_FIELDS = (
    "job_id",
    "slurm_job_id",
    "slurm_array_job_id",
    "slurm_array_task_id",
    "cluster",
    "pod",
    "namespace",
    "sagemaker_job",
    "host",
    "node",
)
_ID_INDEX = {name: i for i, name in enumerate(_ID_FIELDS)}
_TEXT_LIMIT = 4096


class _Bad(Exception):
    """A line that cannot be used: its problem kind and message."""

    def __init__(self, kind: ProblemKind, msg: Message) -> None:
        super().__init__(msg["msgid"])
        self.kind = kind
        self.msg = msg


def _text(obj: dict[str, Any], name: str, *, ids: bool = False) -> str | None:
    value = obj.get(name)
    if value is None:
        return None
    if ids and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or len(value) > _TEXT_LIMIT:
        raise _Bad(
            "bad_value",
            message(
                "marks", "field {name!r} is not a text: {value}", name=name, value=excerpt(value)
            ),
        )
    return value.strip() or None


def _int(obj: dict[str, Any], name: str) -> int | None:
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if not isinstance(value, int) or isinstance(value, bool) or abs(value) > 2**62:
        raise _Bad(
            "bad_value",
            message(
                "marks",
                "field {name!r} is not a whole number: {value}",
                name=name,
                value=excerpt(value),
            ),
        )
    return value


def _time(obj: dict[str, Any]) -> datetime:
    value = obj.get("at")
    if value is None:
        raise _Bad("not_a_mark", message("marks", "no time (field 'at')"))
    if not isinstance(value, str):
        raise _Bad(
            "bad_value",
            message("marks", "time {value} is not an ISO 8601 time", value=excerpt(value)),
        )
    try:
        at = datetime.fromisoformat(value.strip())
    except ValueError:
        raise _Bad(
            "bad_value",
            message("marks", "time {value} is not an ISO 8601 time", value=excerpt(value)),
        ) from None
    if at.tzinfo is None or at.utcoffset() is None:
        raise _Bad(
            "no_offset",
            message(
                "marks",
                "time {value} has no offset from UTC: add Z or +hh:mm",
                value=excerpt(value),
            ),
        )
    return at


_IdFields = tuple[str | int | None, ...]


def _mark(obj: dict[str, Any], where: Where) -> tuple[Mark, _IdFields, str | None, int | None]:
    """One parsed line: the mark, the job fields it names (in _ID_FIELDS order, then the
    restart count), its run id and its number in the run. Every value is checked here, so
    the models are built without validating them again (a marks folder has many lines)."""
    kind = obj.get("kind")
    if kind is None:
        raise _Bad("not_a_mark", message("marks", "not a mark: no field 'kind'"))
    if kind not in KINDS:
        raise _Bad(
            "bad_value",
            message(
                "marks",
                "kind {value} is not one of {kinds}",
                value=excerpt(kind),
                kinds=", ".join(KINDS),
            ),
        )
    at = _time(obj)
    ident: list[str | int | None] = [None] * (len(_ID_FIELDS) + 1)
    for name in obj.keys() & _ID_INDEX.keys():  # a line names a few of them
        ident[_ID_INDEX[name]] = _text(obj, name, ids=True)
    ident[-1] = _int(obj, "slurm_restart_count")
    mark = Mark.model_construct(
        kind=kind,
        at=at,
        step=_int(obj, "step"),
        path=_text(obj, "path"),
        status=_text(obj, "status"),
        where=where,
    )
    run = _text(obj, "run", ids=True)
    _int(obj, "rank")
    _int(obj, "pid")
    return mark, tuple(ident), run, _int(obj, "seq")


def _identity(fields: _IdFields) -> Identity:
    values = dict(zip((*_ID_FIELDS, "slurm_restart_count"), fields, strict=True))
    return Identity.model_validate(values)


def _lines(handle: io.BufferedReader[io.FileIO]) -> Iterator[tuple[int, bytes | None, bool]]:
    """(line number, bytes or None when too long, whether it ended with a newline)."""
    number = 0
    while True:
        raw = handle.readline(MAX_LINE + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            # skip the rest of the line in pieces: a huge line is never held whole
            while True:
                more = handle.readline(_CHUNK)
                if not more or more.endswith(b"\n"):
                    break
            yield number, None, True
            continue
        yield number, raw, raw.endswith(b"\n")


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class _RunState:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.latest: tuple[datetime, int] | None = None


def read_marks_file(path: Path, shown: str, folders: list[str] | None = None) -> MarkSet:
    """The runs in one marks file; `shown`: the file as problems name it."""
    out = MarkSet(files=1)
    try:
        raw_handle = open_regular_raw(path)
    except OSError as exc:
        out.add(unreadable(shown, exc))
        return out
    runs: dict[str, _RunState] = {}
    seen: dict[tuple[str, str], int] = {}

    def bad(kind: ProblemKind, msg: Message, line: int) -> None:
        out.add(Problem(kind=kind, where=Where(path=shown, line=line), message=msg))

    with io.BufferedReader(cast(io.FileIO, raw_handle), buffer_size=_CHUNK) as handle:
        for number, raw, ended in _lines(handle):
            if number > MAX_LINES:
                bad(
                    "too_many",
                    message(
                        "marks",
                        "more than {limit} lines: the rest of the file is not read",
                        limit=MAX_LINES,
                    ),
                    number,
                )
                break
            out.lines += 1
            if raw is None:
                bad(
                    "too_long",
                    message("marks", "longer than {limit} bytes: skipped", limit=MAX_LINE),
                    number,
                )
                continue
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
                if not ended:  # a last line cut in a character or in the JSON
                    bad(
                        "truncated",
                        message(
                            "marks",
                            "the last line is cut short (no newline, not complete JSON): the "
                            "file was being written or was cut off",
                        ),
                        number,
                    )
                elif isinstance(exc, UnicodeDecodeError):
                    bad("not_utf8", message("marks", "not UTF-8 text"), number)
                else:
                    bad("not_json", message("marks", "not a JSON object"), number)
                continue
            if not isinstance(obj, dict):
                bad("not_json", message("marks", "not a JSON object"), number)
                continue
            where = Where.model_construct(path=shown, line=number)
            try:
                mark, ident, run_id, seq = _mark(obj, where)
            except _Bad as exc:
                bad(exc.kind, exc.msg, number)
                continue
            key = run_id or "job:" + json.dumps(ident)
            # a line without a number is a copy when its text is the same (a digest is kept,
            # not the line)
            copy = (key, str(seq) if seq is not None else _digest(raw.strip()))
            if copy in seen:
                bad(
                    "duplicate",
                    message(
                        "marks",
                        "the same mark as line {first}: this copy is not used",
                        first=seen[copy],
                    ),
                    number,
                )
                continue
            seen[copy] = number
            state = runs.get(key)
            if state is None:
                state = _RunState(
                    Run(
                        source="marks",
                        name=run_id or f"{shown}:{number}",
                        identity=_identity(ident),
                        folders=list(folders or []),
                        where=where,
                    )
                )
                runs[key] = state
            if state.latest is not None and mark.at < state.latest[0]:
                bad(
                    "backwards",
                    message(
                        "marks",
                        "time goes backwards: {at} is earlier than {before} on line {line}",
                        at=mark.at.isoformat(),
                        before=state.latest[0].isoformat(),
                        line=state.latest[1],
                    ),
                    number,
                )
                continue
            state.latest = (mark.at, number)
            state.run.marks.append(mark)
    out.runs = [s.run for s in runs.values()]
    return out
