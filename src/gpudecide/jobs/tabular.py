"""CSV and JSONL job logs with the canonical columns (see `schema.CANONICAL_COLUMNS`).

For teams whose scheduler is not Slurm: one row per job attempt, the column names of the
canonical table, unknown columns kept as `extras` (a JSON object per row).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from zoneinfo import ZoneInfo

from gpudecide.errors import InputError, excerpt
from gpudecide.fsutil import open_regular
from gpudecide.jobs import bounds
from gpudecide.jobs.sacct import BadRow, ParseResult
from gpudecide.jobs.schema import (
    CANONICAL_COLUMNS,
    KINDS,
    REQUIRED_COLUMNS,
    SLURM_STATES,
    STATES,
    TIMESTAMP_COLUMNS,
    attempts_table,
)
from gpudecide.jsonio import loads_bounded

__all__ = [
    "read_tabular",
]

_INT_COLUMNS = ("attempt", "gpu_count", "req_gpus", "priority", "time_limit_s")
_TEXT_COLUMNS = (
    "job_id",
    "priority_class",
    "chain_id",
    "name",
    "user",
    "team",
    "partition",
    "gpu_type",
    "site",
    "exit_code",
    "wait_reason",
)


class _RowError(Exception):
    """A row value that cannot be read: the column, an `errors` msgid and its values."""

    def __init__(self, field: str, reason: str, **values: Any) -> None:
        self.field = field
        self.reason = reason
        self.values = values
        super().__init__(reason)


def _text(value: Any, column: str = "") -> str | None:
    if value is None:
        return None
    if isinstance(value, dict | list):
        raise _RowError(column, "is a JSON object or list, not a value")
    text = str(value).strip()
    if len(text) > bounds.MAX_TEXT_CHARS:
        raise _RowError(column, "is longer than {limit} characters", limit=bounds.MAX_TEXT_CHARS)
    return text or None


def _int(column: str, value: Any) -> int | None:
    """A whole number of a canonical column, inside its range (jobs.bounds)."""
    text = _text(value, column)
    if text is None:
        return None
    if isinstance(value, bool):
        raise _RowError(column, "{value} is not an integer", value=repr(value))
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise _RowError(column, "is not a finite number")
        if not value.is_integer():
            raise _RowError(column, "{value} is not a whole number", value=repr(value))
        number = int(value)
    else:
        digits = text.lstrip("+-")
        if not digits.isascii() or not digits.isdigit() or len(digits) > 20:
            raise _RowError(column, "{excerpt} is not an integer", excerpt=excerpt(text))
        number = int(text)
    problem = bounds.int_problem(column, number)
    if problem is not None:
        raise _RowError(column, problem[0], **problem[1])
    return number


def _time(column: str, value: Any, tz: ZoneInfo) -> datetime | None:
    text = _text(value, column)
    if text is None:
        return None
    try:
        stamp = datetime.fromisoformat(text)
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=tz)
        stamp = stamp.astimezone(UTC)
    except (ValueError, OverflowError):
        raise _RowError(
            column,
            "{excerpt} is not an ISO 8601 time (2026-07-27T14:10:00Z)",
            excerpt=excerpt(text),
        ) from None
    problem = bounds.stamp_problem(stamp)
    if problem is not None:
        raise _RowError(column, problem[0], **problem[1])
    return stamp


def _state(value: Any) -> tuple[str, str | None]:
    text = _text(value, "state")
    if text is None:
        raise _RowError("state", "is empty")
    lowered = text.lower()
    if lowered in STATES:
        return lowered, text
    word = text.split()[0].upper()
    if word in SLURM_STATES:
        return SLURM_STATES[word], text
    raise _RowError(
        "state",
        "{excerpt} is not one of {choices}",
        excerpt=excerpt(text),
        choices=", ".join(STATES),
    )


def _convert(row: dict[str, Any], tz: ZoneInfo) -> dict[str, Any]:
    """One source row (canonical keys, others kept as extras) -> one canonical row.

    Raises _RowError naming the field.
    """
    extras = {k: v for k, v in row.items() if k not in CANONICAL_COLUMNS and v not in (None, "")}
    out: dict[str, Any] = {c: _text(row.get(c), c) for c in _TEXT_COLUMNS}
    if out["job_id"] is None:
        raise _RowError("job_id", "is empty")
    for col in _INT_COLUMNS:
        out[col] = _int(col, row.get(col))
    out["state"], out["state_detail"] = _state(row.get("state"))
    kind = _text(row.get("kind"), "kind")
    if kind is not None and kind.lower() not in KINDS:
        raise _RowError(
            "kind",
            "{excerpt} is not one of {choices}",
            excerpt=excerpt(kind),
            choices=", ".join(KINDS),
        )
    out["kind_label"] = kind.lower() if kind else None
    for col in TIMESTAMP_COLUMNS:
        out[col] = _time(col, row.get(col), tz)
    ran = out["start"] is not None and out["state"] != "pending"
    if ran and out["gpu_count"] is None:
        raise _RowError("gpu_count", "is empty for a job that started (0 for a CPU job)")
    span = bounds.span_problem(out["start"], out["end"])
    if span is not None:
        raise _RowError("end", span[0], **span[1])
    if out["req_gpus"] is None:
        out["req_gpus"] = out["gpu_count"]
    if not ran:
        out["gpu_count"] = None
    out["elapsed_s"] = (
        (out["end"] - out["start"]).total_seconds() if out["start"] and out["end"] else None
    )
    out["array_job_id"] = None
    out["steps"] = None
    out["pending_tasks"] = None
    out["extras"] = json.dumps(extras, ensure_ascii=False, sort_keys=True) if extras else None
    if out["extras"] is not None and len(out["extras"]) > bounds.MAX_EXTRAS_CHARS:
        raise _RowError(
            "extras",
            "columns beyond the canonical ones hold over {limit} chars",
            limit=bounds.MAX_EXTRAS_CHARS,
        )
    return out


def _canonical_key(name: str) -> str:
    key = name.strip().lower()
    return key if key in CANONICAL_COLUMNS else name


def _column_map(names: list[str], path: Path) -> dict[str, str]:
    mapping: dict[str, str] = {}
    seen: set[str] = set()
    for name in names:
        key = _canonical_key(name)
        if key in seen:
            raise InputError(
                "column is named twice in the header",
                path=path,
                line=1,
                field=excerpt(key, 40).strip("'"),
                hint="each column may appear once (the last one would win silently)",
            )
        seen.add(key)
        if key in CANONICAL_COLUMNS:
            mapping[name] = key
    missing = [c for c in REQUIRED_COLUMNS if c not in mapping.values()]
    if missing:
        raise InputError(
            "missing required column(s) {names}",
            path=path,
            line=1,
            hint="see `gpudecide columns` for the canonical columns",
            names=", ".join(missing),
        )
    return mapping


def _csv_rows(handle: IO[bytes], path: Path) -> Iterator[tuple[int, dict[str, Any] | BadRow]]:
    """(line, row) pairs, a row named by the line it starts on (a quoted field may hold line
    breaks: the row then spans several lines, and `csv` counts up to its last); a row with
    an undecodable line comes back as that line's BadRow."""
    bad_lines: dict[int, BadRow] = {}

    def decoded() -> Iterator[str]:
        for lineno, raw in enumerate(handle, start=1):
            codec = "utf-8-sig" if lineno == 1 else "utf-8"
            try:
                yield raw.decode(codec)
            except UnicodeDecodeError:
                bad_lines[lineno] = BadRow(str(path), lineno, None, "not UTF-8 text")
                # decoded with stand-ins, so that its quotes still open and close rows
                yield raw.decode(codec, errors="replace")

    reader = csv.reader(decoded(), strict=True)
    first = 1  # the line the row being read starts on
    try:
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            raise InputError("no header row with column names", path=path, line=1)
        if any(n <= reader.line_num for n in bad_lines):
            raise InputError("header is not UTF-8 text", path=path, line=1)
        mapping = _column_map(header, path)
        first = reader.line_num + 1
        for fields in reader:
            line, last = first, reader.line_num
            first = last + 1
            undecodable = [bad_lines.pop(n) for n in range(line, last + 1) if n in bad_lines]
            if undecodable:
                yield undecodable[0].line or line, undecodable[0]
                continue
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            if len(fields) != len(header):
                yield (
                    line,
                    BadRow(
                        str(path),
                        line,
                        None,
                        "{n} fields, the header has {header}",
                        {"n": len(fields), "header": len(header)},
                    ),
                )
                continue
            yield line, {mapping.get(h, h): v for h, v in zip(header, fields, strict=True)}
    except csv.Error as exc:
        # the row the syntax error is in starts where the last whole row ended
        yield first, BadRow(str(path), first, None, "CSV syntax: {error}", {"error": str(exc)})


def _jsonl_rows(handle: IO[bytes], path: Path) -> Iterator[tuple[int, dict[str, Any] | BadRow]]:
    """(line, row) pairs; each line is parsed with the bounds of every JSON input."""
    for lineno, raw in enumerate(handle, start=1):
        if not raw.strip():
            continue
        try:
            obj = loads_bounded(raw.decode("utf-8-sig" if lineno == 1 else "utf-8"), path, lineno)
        except UnicodeDecodeError:
            yield lineno, BadRow(str(path), lineno, None, "not UTF-8 text")
            continue
        except InputError as exc:
            yield lineno, BadRow(str(path), lineno, None, exc.template, dict(exc.values))
            continue
        if not isinstance(obj, dict):
            yield lineno, BadRow(str(path), lineno, None, "not a JSON object")
            continue
        row: dict[str, Any] = {}
        for key, value in obj.items():
            name = _canonical_key(key)
            if name in row:
                yield lineno, BadRow(str(path), lineno, name, "column given twice in one object")
                break
            row[name] = value
        else:
            yield lineno, row


def read_tabular(
    path: str | Path, *, fmt: str, tz: str = "UTC", skip_bad_rows: bool = False
) -> ParseResult:
    """Read a CSV (`fmt='csv'`) or JSONL (`fmt='jsonl'`) job log into canonical attempts."""
    p = Path(path)
    zone = ZoneInfo(tz)
    with open_regular(p) as handle:
        rows, bad, data_lines = _read_rows(handle, p, fmt, zone, skip_bad_rows)
    if not rows and not bad:
        raise InputError("no job rows", path=p)
    _number_attempts(rows)
    return ParseResult(table=attempts_table(rows, str(p)), bad_rows=bad, data_lines=data_lines)


def _read_rows(
    handle: IO[bytes], p: Path, fmt: str, zone: ZoneInfo, skip_bad_rows: bool
) -> tuple[list[dict[str, Any]], list[BadRow], int]:
    rows: list[dict[str, Any]] = []
    bad: list[BadRow] = []
    source = _csv_rows(handle, p) if fmt == "csv" else _jsonl_rows(handle, p)
    data_lines = 0
    for line, item in source:
        data_lines += 1
        if isinstance(item, BadRow):
            bad.append(item)
        else:
            try:
                rows.append(_convert(item, zone))
            except _RowError as err:
                bad.append(BadRow(str(p), line, err.field, err.reason, err.values))
        if bad and not skip_bad_rows:
            raise bad[0].as_error()
    return rows, bad, data_lines


def _number_attempts(rows: list[dict[str, Any]]) -> None:
    """Fill `attempt` where a source leaves it out: order of start (then submit) per job."""
    far = datetime.max.replace(tzinfo=UTC)
    by_job: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_job.setdefault(row["job_id"], []).append(row)
    for attempts in by_job.values():
        if all(r["attempt"] is not None for r in attempts):
            continue
        attempts.sort(key=lambda r: (r["start"] or far, r["submit"] or far))
        for i, r in enumerate(attempts, start=1):
            r["attempt"] = i
