"""Reading JSON inputs: one bounded parser with line-numbered errors, times, nested lookups."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpudecide.errors import InputError, excerpt
from gpudecide.fsutil import read_regular

__all__ = [
    "EARLIEST",
    "LATEST",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_JSON_BYTES",
    "check_finite",
    "get",
    "loads_bounded",
    "parse_time",
    "read_json",
    "seconds_between",
    "stamp_problem",
    "utc_iso",
]

MAX_JSON_BYTES = 512 << 20
MAX_DEPTH = 64
MAX_INT_DIGITS = 19
# The times a job log can hold: nothing before 2000, nothing after 2100 (every reader of a
# job log checks its times against these; `gpudecide.jobs.bounds` holds its other ranges).
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
LATEST = datetime(2100, 1, 1, tzinfo=UTC)


class _Problem(Exception):
    def __init__(self, message: str, needle: str | None = None, nth: int = 1) -> None:
        self.message = message
        self.needle = needle
        self.nth = nth
        super().__init__(message)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)  # built in C; only a size mismatch needs the slow search for the key
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise _Problem(
                    f"key {excerpt(key, 40)} is given twice in one object", json.dumps(key), nth=2
                )
            seen.add(key)
    return obj


def _constant(name: str) -> Any:
    raise _Problem(f"{name} is not a number JSON allows (numbers must be finite)", name)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Problem("number too large (numbers must be finite)", text)
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Problem(f"integer of more than {MAX_INT_DIGITS} digits", text)
    return int(text)


def _deeper_than(doc: Any, limit: int) -> bool:
    """Whether the parsed document nests more than `limit` levels: one level of containers
    at a time, no recursion. (json's C parser stops a deeper document than the interpreter's
    recursion limit on its own, as a RecursionError; this bounds what it could build.)"""
    level = [doc]
    for _ in range(limit):
        level = [x for x in level if isinstance(x, (dict, list))]
        if not level:
            return False
        below: list[Any] = []
        for item in level:
            below.extend(item.values() if isinstance(item, dict) else item)
        level = below
    return any(isinstance(x, (dict, list)) for x in level)


def _line_of(text: str, needle: str | None, nth: int = 1) -> int | None:
    """Line of the nth occurrence of a token that broke a bound (best effort)."""
    if not needle:
        return None
    pattern = re.escape(needle) if needle.startswith('"') else rf"(?<![\w.]){re.escape(needle)}"
    for n, found in enumerate(re.finditer(pattern, text), start=1):
        if n == nth:
            return text.count("\n", 0, found.start()) + 1
    return None


def loads_bounded(text: str, path: str | Path, line: int | None = None) -> Any:
    """Parse JSON text with the bounds every JSON input has (issue 14 items 3, 4, 10).

    Duplicate keys, NaN/Infinity and numbers that overflow, integers over 19 digits and
    nesting deeper than MAX_DEPTH are InputErrors naming the file and line. `line` is the
    line of `text` in its file (JSONL), else lines are counted inside `text`.
    """
    try:
        doc = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_constant=_constant,
            parse_float=_float,
            parse_int=_int,
        )
    except _Problem as exc:
        where = line if line is not None else _line_of(text, exc.needle, exc.nth)
        raise InputError(exc.message, path=path, line=where) from None
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise InputError(f"not valid JSON: {exc.msg}", path=path, line=where) from None
    except RecursionError:
        raise InputError(f"nested deeper than {MAX_DEPTH} levels", path=path, line=line) from None
    if _deeper_than(doc, MAX_DEPTH):
        raise InputError(f"nested deeper than {MAX_DEPTH} levels", path=path, line=line)
    return doc


def read_json(path: Path, limit: int = MAX_JSON_BYTES) -> Any:
    """Read a regular JSON file (UTF-8, BOM allowed) with the bounds of `loads_bounded`."""
    data = read_regular(path, limit)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=path) from None
    return loads_bounded(text, path)


def check_finite(obj: Any, where: str = "$") -> None:
    """Raise ValueError naming the first NaN/infinite float inside `obj` (JSON we write)."""
    stack: list[tuple[Any, str]] = [(obj, where)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            raise ValueError(f"{at} is {node!r}, not a finite number")
        if isinstance(node, dict):
            stack.extend((v, f"{at}.{k}") for k, v in node.items())
        elif isinstance(node, list | tuple):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(node))


def stamp_problem(stamp: datetime) -> tuple[str, dict[str, Any]] | None:
    """Why a time is impossible for a job log (outside EARLIEST-LATEST, UTC), or None: an
    `errors` msgid and the values that fill it."""
    if stamp < EARLIEST or stamp >= LATEST:
        return (
            "{date} is outside {first}-{last}, not a time a job ran",
            {
                "date": f"{stamp.year:04d}-{stamp.month:02d}-{stamp.day:02d}",
                "first": EARLIEST.year,
                "last": LATEST.year - 1,
            },
        )
    return None


def parse_time(value: Any, path: Path, field: str) -> datetime | None:
    """ISO 8601 text (with offset or Z) or Unix seconds (int or float) -> UTC; None stays None.

    A time outside the years a job log can hold (`stamp_problem`) is an InputError naming the
    field.
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InputError(f"{value!r} is not a time", path=path, field=field)
    if isinstance(value, int | float):
        try:
            stamp = datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError):
            raise InputError("is not a time a job ran", path=path, field=field) from None
    elif isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value)
            if stamp.tzinfo is not None:
                stamp = stamp.astimezone(UTC)
        except (ValueError, OverflowError):
            raise InputError(
                f"{excerpt(value)} is not an ISO 8601 time", path=path, field=field
            ) from None
        if stamp.tzinfo is None:
            raise InputError(
                f"{excerpt(value)} has no time zone offset",
                path=path,
                field=field,
                hint="these APIs print UTC ('Z') or an offset; a naive time cannot be placed",
            )
    else:
        raise InputError(f"{type(value).__name__} is not a time", path=path, field=field)
    problem = stamp_problem(stamp)
    if problem is not None:
        raise InputError(problem[0], path=path, field=field, **problem[1])
    return stamp


def utc_iso(ts: datetime | None) -> str | None:
    """A time as the JSON of records and reports writes it: UTC, seconds, `Z`."""
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if ts else None


def get(obj: Any, *keys: str | int) -> Any:
    """Nested lookup that returns None where a level is missing or of the wrong type."""
    for key in keys:
        if isinstance(key, int):
            if not isinstance(obj, list) or key >= len(obj):
                return None
        elif not isinstance(obj, dict):
            return None
        obj = obj[key] if isinstance(key, int) else obj.get(key)
        if obj is None:
            return None
    return obj


def seconds_between(a: datetime | None, b: datetime | None) -> float | None:
    """b - a in seconds, or None when either is unknown."""
    return (b - a).total_seconds() if a is not None and b is not None else None
