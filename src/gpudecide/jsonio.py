"""Reading JSON inputs: whole-file parse with line-numbered errors, times, nested lookups."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpudecide.errors import InputError


def read_json(path: Path) -> Any:
    """Parse a JSON file; a syntax error names its line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno) from None


def parse_time(value: Any, path: Path, field: str) -> datetime | None:
    """ISO 8601 text (with offset or Z) or Unix seconds (int or float) -> UTC; None stays None."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InputError(f"{value!r} is not a time", path=path, field=field)
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value), UTC)
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value)
        except ValueError:
            raise InputError(
                f"{value[:40]!r} is not an ISO 8601 time", path=path, field=field
            ) from None
        if stamp.tzinfo is None:
            raise InputError(
                f"{value!r} has no time zone offset",
                path=path,
                field=field,
                hint="these APIs print UTC ('Z') or an offset; a naive time cannot be placed",
            )
        return stamp.astimezone(UTC)
    raise InputError(f"{type(value).__name__} is not a time", path=path, field=field)


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
