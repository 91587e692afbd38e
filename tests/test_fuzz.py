"""Fuzzing the log parsers: any bytes give rows, counted bad rows or one InputError."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudecide.errors import InputError
from gpudecide.jobs.sacct import read_sacct
from gpudecide.jobs.tabular import read_tabular

from .conftest import SACCT

REAL_LINES = (SACCT / "scenario.utc.txt").read_bytes().splitlines(keepends=True)
FIELDS = REAL_LINES[0].decode().strip()
FORMAT = FIELDS.replace("|", ",")
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _check(path: Path, call) -> None:  # type: ignore[no-untyped-def]
    try:
        result = call(path)
    except InputError as exc:
        line = exc.one_line()
        assert line and "\n" not in line
        assert exc.path == str(path) or exc.field is not None
        return
    for bad in result.bad_rows:
        assert bad.path == str(path) and bad.reason


def _file(data: bytes) -> Path:
    with tempfile.NamedTemporaryFile(delete=False, suffix=".txt") as handle:
        handle.write(data)
    return Path(handle.name)


@SETTINGS
@given(st.binary(max_size=2000), st.booleans(), st.booleans())
def test_sacct_arbitrary_bytes(data: bytes, skip: bool, headerless: bool) -> None:
    path = _file(data)
    try:
        fmt = FORMAT if headerless else None
        _check(path, lambda p: read_sacct(p, sacct_format=fmt, skip_bad_rows=skip))
    finally:
        path.unlink()


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=1, max_value=len(REAL_LINES) - 1),
            st.integers(min_value=0, max_value=20),
            st.text(alphabet=st.characters(codec="utf-8"), max_size=30),
        ),
        max_size=6,
    ),
    st.booleans(),
)
def test_sacct_mutated_real_fields(edits: list[tuple[int, int, str]], skip: bool) -> None:
    """Real recorded lines with fields replaced by arbitrary text."""
    lines = [ln.decode() for ln in REAL_LINES]
    for line_idx, field_idx, text in edits:
        parts = lines[line_idx].rstrip("\n").split("|")
        parts[field_idx % len(parts)] = text
        lines[line_idx] = "|".join(parts) + "\n"
    path = _file("".join(lines).encode())
    try:
        _check(path, lambda p: read_sacct(p, skip_bad_rows=skip))
    finally:
        path.unlink()


@SETTINGS
@given(st.binary(max_size=1500), st.booleans(), st.sampled_from(["csv", "jsonl"]))
def test_tabular_arbitrary_bytes(data: bytes, skip: bool, fmt: str) -> None:
    header = b"job_id,gpu_count,state,start,end\n" if fmt == "csv" else b""
    path = _file(header + data)
    try:
        _check(path, lambda p: read_tabular(p, fmt=fmt, skip_bad_rows=skip))
    finally:
        path.unlink()


@SETTINGS
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "job_id": st.text(max_size=5),
                "gpu_count": st.one_of(st.integers(-3, 9).map(str), st.text(max_size=4)),
                "state": st.sampled_from(["completed", "FAILED", "CANCELLED by 7", "x", ""]),
                "start": st.one_of(st.just("2026-01-05T00:00:00Z"), st.text(max_size=12)),
                "end": st.one_of(st.just("2026-01-05T03:00:00+05:00"), st.text(max_size=12)),
            }
        ),
        max_size=8,
    ),
    st.booleans(),
)
def test_csv_structured_rows(rows: list[dict[str, str]], skip: bool) -> None:
    import csv
    import io

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=["job_id", "gpu_count", "state", "start", "end"])
    writer.writeheader()
    writer.writerows(rows)
    path = _file(buf.getvalue().encode())
    try:
        _check(path, lambda p: read_tabular(p, fmt="csv", skip_bad_rows=skip))
    finally:
        path.unlink()
