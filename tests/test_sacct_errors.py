"""Malformed sacct output: one clear error naming file, line and field, or a counted bad row."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudecide.errors import InputError
from gpudecide.jobs.sacct import read_sacct

from .conftest import SACCT

REAL = (SACCT / "scenario.utc.txt").read_text().splitlines()
HEADER = REAL[0].split("|")
# Line numbers of job lines (not steps) in the recording, in file order.
JOB_LINES = [i for i, ln in enumerate(REAL, start=1) if i > 1 and "." not in ln.split("|")[0]]


def _corrupt(tmp_path: Path, line_no: int, field: str, value: str) -> Path:
    """The real recording with one field of one line replaced."""
    lines = list(REAL)
    parts = lines[line_no - 1].split("|")
    parts[HEADER.index(field)] = value
    lines[line_no - 1] = "|".join(parts)
    path = tmp_path / "sacct.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("nth_job", "field", "value", "words"),
    [
        (0, "Start", "2026-13-45T99:00:00", "not what sacct prints"),
        (1, "End", "yesterday", "not what sacct prints"),
        (0, "State", "EXPLODED", "not a Slurm job state"),
        (2, "Elapsed", "12 minutes", "[DD-[HH:]]MM:SS"),
        (1, "Timelimit", "forever", "not a Slurm duration"),
        (0, "Priority", "high", "not an integer"),
        (0, "JobID", "job-two", "not a Slurm job id"),
        # Blank and padded values still name their line (found by the fuzzer: the line scan
        # compared a stripped field with an unstripped value; \f is stripped by Python only).
        (0, "JobID", " ", "not a Slurm job id"),
        (1, "JobID", "\x0c", "not a Slurm job id"),
        (2, "JobID", " job-two ", "not a Slurm job id"),
        (0, "Comment", "kind=training chain=x", "not one of train"),
        (0, "AllocTRES", "lots of gpus", "AllocTRES"),
    ],
)
def test_bad_field_names_file_line_and_field(
    tmp_path: Path, nth_job: int, field: str, value: str, words: str
) -> None:
    line_no = JOB_LINES[nth_job]
    path = _corrupt(tmp_path, line_no, field, value)
    with pytest.raises(InputError) as exc:
        read_sacct(path)
    err = exc.value
    assert err.path == str(path)
    assert err.line == line_no
    assert err.field == field
    assert words in err.one_line()
    assert "\n" not in err.one_line()


def test_skip_bad_rows_counts_and_reports(tmp_path: Path) -> None:
    line_no = JOB_LINES[1]
    bad_id = REAL[line_no - 1].split("|")[0]
    path = _corrupt(tmp_path, line_no, "Start", "garbage")
    result = read_sacct(path, skip_bad_rows=True)
    assert [(b.line, b.field) for b in result.bad_rows] == [(line_no, "Start")]
    ids = set(result.table.column("job_id").to_pylist())
    assert bad_id not in ids  # dropped, not kept half-parsed
    good = {REAL[n - 1].split("|")[0] for n in (JOB_LINES[0], JOB_LINES[2])}
    assert good <= ids


def test_row_with_missing_and_extra_fields(tmp_path: Path) -> None:
    lines = list(REAL)
    short, extra = JOB_LINES[0], JOB_LINES[1]
    lines[short - 1] = lines[short - 1].rsplit("|", 1)[0]  # one field short
    lines[extra - 1] = lines[extra - 1].replace("ft-llama-long-train", "ft|llama")  # '|' in a name
    path = tmp_path / "s.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as exc:
        read_sacct(path)
    assert exc.value.line == short and "fewer fields" in exc.value.message
    result = read_sacct(path, skip_bad_rows=True)
    assert {b.line for b in result.bad_rows} == {short, extra}
    assert any("more fields" in b.reason for b in result.bad_rows)


def test_not_utf8_line_is_read_as_latin1_and_noted(tmp_path: Path) -> None:
    """Job names from old clusters in Latin-1 keep their row (issue 9 item 8)."""
    data = "\n".join(REAL).encode()
    lines = data.split(b"\n")
    n = JOB_LINES[1]
    job_id = REAL[n - 1].split("|")[0]
    lines[n - 1] = lines[n - 1].replace(b"ft-llama", b"ft-\xe9llama", 1)
    path = tmp_path / "s.txt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = read_sacct(path)
    rows = {r["job_id"]: r for r in result.table.to_pylist()}
    assert rows[job_id]["name"].startswith("ft-\u00e9llama")
    assert result.bad_rows == []
    assert any(f"Latin-1 (line(s) {n})" in note for note in result.notes)


def test_missing_required_fields_say_which_and_how(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text("JobID|JobName|State\n1|x|COMPLETED\n")
    with pytest.raises(InputError) as exc:
        read_sacct(path)
    msg = exc.value.one_line()
    assert "Start" in msg and "AllocTRES" in msg and "sacct --allusers" in msg


def test_empty_and_header_only(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(InputError, match="empty"):
        read_sacct(empty)
    header_only = tmp_path / "h.txt"
    header_only.write_text(REAL[0] + "\n")
    with pytest.raises(InputError, match="no job rows"):
        read_sacct(header_only)


def test_unknown_format_field() -> None:
    with pytest.raises(InputError) as exc:
        read_sacct(SACCT / "scenario.noheader.txt", sacct_format="JobID,Bogus")
    assert exc.value.field == "--sacct-format"
    assert "Bogus" in exc.value.message


def test_format_list_contradicting_the_header() -> None:
    with pytest.raises(InputError, match="does not match the header"):
        read_sacct(SACCT / "scenario.utc.txt", sacct_format="JobID,State,Start,End,AllocTRES")
