"""Runs joined to the jobs of real logs (a real sacct dump with an array and a requeue, real
Kubernetes pods, a CSV log naming hosts): by job id, array task, restart count, pod, a
job-named folder, host and time; the report counts and lists matched, ambiguous and
unmatched runs; bad marks (an unknown job, a checkpoint before the start, after the end)
are named file:line; values the log gave are never overwritten."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from gpudecide.i18n import speaking
from gpudecide.jobs.load import load_logs
from gpudecide.jobs.schema import ATTEMPTS_SCHEMA, attempts_table
from gpudecide.marks.apply import apply_marks, mark_jobs
from gpudecide.marks.join import expand_hostlist
from gpudecide.marks.read import read_marks
from gpudecide.message import render

from .conftest import FIXTURES, SACCT


def _at(text: str, seconds: float = 0) -> str:
    at = datetime.fromisoformat(text).replace(tzinfo=UTC) + timedelta(seconds=seconds)
    return at.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _write(path: Path, run: str, ident: dict[str, Any], marks: list[tuple[str, str]]) -> None:
    """Lines as the writer writes them (one run), with the times given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        for seq, (kind, at) in enumerate(marks, start=1):
            record = {"v": 1, "kind": kind, "at": at, **ident, "run": run, "seq": seq}
            if kind == "checkpoint":
                record["step"] = seq * 10
            handle.write(json.dumps(record) + "\n")


def _rows(table: pa.Table, *names: str) -> dict[tuple[str, int], dict[str, Any]]:
    return {
        (r["job_id"], r["attempt"]): r
        for r in table.select(["job_id", "attempt", *names]).to_pylist()
    }


@pytest.fixture
def sacct_log() -> pa.Table:
    return load_logs([SACCT / "scenario.utc.txt"]).attempts


def test_real_sacct_log_joined_by_job_array_task_and_restart_count(
    sacct_log: pa.Table, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    # job 112 ran 01:39:38 .. 01:39:43
    _write(
        marks / "112.localhost.jsonl",
        "a",
        {"slurm_job_id": "112"},
        [
            ("prep_start", _at("2026-11-30T01:39:38", 0.5)),
            ("first_step", _at("2026-11-30T01:39:40")),
            ("checkpoint", _at("2026-11-30T01:39:41")),
            ("checkpoint", _at("2026-11-30T01:39:42")),
            ("end", _at("2026-11-30T01:39:43")),
        ],
    )
    # array task 119_3 (its own job id is another number: sacct lists it as 119_3)
    _write(
        marks / "119_3.localhost.jsonl",
        "b",
        {"slurm_job_id": "125", "slurm_array_job_id": "119", "slurm_array_task_id": "3"},
        [
            ("first_step", _at("2026-11-30T01:40:02")),
        ],
    )
    # job 120 was requeued: restart 0 is attempt 1, restart 1 is attempt 2
    for run, restart, at in (("c", 0, "2026-11-30T01:40:10"), ("d", 1, "2026-11-30T01:40:25")):
        _write(
            marks / "120.localhost.jsonl",
            run,
            {"slurm_job_id": "120", "slurm_restart_count": restart},
            [("first_step", _at(at)), ("checkpoint", _at(at, 1))],
        )
    marked = mark_jobs(sacct_log, [marks])
    report = marked.report
    assert (report.runs, report.matched, report.ambiguous, report.unmatched) == (4, 4, 0, 0)
    assert report.problems == []
    rows = _rows(marked.attempts, "prep_start", "first_step", "last_checkpoint")
    assert rows[("112", 1)]["prep_start"].isoformat() == "2026-11-30T01:39:38.500000+00:00"
    assert rows[("112", 1)]["first_step"].isoformat() == "2026-11-30T01:39:40+00:00"
    assert rows[("112", 1)]["last_checkpoint"].isoformat() == "2026-11-30T01:39:42+00:00"
    assert rows[("119_3", 1)]["first_step"] is not None
    assert rows[("119_2", 1)]["first_step"] is None
    assert rows[("120", 1)]["first_step"].isoformat() == "2026-11-30T01:40:10+00:00"
    assert rows[("120", 2)]["first_step"].isoformat() == "2026-11-30T01:40:25+00:00"
    assert rows[("120", 2)]["last_checkpoint"].isoformat() == "2026-11-30T01:40:26+00:00"
    # nothing else changed: same schema, same rows in the same order
    assert marked.attempts.schema == ATTEMPTS_SCHEMA
    untouched = [
        c for c in ATTEMPTS_SCHEMA.names if c not in ("prep_start", "first_step", "last_checkpoint")
    ]
    assert marked.attempts.select(untouched) == sacct_log.select(untouched)
    assert report.fields["first_step"].filled == 4
    assert report.fields["last_checkpoint"].filled == 3
    by = {j.run.name: (j.by, j.job_id, j.attempts) for j in report.joins}
    assert by == {
        "a": ("job_id", "112", [1]),
        "b": ("job_id", "119_3", [1]),
        "c": ("job_id", "120", [1]),
        "d": ("job_id", "120", [2]),
    }


def test_bad_marks_are_named_and_not_used(sacct_log: pa.Table, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    bad = marks / "bad.jsonl"
    _write(bad, "x", {"slurm_job_id": "999"}, [("first_step", _at("2026-11-30T01:39:40"))])
    _write(
        bad,
        "y",
        {"slurm_job_id": "113"},
        [
            ("checkpoint", _at("2026-11-30T01:39:30")),  # before 113 started (01:39:43)
            ("first_step", _at("2026-11-30T01:39:44")),
            ("checkpoint", _at("2026-11-30T01:41:30")),  # after it timed out (01:40:45)
        ],
    )
    _write(bad, "z", {"slurm_job_id": "118"}, [("first_step", _at("2026-11-30T01:39:55"))])
    _write(bad, "w", {}, [("first_step", _at("2026-11-30T01:39:40"))])  # no id, no host
    marked = mark_jobs(sacct_log, [marks])
    report = marked.report
    assert (report.matched, report.ambiguous, report.unmatched) == (2, 0, 2)
    assert report.problem_counts == {
        "unknown_job": 1,
        "before_start": 1,
        "after_end": 1,
        "not_started": 1,
        "no_identity": 1,
    }
    texts = sorted(p.text for p in report.problems)
    assert f"{bad}:1: job 999 is not in the job log: its marks are not used" in texts
    assert any(
        t.startswith(f"{bad}:2: checkpoint mark at 2026-11-30T01:39:30")
        and "before attempt 1 of job 113 started" in t
        for t in texts
    )
    assert any(
        t.startswith(f"{bad}:4: checkpoint mark at") and "after attempt 1" in t for t in texts
    )
    assert any(
        t.startswith(f"{bad}:5: the job log says attempt 1 of job 118 never started") for t in texts
    )
    rows = _rows(marked.attempts, "first_step", "last_checkpoint")
    assert rows[("113", 1)]["first_step"] is not None
    assert rows[("113", 1)]["last_checkpoint"] is None  # neither checkpoint was in its span
    unmatched = {j.run.name: j.message["msgid"] for j in report.joins if j.outcome == "unmatched"}
    assert set(unmatched) == {"x", "w"}


def test_a_value_the_log_gave_is_never_overwritten(tmp_path: Path) -> None:
    start = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
    table = attempts_table(
        [
            {
                "job_id": "7",
                "attempt": 1,
                "state": "completed",
                "start": start,
                "end": start + timedelta(hours=1),
                "first_step": start + timedelta(minutes=3),
            }
        ],
        "csv",
    )
    marks = tmp_path / "m.jsonl"
    _write(
        marks,
        "r",
        {"job_id": "7"},
        [
            ("prep_start", _at("2026-05-01T08:00:10")),
            ("first_step", _at("2026-05-01T08:01:00")),
        ],
    )
    marked = apply_marks(table, read_marks([marks]))
    row = marked.attempts.to_pylist()[0]
    assert row["first_step"] == start + timedelta(minutes=3)  # the log's own value
    assert row["prep_start"] == start + timedelta(seconds=10)
    assert marked.report.fields["first_step"].model_dump() == {"filled": 0, "kept": 1}
    assert marked.report.fields["prep_start"].model_dump() == {"filled": 1, "kept": 0}


def test_kubernetes_pods_join_by_pod_name(tmp_path: Path) -> None:
    log = load_logs([FIXTURES / "kubernetes" / "pods.json"]).attempts
    marks = tmp_path / "marks"
    # the second pod of ft-llama-r1 (attempt 2, 09:12:49 .. 21:47:15)
    _write(
        marks / "ft.jsonl",
        "p",
        {"pod": "ft-llama-r1-q4n7d", "namespace": "ml-train"},
        [
            ("prep_start", _at("2026-07-28T09:13:00")),
            ("first_step", _at("2026-07-28T09:20:00")),
            ("checkpoint", _at("2026-07-28T21:00:00")),
        ],
    )
    marked = mark_jobs(log, [marks])
    assert marked.report.matched == 1 and marked.report.problems == []
    rows = _rows(marked.attempts, "prep_start", "first_step", "last_checkpoint")
    second = rows[("ft-llama-r1", 2)]
    assert second["first_step"].isoformat() == "2026-07-28T09:20:00+00:00"
    assert second["last_checkpoint"].isoformat() == "2026-07-28T21:00:00+00:00"
    # the pod's own start time from the log is kept, not overwritten
    assert second["prep_start"] == _rows(log, "prep_start")[("ft-llama-r1", 2)]["prep_start"]
    assert rows[("ft-llama-r1", 1)]["first_step"] is None


def _host_log() -> pa.Table:
    t = datetime(2026, 6, 1, 10, 0, tzinfo=UTC)
    rows = [
        {
            "job_id": "a1",
            "start": t,
            "end": t + timedelta(hours=2),
            "extras": json.dumps({"node": "gpu[01-02]"}),
        },
        {
            "job_id": "b2",
            "start": t + timedelta(hours=3),
            "end": t + timedelta(hours=5),
            "extras": json.dumps({"nodelist": "gpu02"}),
        },
        {
            "job_id": "c3",
            "start": t + timedelta(hours=3),
            "end": t + timedelta(hours=5),
            "extras": json.dumps({"host": "gpu02.cluster.local"}),
        },
    ]
    return attempts_table([{**r, "attempt": 1, "state": "completed"} for r in rows], "csv")


def test_runs_without_a_job_id_join_by_host_and_time(tmp_path: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter

    marks = tmp_path / "marks"
    _write(
        marks / "local.gpu01.jsonl",
        "one",
        {"host": "gpu01.cluster.local"},
        [("first_step", _at("2026-06-01T10:05:00"))],
    )
    _write(
        marks / "local.gpu02.jsonl",
        "two",
        {"node": "GPU02"},
        [("first_step", _at("2026-06-01T13:05:00"))],
    )  # b2 and c3 both ran there then
    _write(
        marks / "local.gpu03.jsonl",
        "three",
        {"host": "gpu03"},
        [("first_step", _at("2026-06-01T10:05:00"))],
    )  # nothing ran on gpu03
    # a TensorBoard file says its host in its name only
    w = SummaryWriter(str(tmp_path / "tb"), filename_suffix="")
    w.add_scalar("loss", 1.0, 1)
    w.close()
    event = next((tmp_path / "tb").glob("events.*"))
    renamed = event.with_name("events.out.tfevents.1780308000.gpu01.4242.0")
    event.rename(renamed)
    marked = mark_jobs(_host_log(), [marks, renamed])
    report = marked.report
    outcome = {j.run.name: (j.outcome, j.by, j.job_id) for j in report.joins}
    assert outcome["one"] == ("matched", "host_time", "a1")
    assert outcome["two"][0] == "ambiguous"
    assert outcome["three"][0] == "unmatched"
    # the event file was written now, when no job of this log ran on gpu01
    assert outcome[str(renamed)][0] == "unmatched"
    two = next(j for j in report.joins if j.run.name == "two")
    assert sorted(c.job_id for c in two.candidates) == ["b2", "c3"]
    with speaking("en"):
        assert render(two.message) == "2 jobs ran on GPU02 at 2026-06-01T13:05:00+00:00"
    assert (report.matched, report.ambiguous, report.unmatched) == (1, 1, 2)


def test_a_log_without_hosts_says_why_a_run_cannot_join(
    sacct_log: pa.Table, tmp_path: Path
) -> None:
    path = tmp_path / "m.jsonl"
    _write(path, "r", {"host": "localhost"}, [("first_step", _at("2026-11-30T01:39:40"))])
    # The same log as a scheduler that keeps no node list prints it (sacct without NodeList)
    no_hosts = sacct_log.set_column(
        sacct_log.schema.get_field_index("extras"),
        "extras",
        pa.array([None] * sacct_log.num_rows, sacct_log.schema.field("extras").type),
    )
    report = mark_jobs(no_hosts, [path]).report
    assert report.unmatched == 1
    assert "the job log names no hosts" in report.problems[0].text
    # Twin: the log as sacct printed it names the node, and the run joins by host and time.
    assert mark_jobs(sacct_log, [path]).report.matched == 1


def test_a_job_named_folder_joins_checkpoints_across_requeues(
    sacct_log: pa.Table, tmp_path: Path
) -> None:
    import os

    out = tmp_path / "outputs" / "job-120"
    for step, at in ((10, "2026-11-30T01:40:11"), (20, "2026-11-30T01:40:27")):
        folder = out / f"checkpoint-{step}"
        folder.mkdir(parents=True)
        (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))
        stamp = datetime.fromisoformat(at).replace(tzinfo=UTC).timestamp()
        for f in (folder / "trainer_state.json", folder):
            os.utime(f, (stamp, stamp))
    marked = mark_jobs(sacct_log, [tmp_path / "outputs"])
    (join,) = marked.report.joins
    assert (join.outcome, join.by, join.job_id, join.attempts) == (
        "matched",
        "folder",
        "120",
        [1, 2],
    )
    rows = _rows(marked.attempts, "last_checkpoint")
    assert rows[("120", 1)]["last_checkpoint"].isoformat() == "2026-11-30T01:40:11+00:00"
    assert rows[("120", 2)]["last_checkpoint"].isoformat() == "2026-11-30T01:40:27+00:00"


def test_sagemaker_spot_job_restarts_join_by_training_job_name(tmp_path: Path) -> None:
    """A real SageMaker spot job with three attempts: each process's marks go to the
    attempt that holds them."""
    job = "ft-qwen-r3-spot-p4d-20260729-0300"
    log = load_logs([FIXTURES / "managed" / "sagemaker" / f"{job}.cli.json"]).attempts
    path = tmp_path / "m.jsonl"
    _write(
        path,
        "second",
        {"sagemaker_job": job, "node": "algo-1"},
        [("first_step", _at("2026-07-29T10:09:00")), ("checkpoint", _at("2026-07-29T12:30:00"))],
    )
    _write(
        path,
        "third",
        {"sagemaker_job": job, "node": "algo-1"},
        [("first_step", _at("2026-07-29T13:50:00"))],
    )
    marked = mark_jobs(log, [path])
    assert marked.report.matched == 2 and marked.report.problems == []
    rows = _rows(marked.attempts, "first_step", "last_checkpoint")
    assert rows[(job, 1)]["first_step"] is None
    assert rows[(job, 2)]["first_step"].isoformat() == "2026-07-29T10:09:00+00:00"
    assert rows[(job, 2)]["last_checkpoint"].isoformat() == "2026-07-29T12:30:00+00:00"
    assert rows[(job, 3)]["first_step"].isoformat() == "2026-07-29T13:50:00+00:00"


def test_the_report_speaks_the_readers_language(sacct_log: pa.Table, tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    for n in range(5):
        _write(
            path, f"u{n}", {"slurm_job_id": f"9{n}"}, [("first_step", _at("2026-11-30T01:39:40"))]
        )
    _write(path, "ok", {"slurm_job_id": "112"}, [("first_step", _at("2026-11-30T01:39:40"))])
    report = mark_jobs(sacct_log, [path]).report
    summary = report.summary_message()
    notes = report.note_messages()
    with speaking("en"):
        assert render(summary) == "marks: 1 run joined to its job; 0 ambiguous; 5 unmatched"
        assert [render(n) for n in notes] == [
            "first training step measured from marks for 1 attempt",
            "5 marks or files could not be used (named file:line in the join report)",
        ]
    with speaking("ru"):
        ru = render(summary)
        assert "1 запуск сопоставлен с заданием" in ru and "5 не сопоставлено" in ru
        assert render(report.problems[0].message).startswith("задания 90 нет в журнале заданий")
    with speaking("kk"):
        kk = render(summary)
        assert "1 іске қосу" in kk and "тапсырма" in kk


def test_slurm_host_lists() -> None:
    assert expand_hostlist("gpu[01-03,07],cpu5") == ["gpu01", "gpu02", "gpu03", "gpu07", "cpu5"]
    assert expand_hostlist("n[8-10]-ib") == ["n8-ib", "n9-ib", "n10-ib"]
    assert expand_hostlist("a,b") == ["a", "b"]
    assert len(expand_hostlist("x[0-99999999]")) == 4096  # bounded


def test_the_report_is_json_and_reads_back(sacct_log: pa.Table, tmp_path: Path) -> None:
    """The report goes into a record as JSON (`model_dump(mode="json")`) and reads back into
    the same model."""
    from gpudecide.marks.join import JoinReport

    path = tmp_path / "m.jsonl"
    _write(path, "a", {"slurm_job_id": "112"}, [("first_step", _at("2026-11-30T01:39:40"))])
    _write(path, "b", {"slurm_job_id": "5"}, [("first_step", _at("2026-11-30T01:39:40"))])
    path.open("a").write("{cut")
    report = mark_jobs(sacct_log, [path]).report
    dumped = report.model_dump(mode="json")
    assert json.loads(json.dumps(dumped)) == dumped
    assert JoinReport.model_validate(dumped) == report
    assert dumped["problem_counts"] == {"truncated": 1, "unknown_job": 1}
    assert (dumped["matched"], dumped["unmatched"], dumped["lines"]) == (1, 1, 3)
