"""sacct as production clusters write it (issue 9 items 2-10; issue 14 items 1-2 for sacct).

Every input is the real recording (tests/fixtures/sacct/) with the one shape under test
written into it the way sacct prints it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpudecide.errors import InputError
from gpudecide.jobs.load import load_logs
from gpudecide.jobs.profile import ProfileOptions, build_profile
from gpudecide.jobs.sacct import read_sacct
from gpudecide.queue.analysis import analyse_queue

from .conftest import SACCT

REG = (SACCT / "regression.utc.txt").read_text().splitlines()
HEAD = REG[0].split("|")


def _line(job_id: str) -> int:
    """Index (0-based) of the job line of `job_id` (its first record)."""
    return next(i for i, ln in enumerate(REG) if ln.split("|")[0] == job_id)


def _write(tmp_path: Path, lines: list[str], name: str = "sacct.txt") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _set(lines: list[str], i: int, head: list[str] = HEAD, **fields: str) -> None:
    parts = lines[i].split("|")
    for name, value in fields.items():
        parts[head.index(name)] = value
    lines[i] = "|".join(parts)


def _rows(path: Path, **kw: Any) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["job_id"], r["attempt"]): r for r in read_sacct(path, **kw).table.to_pylist()}


# -- item 2: GPU count from what the row has, with its source -------------------------------


def test_empty_alloctres_on_a_started_row_counts_reqtres(tmp_path: Path) -> None:
    lines = list(REG)
    _set(lines, _line("10"), AllocTRES="")
    rows = _rows(_write(tmp_path, lines))
    assert rows[("10", 1)]["gpu_count"] == 1
    assert rows[("10", 1)]["gpu_source"] == "ReqTRES"
    assert rows[("1", 1)]["gpu_source"] == "AllocTRES"
    figures = build_profile(load_logs([_write(tmp_path, lines)]), ProfileOptions(weeks=1)).figures
    assert figures["jobs_total"] == 9  # the node-fail job stays in the profile
    assert figures["gpu_count_sources"] == {"AllocTRES": 9, "ReqTRES": 1}


@pytest.mark.parametrize(
    ("gres", "gpus"),
    [
        ("gpu:P100:2(IDX:0-1)", 2),
        ("gpu:tesla:2", 2),
        ("hbm:0,gpu:4", 4),
        ("gpu:2", 2),
        ("gpu:tesla:2,gpu:k80:1", 3),
        ("craynetwork:1", 0),
    ],
)
def test_old_reqgres_forms(tmp_path: Path, gres: str, gpus: int) -> None:
    head = ["JobID", "State", "Submit", "Start", "End", "ReqGRES"]
    path = _write(
        tmp_path,
        [
            "|".join(head),
            f"77|COMPLETED|2026-11-30T01:00:00|2026-11-30T01:00:00|2026-11-30T02:00:00|{gres}",
        ],
    )
    row = _rows(path)[("77", 1)]
    assert (row["gpu_count"], row["gpu_source"]) == (gpus, "ReqGRES")


def test_a_row_without_any_gpu_information_is_counted_as_such(tmp_path: Path) -> None:
    lines = list(REG)
    _set(lines, _line("10"), AllocTRES="", ReqTRES="")
    log = load_logs([_write(tmp_path, lines)])
    figures = build_profile(log, ProfileOptions(weeks=1)).figures
    assert figures["reconciliation"]["no_gpu_information"] == 1
    assert figures["reconciliation"]["total"] == 10
    assert figures["gpu_count_sources"]["none (no GPU information)"] == 1
    assert analyse_queue(log)["summary"]["reconciliation"] == figures["reconciliation"]


# -- item 3: array ranges count tasks --------------------------------------------------------


def test_pending_range_with_gaps_and_limit_is_nine_tasks(tmp_path: Path) -> None:
    lines = (SACCT / "regression.pending.txt").read_text().splitlines()
    i = next(n for n, ln in enumerate(lines) if "_[" in ln.split("|")[0])
    _set(lines, i, JobID="3_[9-11,13,16-20%4]")
    log = load_logs([_write(tmp_path, lines)])
    figures = build_profile(log, ProfileOptions(weeks=1)).figures
    assert figures["pending"] == 9
    assert figures["reconciliation"]["pending"] == 9
    assert analyse_queue(log)["summary"]["still_waiting"] == 9


# -- item 4: identical rows are duplicates wherever they come from ----------------------------


def test_same_rows_twice_in_one_file_do_not_double_gpu_hours(tmp_path: Path) -> None:
    once = build_profile(load_logs([_write(tmp_path, REG, "a.txt")]), ProfileOptions(weeks=1))
    twice_path = _write(tmp_path, REG + REG[1:], "b.txt")
    log = load_logs([twice_path])
    twice = build_profile(log, ProfileOptions(weeks=1))
    assert twice.figures["gpu_hours_total"] == once.figures["gpu_hours_total"] == 0.021
    assert twice.figures["attempts_total"] == once.figures["attempts_total"] == 10
    assert twice.figures["requeue_attempts"] == 1
    job_rows = sum(1 for ln in REG[1:] if "." not in ln.split("|")[0])
    assert log.duplicate_rows == job_rows
    assert twice.figures["duplicate_rows_dropped"] == job_rows
    # steps are not counted twice either
    rows = _rows(twice_path)
    assert rows[("1", 1)]["steps"] == 2


def test_overlapping_attempts_are_an_input_problem(tmp_path: Path) -> None:
    lines = list(REG)
    second = next(i for i, ln in enumerate(lines) if ln.startswith("9|") and "COMPLETED" in ln)
    # the second record of job 9 starts while the first still ran (00:52:34-00:52:37)
    _set(lines, second, Start="2026-12-01T00:52:35")
    path = _write(tmp_path, lines)
    with pytest.raises(InputError) as exc:
        read_sacct(path)
    assert (exc.value.line, exc.value.field) == (second + 1, "Start")
    assert "never overlap" in exc.value.message
    result = read_sacct(path, skip_bad_rows=True)
    assert [(b.line, b.field) for b in result.bad_rows] == [(second + 1, "Start")]
    assert [r["attempt"] for r in result.table.to_pylist() if r["job_id"] == "9"] == [1]


def test_back_to_back_requeue_attempts_do_not_overlap(tmp_path: Path) -> None:
    """Boundary: the next attempt starting the second the last one ended is no overlap."""
    lines = list(REG)
    second = next(i for i, ln in enumerate(lines) if ln.startswith("9|") and "COMPLETED" in ln)
    _set(lines, second, Start="2026-12-01T00:52:37")
    rows = _rows(_write(tmp_path, lines))
    assert rows[("9", 2)]["state"] == "completed"


# -- item 5: every state sacct prints ---------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "canonical"),
    [
        ("SPECIAL_EXIT", "requeued"),
        ("STOPPED", "running"),
        ("BOOT_FAIL", "node_fail"),
        ("DEADLINE", "timeout"),
        ("OUT_OF_MEMORY", "failed"),
        ("REVOKED", "cancelled"),
        ("RESV_DEL_HOLD", "pending"),
        ("REQUEUE_FED", "requeued"),
        ("REQUEUE_HOLD", "requeued"),
        ("SIGNALING", "running"),
        ("STAGE_OUT", "running"),
        ("RESIZING", "running"),
        ("SUSPENDED", "running"),
        ("CONFIGURING", "running"),
        ("COMPLETING", "running"),
        ("EXPEDITING", "requeued"),
        ("CD", "completed"),
        ("OOM", "failed"),
    ],
)
def test_every_slurm_state_is_read(tmp_path: Path, state: str, canonical: str) -> None:
    lines = list(REG)
    _set(lines, _line("10"), State=state)
    rows = _rows(_write(tmp_path, lines))
    assert rows[("10", 1)]["state"] == canonical
    assert rows[("10", 1)]["state_detail"] == state


def test_unknown_state_says_what_and_how_to_go_on(tmp_path: Path) -> None:
    lines = list(REG)
    i = _line("10")
    _set(lines, i, State="HIBERNATING")
    with pytest.raises(InputError) as exc:
        read_sacct(_write(tmp_path, lines))
    msg = exc.value.one_line()
    assert (exc.value.line, exc.value.field) == (i + 1, "State")
    assert "not a Slurm job state of 22.05-26.05" in msg and "--skip-bad-rows" in msg


# -- item 6: times with a space ----------------------------------------------------------------


def test_times_with_a_space_read_like_the_default(tmp_path: Path) -> None:
    spaced = [ln.replace("2026-12-01T", "2026-12-01 ") for ln in REG]
    assert _rows(_write(tmp_path, spaced, "s.txt")) == {
        k: {**v, "source": str(tmp_path / "s.txt")}
        for k, v in _rows(_write(tmp_path, REG, "s2.txt")).items()
    }


def test_a_time_format_not_understood_names_the_setting(tmp_path: Path) -> None:
    lines = list(REG)
    _set(lines, _line("10"), Submit="Tue 01 Dec 00:52")
    with pytest.raises(InputError) as exc:
        read_sacct(_write(tmp_path, lines))
    assert exc.value.field == "Submit"
    assert "SLURM_TIME_FORMAT" in exc.value.one_line()


# -- item 7: '|' inside the last field ---------------------------------------------------------


def test_pipe_inside_a_last_comment_belongs_to_it(tmp_path: Path) -> None:
    lines = list(REG)
    i = _line("10")
    lines[i] += "kind=train chain=a|b note"
    result = read_sacct(_write(tmp_path, lines))
    assert result.bad_rows == []
    row = {(r["job_id"], r["attempt"]): r for r in result.table.to_pylist()}[("10", 1)]
    assert row["kind_label"] == "train" and row["chain_id"] == "a|b"
    assert any("'|' inside the last field (Comment)" in n for n in result.notes)


# -- item 9: Eligible Unknown with a known Start ----------------------------------------------


def test_eligible_unknown_with_a_start_waits_from_submit(tmp_path: Path) -> None:
    lines = list(REG)
    i = next(n for n, ln in enumerate(REG) if ln.split("|")[0] == "3_5")
    _set(lines, i, Eligible="Unknown")
    log = load_logs([_write(tmp_path, lines)])
    job = next(j for j in analyse_queue(log)["jobs"] if j["job_id"] == "3_5")
    assert job["queue_wait_s"] == 26.0  # Submit 00:52:05 -> Start 00:52:31
    assert any("1 job(s)" in n and "measured from Submit" in n for n in log.notes)


# -- item 10: messages ------------------------------------------------------------------------


def test_too_many_fields_without_header_names_the_format_list(tmp_path: Path) -> None:
    body = list(REG[1:])
    i = next(n for n, ln in enumerate(body) if ln.split("|")[0] == "2")
    body[i] = body[i].replace("ft-pending-cancel-train", "ft|pending-cancel-train")
    path = _write(tmp_path, body)
    with pytest.raises(InputError) as exc:
        read_sacct(path, sacct_format=",".join(HEAD))
    # the extra '|' is in JobName, not in the last field: the row is not read shifted
    assert exc.value.line == i + 1
    assert "more fields than the 21 of --sacct-format" in exc.value.message
    assert "header" not in exc.value.message


def test_cpu_only_log_does_not_blame_eligible_times(tmp_path: Path) -> None:
    lines = [REG[0]] + [
        ln.replace(",gres/gpu:h100=2,gres/gpu=2", "")
        .replace(",gres/gpu:h100=1,gres/gpu=1", "")
        .replace(",gres/gpu=1", "")
        for ln in REG[1:]
    ]
    figures = build_profile(load_logs([_write(tmp_path, lines)]), ProfileOptions(weeks=1)).figures
    assert figures["jobs_total"] == 0 and figures["reconciliation"]["cpu_only"] == 9
    assert not any("eligible" in n for n in figures["notes"])
    assert any("no job in the window ran on a GPU" in n for n in figures["notes"])
    # the requeued CPU-only attempt is no stop that loses GPU time
    q = analyse_queue(load_logs([_write(tmp_path, lines)]))
    assert q["preemption"]["stops"] == 0
    assert not any("without a checkpoint" in f for f in q["preemption"]["findings"])


def test_every_row_skipped_is_an_error_not_a_log_as_of_now(tmp_path: Path) -> None:
    lines = [REG[0]] + [ln.replace("|root|", "|root|", 1) for ln in REG[1:]]
    head = HEAD
    for i in range(1, len(lines)):
        if "." not in lines[i].split("|")[0]:
            _set(lines, i, head, State="EXPLODED")
    path = _write(tmp_path, lines)
    with pytest.raises(InputError) as exc:
        load_logs([path], skip_bad_rows=True)
    assert "every job row was skipped" in exc.value.message
    assert exc.value.line == 2 and exc.value.field == "State"


# -- issue 14 items 1-2: impossible values are row errors --------------------------------------


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"Start": "0001-01-01T00:00:00"}, "Start", "outside 2000-2099"),
        ({"Start": "9999-01-01T00:00:00", "End": "9999-01-01T01:00:00"}, "Start", "outside"),
        ({"End": "2026-12-01T00:50:00"}, "End", "is before start"),
        ({"End": "2150-01-01T00:00:00"}, "End", "outside 2000-2099"),
        ({"End": "2099-01-01T00:00:00"}, "End", "more than 400 days after start"),
        ({"Submit": "1970-01-01T00:00:00"}, "Submit", "outside"),
    ],
)
def test_impossible_times_name_line_and_field(
    tmp_path: Path, fields: dict[str, str], field: str, words: str
) -> None:
    lines = list(REG)
    i = _line("10")
    _set(lines, i, **fields)
    path = _write(tmp_path, lines)
    with pytest.raises(InputError) as exc:
        read_sacct(path)
    assert (exc.value.path, exc.value.line, exc.value.field) == (str(path), i + 1, field)
    assert words in exc.value.message
    result = read_sacct(path, skip_bad_rows=True)
    assert [(b.line, b.field) for b in result.bad_rows] == [(i + 1, field)]
    assert words in result.bad_rows[0].reason
    assert "10" not in {r["job_id"] for r in result.table.to_pylist()}


def test_boundary_times_are_accepted(tmp_path: Path) -> None:
    lines = list(REG)
    _set(lines, _line("10"), End="2026-12-01T00:52:57")  # End = Start: a 0 s attempt
    assert _rows(_write(tmp_path, lines))[("10", 1)]["elapsed_s"] == 0.0


@pytest.mark.parametrize("count", ["3000000000", "-2", "100001"])
def test_absurd_gpu_count_is_a_row_error(tmp_path: Path, count: str) -> None:
    lines = list(REG)
    i = _line("10")
    _set(lines, i, AllocTRES=f"billing=1,cpu=1,gres/gpu={count},node=1")
    with pytest.raises(InputError) as exc:
        read_sacct(_write(tmp_path, lines))
    assert (exc.value.line, exc.value.field) == (i + 1, "AllocTRES")
    assert "not one job's count (0-100000)" in exc.value.message


def test_largest_gpu_count_is_accepted(tmp_path: Path) -> None:
    lines = list(REG)
    _set(lines, _line("10"), AllocTRES="billing=1,cpu=1,gres/gpu=100000,node=1")
    assert _rows(_write(tmp_path, lines))[("10", 1)]["gpu_count"] == 100000


def test_a_byte_order_mark_before_the_header_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(REG).encode() + b"\n")
    assert ("9", 2) in _rows(path)


def test_a_job_id_reused_after_an_accounting_reset_is_another_job(tmp_path: Path) -> None:
    lines = list(REG)
    again = lines[_line("1")].split("|")
    again[HEAD.index("JobName")] = "ft-other-train"
    for name, value in (
        ("Submit", "2026-12-05T10:00:00"),
        ("Eligible", "2026-12-05T10:00:00"),
        ("Start", "2026-12-05T10:00:00"),
        ("End", "2026-12-05T11:00:00"),
        ("Elapsed", "01:00:00"),
    ):
        again[HEAD.index(name)] = value
    lines.append("|".join(again))
    result = read_sacct(_write(tmp_path, lines))
    rows = {(r["job_id"], r["attempt"]): r for r in result.table.to_pylist()}
    assert rows[("1", 1)]["name"] == "blocker-train" and ("1", 2) not in rows
    assert rows[("1#2", 1)]["name"] == "ft-other-train"
    assert rows[("1#2", 1)]["elapsed_s"] == 3600.0
    # a requeue (REQUEUED, then the next record) stays one job with two attempts
    assert rows[("9", 2)]["state"] == "completed"


def test_the_same_id_on_two_clusters_is_two_jobs(tmp_path: Path) -> None:
    head = ["JobID", "Cluster", "State", "Submit", "Start", "End", "AllocTRES"]
    row = "5|{c}|COMPLETED|2026-11-30T01:00:00|2026-11-30T01:00:00|2026-11-30T02:00:00|gres/gpu=1"
    path = _write(tmp_path, ["|".join(head), row.format(c="alpha"), row.format(c="beta")])
    rows = _rows(path)
    assert set(rows) == {("5@alpha", 1), ("5@beta", 1)}
    assert rows[("5@alpha", 1)]["site"] == "alpha"


# -- NodeList kept for the joins by host and time (issue 24) ---------------------------------


def test_nodelist_is_kept_as_the_node_of_each_attempt(tmp_path: Path) -> None:
    """sacct's NodeList goes into the attempt's `extras` as {"node": ...} (a host list as
    sacct prints it); a job that never got a node ("None assigned", empty) has none, and a
    dump without the NodeList field keeps no extras."""
    import json

    lines = list(REG)
    _set(lines, _line("10"), NodeList="gpu[01-04,07]")
    _set(lines, _line("1"), NodeList="None assigned", State="CANCELLED by 0", Start="Unknown")
    _set(lines, _line("1"), End="2026-12-01T00:52:24", Elapsed="00:00:00")
    rows = _rows(_write(tmp_path, lines))
    assert json.loads(rows[("10", 1)]["extras"]) == {"node": "gpu[01-04,07]"}
    assert rows[("1", 1)]["extras"] is None
    others = [r for k, r in rows.items() if k not in {("10", 1), ("1", 1)} and r["start"]]
    assert others and all(json.loads(r["extras"]) == {"node": "localhost"} for r in others)
    col = HEAD.index("NodeList")
    without = ["|".join(p for i, p in enumerate(ln.split("|")) if i != col) for ln in REG]
    assert all(r["extras"] is None for r in _rows(_write(tmp_path, without, "x.txt")).values())


def test_marks_join_a_sacct_attempt_by_its_node_and_time(tmp_path: Path) -> None:
    """Twin pair: a run that names no job id joins the attempt whose NodeList holds its
    host at that time; the same run on a host of no attempt stays unmatched."""
    import json

    from gpudecide.marks.apply import mark_jobs

    lines = list(REG)
    _set(lines, _line("10"), NodeList="gpu[01-04]")
    attempts = read_sacct(_write(tmp_path, lines)).table
    ten = next(r for r in attempts.to_pylist() if r["job_id"] == "10")
    at = (ten["start"] + (ten["end"] - ten["start"]) / 2).isoformat().replace("+00:00", "Z")
    for host, outcome in (("gpu03", "matched"), ("gpu09", "unmatched")):
        marks = tmp_path / f"marks-{host}"
        marks.mkdir()
        mark = {"v": 1, "kind": "first_step", "at": at, "host": host, "run": "r", "seq": 1}
        (marks / "run.jsonl").write_text(json.dumps(mark) + "\n")
        report = mark_jobs(attempts, [marks]).report
        assert (report.matched, report.unmatched) == ((1, 0) if outcome == "matched" else (0, 1)), (
            host
        )


@pytest.mark.parametrize("tz", ["UTC", "Asia/Almaty", "Europe/Berlin"])
def test_a_local_time_names_the_instant_icu_gives_it(tz: str) -> None:
    """The UTC shortcut (the instant rebuilt from the local time's microseconds) gives
    ICU's instant for every time, the extremes and a DST gap included; other zones take
    ICU's conversion (Almaty moved from UTC+6 to UTC+5 on 2024-03-01)."""
    from gpudecide.jobs import sql
    from gpudecide.jobs.sacct import _utc_sql

    con = sql.connect()
    local = (
        "unnest([TIMESTAMP '2000-01-01 00:00:00', TIMESTAMP '2024-02-29 12:00:00', "
        "TIMESTAMP '2024-03-01 12:00:00', TIMESTAMP '2026-03-29 02:30:00', "
        "TIMESTAMP '1969-12-31 23:59:59.5', TIMESTAMP '9999-12-31 23:59:59', NULL])"
    )
    rows = con.execute(
        f"SELECT {_utc_sql('x', tz)} IS NOT DISTINCT FROM timezone('{tz}', x), "
        f"epoch(timezone('{tz}', x)) - epoch(x) FROM (SELECT {local} AS x)"
    ).fetchall()
    assert all(same for same, _ in rows)
    if tz == "Asia/Almaty":
        assert [round(off) for _, off in rows[1:3]] == [-6 * 3600, -5 * 3600]
