"""CSV and JSONL job logs with the canonical columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudecide.errors import InputError
from gpudecide.jobs.tabular import read_tabular

from .logs import job, write_csv


def test_csv_round_trip_with_extras_and_time_zones(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text(
        "job_id,name,gpu_count,state,start,end,submit,cost_center\n"
        "a1,ft-x-train,4,COMPLETED,2026-01-05T10:00:00,2026-01-05T12:00:00+05:00,"
        "2026-01-05T09:00:00Z,cc-17\n"
    )
    table = read_tabular(path, fmt="csv", tz="Asia/Almaty").table
    row = table.to_pylist()[0]
    assert row["state"] == "completed"  # Slurm word accepted
    assert row["start"].isoformat() == "2026-01-05T05:00:00+00:00"  # naive read in --tz
    assert row["end"].isoformat() == "2026-01-05T07:00:00+00:00"  # offset honoured
    assert row["submit"].isoformat() == "2026-01-05T09:00:00+00:00"
    assert row["elapsed_s"] == 7200.0
    assert json.loads(row["extras"]) == {"cost_center": "cc-17"}
    assert row["attempt"] == 1 and row["req_gpus"] == 4


def test_attempts_numbered_by_start_when_absent(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "j.csv",
        [
            job("7", "t", 1, "2026-01-02T00:00:00Z", "2026-01-02T01:00:00Z"),
            job("7", "t", 1, "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z", "requeued"),
        ],
    )
    rows = sorted(read_tabular(path, fmt="csv").table.to_pylist(), key=lambda r: r["attempt"])
    assert [(r["attempt"], r["state"]) for r in rows] == [(1, "requeued"), (2, "completed")]


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("gpu_count", "two", "not an integer"),
        ("gpu_count", "-1", "below 0"),
        ("state", "exploded", "is not one of"),
        ("start", "05/01/2026", "ISO 8601"),
        ("kind", "training", "is not one of"),
        ("end", "2025-01-01T00:00:00Z", "before start"),
    ],
)
def test_csv_bad_value_names_line_and_field(
    tmp_path: Path, field: str, value: str, words: str
) -> None:
    rows = [job(str(i), "x", 1, "2026-01-05T00:00:00Z", "2026-01-05T01:00:00Z") for i in range(3)]
    rows[1][field] = value
    path = write_csv(tmp_path / "j.csv", rows)
    with pytest.raises(InputError) as exc:
        read_tabular(path, fmt="csv")
    assert (exc.value.path, exc.value.line, exc.value.field) == (str(path), 3, field)
    assert words in exc.value.message
    skipped = read_tabular(path, fmt="csv", skip_bad_rows=True)
    assert skipped.table.num_rows == 2
    assert [(b.line, b.field) for b in skipped.bad_rows] == [(3, field)]


def test_csv_structure_errors(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text("job_id,state\n1,completed\n")
    with pytest.raises(InputError, match="gpu_count"):
        read_tabular(path, fmt="csv")
    path.write_text("job_id,gpu_count,state\n1,1,completed,extra\n")
    with pytest.raises(InputError) as exc:
        read_tabular(path, fmt="csv")
    assert exc.value.line == 2 and "4 fields, the header has 3" in exc.value.message
    path.write_bytes(b"job_id,gpu_count,state\n1,1,completed\n2,\xff,completed\n")
    with pytest.raises(InputError) as exc:
        read_tabular(path, fmt="csv")
    assert exc.value.line == 3 and "UTF-8" in exc.value.message


HEADER = b"job_id,name,gpu_count,state,start,end\n"
GOOD = b"1,ok,1,completed,2026-01-05T00:00:00Z,2026-01-05T01:00:00Z\n"


@pytest.mark.parametrize(
    ("row", "field", "words"),
    [
        # a bad value in a row whose quoted name holds line breaks
        (
            b'2,"two\nlines",x,completed,2026-01-05T00:00:00Z,2026-01-05T01:00:00Z\n',
            "gpu_count",
            "not an integer",
        ),
        (
            b'2,"a\r\nb\nc",1,exploded,2026-01-05T00:00:00Z,2026-01-05T01:00:00Z\n',
            "state",
            "is not one of",
        ),
        # too many fields, counted after the quoted line break
        (
            b'2,"x\ny",1,completed,2026-01-05T00:00:00Z,2026-01-05T01:00:00Z,extra\n',
            None,
            "7 fields",
        ),
        # a quote that never closes: the syntax error is found at the end of the file
        (b'2,"never closed,1,completed\n3,b,1,completed\n', None, "CSV syntax"),
        (b'2,"x"y,1,completed,2026-01-05T00:00:00Z,2026-01-05T01:00:00Z\n', None, "CSV syntax"),
    ],
)
def test_a_row_over_several_lines_is_named_by_its_first(
    tmp_path: Path, row: bytes, field: str | None, words: str
) -> None:
    """Every error of a row that spans lines (a quoted field with line breaks) names the
    line the row starts on, with or without --skip-bad-rows; the rows after it keep their
    own first lines."""
    spanning = b'3,"a\nlong\nname",1,completed,2026-01-05T00:00:00Z,2026-01-05T01:00:00Z\n'
    path = tmp_path / "j.csv"
    path.write_bytes(HEADER + GOOD + spanning + row + GOOD)
    with pytest.raises(InputError) as exc:
        read_tabular(path, fmt="csv")
    assert (exc.value.line, exc.value.field) == (6, field), exc.value.one_line()
    assert words in exc.value.message
    skipped = read_tabular(path, fmt="csv", skip_bad_rows=True)
    assert [(b.line, b.field) for b in skipped.bad_rows] == [(6, field)]
    # twin: the same rows without the bad one are read whole, no line blamed
    path.write_bytes(HEADER + GOOD + spanning + GOOD)
    assert read_tabular(path, fmt="csv").table.column("name").to_pylist() == [
        "ok",
        "a\nlong\nname",
        "ok",
    ]


def test_an_undecodable_line_inside_a_row_is_named(tmp_path: Path) -> None:
    """A line that is not UTF-8 inside a row spanning lines is named itself (it is the line
    to fix), and the header spanning lines is checked whole."""
    path = tmp_path / "j.csv"
    path.write_bytes(
        HEADER + b'2,"first\n\xff second",1,completed,2026-01-05T00:00:00Z,'
        b"2026-01-05T01:00:00Z\n" + GOOD
    )
    with pytest.raises(InputError) as exc:
        read_tabular(path, fmt="csv")
    assert exc.value.line == 3 and "UTF-8" in exc.value.message
    path.write_bytes(b'job_id,"gpu\n\xffcount",state\n1,1,completed\n')
    with pytest.raises(InputError, match="header is not UTF-8") as exc:
        read_tabular(path, fmt="csv")
    assert exc.value.line == 1


def test_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(
        json.dumps(
            {
                "job_id": 1,
                "gpu_count": 2,
                "state": "failed",
                "start": "2026-01-05T00:00:00Z",
                "end": "2026-01-05T00:30:00Z",
                "Kind": "smoke",
                "node": "n1",
            }
        )
        + "\n\n"
        + json.dumps({"job_id": "2", "gpu_count": None, "state": "pending"})
        + "\n"
    )
    rows = read_tabular(path, fmt="jsonl").table.to_pylist()
    assert rows[0]["job_id"] == "1" and rows[0]["kind_label"] == "smoke"
    assert json.loads(rows[0]["extras"]) == {"node": "n1"}
    assert rows[1]["state"] == "pending" and rows[1]["gpu_count"] is None
    path.write_text('{"job_id": 1, "gpu_count": 1, "state": "completed"}\n[1, 2]\n{"job_id": \n')
    with pytest.raises(InputError) as exc:
        read_tabular(path, fmt="jsonl")
    assert exc.value.line == 2 and "JSON object" in exc.value.message
    result = read_tabular(path, fmt="jsonl", skip_bad_rows=True)
    assert [b.line for b in result.bad_rows] == [2, 3]
