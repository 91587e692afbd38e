"""Fuzzing the log readers against the README's promise for bad input: one error naming the
file (and the line and field when the fault is in a row), or, with --skip-bad-rows, every
skipped row listed with its line and reason; without --skip-bad-rows nothing is skipped
silently. Through the CLI: exit 2, one line on stderr, nothing written."""

from __future__ import annotations

import csv
import io
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpudecide.errors import InputError
from gpudecide.jobs.sacct import read_sacct
from gpudecide.jobs.tabular import read_tabular

from .conftest import SACCT, examples

REAL_LINES = (SACCT / "scenario.utc.txt").read_bytes().splitlines(keepends=True)
FIELDS = REAL_LINES[0].decode().strip()
FORMAT = FIELDS.replace("|", ",")
SETTINGS = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
CSV_COLUMNS = ["job_id", "gpu_count", "state", "start", "end"]


def _check(
    path: Path,
    call: Callable[[Path], Any],
    skip: bool,
    lines: set[int] | None = None,
    fields: set[str] | None = None,
) -> str:
    """Hold a reader to the promise; `lines`/`fields`: where a row error may point, when
    the test knows which lines it damaged. Returns what happened, for the statistics."""
    # Lines as an editor and the readers count them: "\r\n", "\n" and a lone "\r" end one.
    raw = path.read_bytes()
    n_lines = raw.count(b"\n") + raw.replace(b"\r\n", b"").count(b"\r") + 1
    try:
        result = call(path)
    except InputError as exc:
        one = exc.one_line()
        assert "\n" not in one and "Traceback" not in one
        # Always the file, first: a person must know which input to fix.
        assert exc.path == str(path) and one.startswith(str(path))
        if exc.line is not None:
            assert 1 <= exc.line <= n_lines, (exc.line, n_lines)
            assert one.startswith(f"{path}:{exc.line}")
            if lines is not None:
                assert exc.line in lines, (one, sorted(lines))
        if fields is not None and exc.field is not None and exc.line is not None:
            assert exc.field in fields, one
        return f"error ({'line' if exc.line is not None else 'file'})"
    if not skip:
        assert result.bad_rows == [], "rows were skipped although --skip-bad-rows was not given"
    for bad in result.bad_rows:
        assert bad.path == str(path) and bad.reason
        assert bad.line is not None and 1 <= bad.line <= n_lines
        if lines is not None:
            assert bad.line in lines, (bad, sorted(lines))
    return "read, rows skipped" if result.bad_rows else "read"


def _file(data: bytes, suffix: str = ".txt") -> Path:
    with tempfile.NamedTemporaryFile(delete=False, suffix=suffix) as handle:
        handle.write(data)
    return Path(handle.name)


@SETTINGS
@given(st.binary(max_size=2000), st.booleans(), st.booleans())
def test_sacct_arbitrary_bytes(data: bytes, skip: bool, headerless: bool) -> None:
    path = _file(data)
    try:
        fmt = FORMAT if headerless else None
        event(_check(path, lambda p: read_sacct(p, sacct_format=fmt, skip_bad_rows=skip), skip))
    finally:
        path.unlink()


def _edit(edits: list[tuple[int, int, str]]) -> tuple[bytes, set[int], set[str]]:
    """Real recorded lines with fields replaced; returns the file and the 1-based lines and
    field names edited."""
    lines = [ln.decode() for ln in REAL_LINES]
    names = FIELDS.split("|")
    touched: set[int] = set()
    fields: set[str] = set()
    for line_idx, field_idx, text in edits:
        parts = lines[line_idx].rstrip("\n").split("|")
        parts[field_idx % len(parts)] = text
        lines[line_idx] = "|".join(parts) + "\n"
        touched.add(line_idx + 1)
        fields.add(names[field_idx % len(names)])
    return "".join(lines).encode(), touched, fields


EDITS = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=len(REAL_LINES) - 1),
        st.integers(min_value=0, max_value=20),
        st.one_of(
            st.text(alphabet=st.characters(codec="utf-8", exclude_characters="|\n\r"), max_size=30),
            st.sampled_from(
                [
                    "",
                    "0001-01-01T00:00:00",
                    "9999-12-31T23:59:59",
                    "-5",
                    "Infinity",
                    "1e20",
                    "NaN",
                    "gres/gpu=3000000000",
                    "billing=1,gres/gpu=-2",
                    "Unknown",
                    "None",
                ]
            ),
        ),
    ),
    min_size=1,
    max_size=4,
)


@SETTINGS
@given(EDITS, st.booleans())
def test_sacct_mutated_real_fields(edits: list[tuple[int, int, str]], skip: bool) -> None:
    """A row error points at a line the test damaged; no other line is blamed or skipped."""
    data, touched, _ = _edit(edits)
    path = _file(data)
    try:
        event(_check(path, lambda p: read_sacct(p, skip_bad_rows=skip), skip, lines=touched))
    finally:
        path.unlink()


@SETTINGS
@given(st.binary(max_size=1500), st.booleans(), st.sampled_from(["csv", "jsonl"]))
def test_tabular_arbitrary_bytes(data: bytes, skip: bool, fmt: str) -> None:
    header = b"job_id,gpu_count,state,start,end\n" if fmt == "csv" else b""
    path = _file(header + data, suffix=f".{fmt}")
    try:
        event(_check(path, lambda p: read_tabular(p, fmt=fmt, skip_bad_rows=skip), skip))
    finally:
        path.unlink()


GOOD_ROW = {
    "job_id": "1",
    "gpu_count": "2",
    "state": "completed",
    "start": "2026-01-05T00:00:00Z",
    "end": "2026-01-05T08:00:00+05:00",  # 03:00 UTC: three hours after the start
}
ROWS = st.lists(
    st.one_of(
        st.just(GOOD_ROW),
        st.fixed_dictionaries(
            {
                "job_id": st.text(alphabet="abc123", max_size=5),
                "gpu_count": st.one_of(
                    st.integers(-3, 9).map(str),
                    st.sampled_from(["1e20", "inf", "NaN", "3000000000", "2.5", ""]),
                    st.text(max_size=4),
                ),
                "state": st.sampled_from(["completed", "FAILED", "CANCELLED by 7", "x", ""]),
                "start": st.one_of(
                    st.just("2026-01-05T00:00:00Z"),
                    st.sampled_from(["0001-01-01T00:00:00Z", "9999-01-01T00:00:00Z"]),
                    st.text(max_size=12),
                ),
                "end": st.one_of(st.just("2026-01-05T03:00:00+05:00"), st.text(max_size=12)),
            }
        ),
    ),
    min_size=1,
    max_size=8,
)


# A quoted line break makes a row span two lines; the error named the second (a fresh
# clone's run found it): a row is named by the line it starts on.
SPANNING_ROW = {**GOOD_ROW, "gpu_count": "0", "state": "\n"}


@SETTINGS
@example([SPANNING_ROW], False)
@example([SPANNING_ROW], True)
@example([GOOD_ROW, SPANNING_ROW, {**GOOD_ROW, "gpu_count": "x"}], True)
@given(ROWS, st.booleans())
def test_csv_structured_rows(rows: list[dict[str, str]], skip: bool) -> None:
    """Only the first line of a row that differs from the known-good one may be blamed (a
    quoted field may hold line breaks: the row then spans several lines)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    suspects: set[int] = set()
    for row in rows:
        first = buf.getvalue().count("\n") + 1
        writer.writerow(row)
        if row != GOOD_ROW:
            suspects.add(first)
    path = _file(buf.getvalue().encode(), suffix=".csv")
    try:
        got = _check(
            path,
            lambda p: read_tabular(p, fmt="csv", skip_bad_rows=skip),
            skip,
            lines=suspects,
            fields=set(CSV_COLUMNS),
        )
        event(got)
    finally:
        path.unlink()


def test_cli_bad_rows_exit_2_with_one_line_and_nothing_written(tmp_path: Path) -> None:
    """`gpudecide profile` on damaged real sacct lines: exit 0 with one record written, or
    exit 2 with one line naming the file and the line, and no record written."""
    from gpudecide.cli import app

    runner = CliRunner()
    outcomes: dict[int, int] = {}

    @settings(max_examples=examples(25), deadline=None)
    @given(EDITS)
    def check(edits: list[tuple[int, int, str]]) -> None:
        data, touched, _ = _edit(edits)
        work = Path(tempfile.mkdtemp(dir=tmp_path))
        log = work / "sacct.txt"
        log.write_bytes(data)
        evidence = work / "evidence"
        res = runner.invoke(app, ["profile", str(log), "--evidence-dir", str(evidence)])
        assert res.exit_code in (0, 2), (res.exit_code, res.output, res.exception)
        written = sorted(evidence.glob("*.json")) if evidence.exists() else []
        if res.exit_code == 2:
            lines = res.stderr.strip().splitlines()
            assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
            assert str(log) in lines[0]
            assert any(f"{log}:{n}:" in lines[0] for n in touched), (lines[0], touched)
            assert written == [], "a failed run wrote evidence"
        else:
            assert len(written) == 1
        outcomes[res.exit_code] = outcomes.get(res.exit_code, 0) + 1
        event(f"exit {res.exit_code}")

    check()
    assert set(outcomes) == {0, 2}, outcomes  # both the promise's sides were reached
