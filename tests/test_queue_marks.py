"""`queue` and `replay` read lifecycle marks (SPEC Q1, Q4, G1; issue 24): `--marks PATH`, else
the workspace's `marks/` folder. Start-up, preparation and the time since the last checkpoint
are measured from them, lost work after a stop is measured instead of bounded, the jobs whose
phases cannot be told apart shrink, and what is still unmeasured is said per job kind; each
against hand-computed values on a small log, with the same log read without marks as the twin.
The demo's marks (`gpudecide.queue.demo`) give the demo's queue record its start-up and lost
work, and are what `scripts/make_demo_data.py` writes."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.errors import InputError
from gpudecide.i18n import speaking
from gpudecide.jobs.load import load_logs
from gpudecide.jobs.log_command import Loaded, LogCommand, marks_folders, workspace_logs
from gpudecide.queue import demo as queue_demo
from gpudecide.queue.analysis import QueueOptions, analyse_queue, overview_of, queue_evidence
from gpudecide.queue.figures import queue_figures, replay_figures
from gpudecide.queue.marked import with_marks
from gpudecide.queue.runs import queue_runs, replay_run

from .conftest import run_cli
from .logs import job, write_csv

T = "2026-07-27T"
REPO = Path(__file__).parents[1]
UNMEASURED_EVAL = "eval (started: 1): preparation 1, start-up 1, since checkpoint 1"


def _log(path: Path) -> Path:
    """Three jobs, none with a time only the training code knows: a training (8 GPUs,
    10:00-16:00), a training preempted at 12:00 after two hours on 4 GPUs and requeued
    (12:30-14:00), and an evaluation that never wrote a mark and
    waited for no node (the template's urgent SLO holds)."""
    # three priority levels: the scheduler has a signal, and the record no finding about it
    ready = {"submit": f"{T}09:00:00Z", "eligible": f"{T}09:00:00Z"}
    return write_csv(
        path,
        [
            job("1", "ft-x-train", 8, f"{T}10:00:00Z", f"{T}16:00:00Z", priority=30, **ready),
            job(
                "2",
                "ft-y-train",
                4,
                f"{T}10:00:00Z",
                f"{T}12:00:00Z",
                "preempted",
                priority=20,
                **ready,
            ),
            job(
                "2",
                "ft-y-train",
                4,
                f"{T}12:30:00Z",
                f"{T}14:00:00Z",
                attempt=2,
                priority=20,
                **ready,
            ),
            job(
                "3",
                "eval-x",
                1,
                f"{T}10:00:00Z",
                f"{T}10:30:00Z",
                priority=10,
                eligible=f"{T}10:00:00Z",
            ),
        ],
    )


def _lines(folder: Path, job_id: str, restart: int, run: str, marks: list[tuple[Any, ...]]) -> None:
    """Marks as `gpudecide.marks.writer` writes them: one JSON object a line, the job's
    Slurm identity, rank 0, one run id per process, numbered."""
    folder.mkdir(parents=True, exist_ok=True)
    ident = {"slurm_job_id": job_id, "slurm_restart_count": restart, "host": "n1", "node": "n1"}
    with (folder / f"{job_id}.n1.jsonl").open("a", encoding="utf-8") as handle:
        for seq, (kind, hhmm, *extra) in enumerate(marks, start=1):
            record = {"v": 1, "kind": kind, "at": f"{T}{hhmm}:00.000000Z", **dict(extra)}
            record |= {**ident, "rank": 0, "pid": 100 + restart, "run": run, "seq": seq}
            handle.write(json.dumps(record) + "\n")


def _marks(folder: Path) -> Path:
    """Job 1: prep 10:02, first step 10:07, checkpoint 15:30. Job 2, first run: first step
    10:05, checkpoint 11:40 (20 minutes before the stop); its requeued run: prep 12:31, first
    step 12:34, checkpoint 13:50. And a job the log does not list."""
    ckpt = ("step", 100)
    _lines(
        folder,
        "1",
        0,
        "a1",
        [
            ("prep_start", "10:02"),
            ("first_step", "10:07"),
            ("checkpoint", "15:30", ckpt),
            ("end", "15:59"),
        ],
    )
    _lines(
        folder,
        "2",
        0,
        "b1",
        [("prep_start", "10:01"), ("first_step", "10:05"), ("checkpoint", "11:40", ckpt)],
    )
    _lines(
        folder,
        "2",
        1,
        "b2",
        [("prep_start", "12:31"), ("first_step", "12:34"), ("checkpoint", "13:50", ckpt)],
    )
    _lines(folder, "99", 0, "z9", [("prep_start", "10:00")])
    return folder


def _workspace(root: Path, slos: dict[str, Any] | None = None) -> Path:
    workspace.init(root)
    if slos is not None:
        (root / "slo.yaml").write_text(yaml.safe_dump({"slos": slos}))
    return root


def _analysed(log: Path, marks: Path | None) -> dict[str, Any]:
    """The queue figures of the log with the marks (if any), with `ambiguity` from the
    summary and the record's English `notes`."""
    loaded = Loaded(log=load_logs([log]), paths=[log], ws=None, evidence_dir=None)
    (marked,), report = with_marks([loaded], [marks] if marks else [])
    figures = analyse_queue(marked.log, QueueOptions(marks=report))
    figures["ambiguity"] = figures["summary"]["ambiguity"]
    figures["notes"] = queue_evidence(figures, []).notes
    return figures


def test_marks_measure_startup_lost_work_and_shrink_the_ambiguity(tmp_path: Path) -> None:
    with_marks_f = _analysed(_log(tmp_path / "q.csv"), _marks(tmp_path / "marks"))
    phases = with_marks_f["phases"]
    # start-up of the last attempt: job 1 10:00 -> 10:07 (420 s), job 2 12:30 -> 12:34 (240 s)
    assert (phases["startup"]["n"], phases["startup"]["unmeasured"]) == (2, 1)
    assert (phases["startup"]["p50"], phases["startup"]["max"]) == (330.0, 420.0)
    assert (phases["prep"]["n"], phases["prep"]["max"]) == (2, 120.0)  # 10:00 -> 10:02
    # since the last checkpoint: 16:00 - 15:30 and 14:00 - 13:50
    assert (phases["since_checkpoint"]["n"], phases["since_checkpoint"]["max"]) == (2, 1800.0)
    # the stop of job 2 at 12:00, 20 minutes after its checkpoint: 4 GPUs x 20 min lost,
    # measured; the checkpoint came longer than the grace before the stop
    p = with_marks_f["preemption"]
    assert p["gpu_minutes_lost_since_checkpoint"] == 80.0
    assert p["gpu_minutes_lost_upper_bound_unmeasured"] == 0.0
    assert p["checkpoint_before_stop"] == {"yes": 0, "no": 1, "unknown": 0}
    # only the evaluation's phases cannot be told apart
    assert with_marks_f["ambiguity"]["phases_indistinct"] == 1
    assert with_marks_f["ambiguity"]["without_first_step_time"] == 1
    assert with_marks_f["unmeasured_by_kind"] == {
        "eval": {"started": 1, "prep": 1, "startup": 1, "since_checkpoint": 1},
        "train": {"started": 2, "prep": 0, "startup": 0, "since_checkpoint": 0},
    }
    m = with_marks_f["marks"]
    assert (m["files"], m["lines"]) == (3, 11)
    assert (m["matched"], m["ambiguous"], m["unmatched"]) == (3, 0, 1)
    assert [p["where"] for p in m["problems"]] == [
        {"path": str(tmp_path / "marks" / "99.n1.jsonl"), "line": 1}
    ]
    notes = with_marks_f["notes"]
    assert (
        f"still unmeasured, by job kind (no time in the log nor in the marks): {UNMEASURED_EVAL}"
        in notes
    )
    assert "marks: 3 runs joined to their jobs; 0 ambiguous; 1 unmatched" in notes


def test_the_same_log_without_marks_stays_unmeasured_and_says_how_to_measure(
    tmp_path: Path,
) -> None:
    f = _analysed(_log(tmp_path / "q.csv"), None)
    assert "marks" not in f
    assert f["phases"]["startup"]["n"] == 0
    assert f["phases"]["startup"]["unmeasured"] == 3
    p = f["preemption"]
    # the whole first attempt is the bound: 4 GPUs x 120 min
    assert (
        p["gpu_minutes_lost_since_checkpoint"],
        p["gpu_minutes_lost_upper_bound_unmeasured"],
    ) == (
        0.0,
        480.0,
    )
    assert p["checkpoint_before_stop"]["unknown"] == 1
    assert f["ambiguity"]["phases_indistinct"] == 3
    assert f["unmeasured_by_kind"]["train"] == {
        "started": 2,
        "prep": 2,
        "startup": 2,
        "since_checkpoint": 2,
    }
    said = [n for n in f["notes"] if n.startswith("still unmeasured")]
    assert said == [
        "still unmeasured, by job kind (the log has none of these times; the training code "
        "can write them with gpudecide.marks, read with --marks DIR or the workspace's marks/ "
        f"folder): {UNMEASURED_EVAL}; train (started: 2): preparation 2, start-up 2, since "
        "checkpoint 2"
    ]


def test_nothing_unmeasured_says_nothing(tmp_path: Path) -> None:
    """A log that gives every time itself: no still-unmeasured note, no marks read."""
    log = write_csv(
        tmp_path / "full.csv",
        [
            job(
                "1",
                "ft-x-train",
                8,
                f"{T}10:00:00Z",
                f"{T}16:00:00Z",
                eligible=f"{T}10:00:00Z",
                prep_start=f"{T}10:01:00Z",
                first_step=f"{T}10:05:00Z",
                last_checkpoint=f"{T}15:00:00Z",
            )
        ],
    )
    f = _analysed(log, None)
    assert f["unmeasured_by_kind"] == {
        "train": {"started": 1, "prep": 0, "startup": 0, "since_checkpoint": 0}
    }
    assert not [n for n in f["notes"] if n.startswith("still unmeasured")]


def test_queue_reads_marks_flag_else_the_workspace_folder(tmp_path: Path) -> None:
    """`--marks DIR`, then the workspace's marks/ folder without the flag: the same join, in
    a record whose typed figures are its figures key for key; the summary counts fewer jobs
    whose phases cannot be told apart."""
    root = _workspace(tmp_path / "ws")
    log = _log(tmp_path / "q.csv")
    marks = _marks(tmp_path / "team-marks")
    res = run_cli("queue", str(log), "--marks", str(marks), "--json", cwd=root)
    assert res.returncode == 0, res.stderr
    body = json.loads(res.stdout)
    assert (body["marks"]["matched"], body["marks"]["unmatched"]) == (3, 1)
    record = ev.load(Path(body["evidence"]))
    assert queue_figures(record).model_dump(mode="json") == record.figures
    assert "1 with phases that cannot be told apart" in record.summary
    # the workspace's folder, read without a flag
    _marks(root / "marks")
    res = run_cli("queue", str(log), cwd=root)
    assert res.returncode == 0, res.stderr
    assert "note: marks: 3 runs joined to their jobs; 0 ambiguous; 1 unmatched" in res.stdout
    assert f"{root / 'marks' / '99.n1.jsonl'}:1: job 99 is not in the job log" in res.stdout
    assert (
        "note: still unmeasured, by job kind (no time in the log nor in the marks): "
        f"{UNMEASURED_EVAL}\n" in res.stdout
    )
    # ru: the same lines in the reader's language
    res = run_cli("--lang", "ru", "queue", str(log), cwd=root)
    assert res.returncode == 0, res.stderr
    assert "still unmeasured" not in res.stdout
    assert "ещё не измерено, по видам заданий (времени нет ни в журнале, ни в отметках)" in (
        res.stdout
    )


def test_the_workspace_folder_is_read_only_when_there(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    ws = workspace.load(root)
    assert marks_folders(None, ws) == []
    (root / "marks").mkdir()
    assert marks_folders(None, ws) == [root / "marks"]
    # a flag wins over the folder
    other = _marks(tmp_path / "other")
    assert marks_folders([other], ws) == [other]


def test_a_marks_path_that_is_not_there_is_refused_before_a_log_is_read(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    log = _log(tmp_path / "q.csv")
    missing = tmp_path / "no-such-marks"
    with pytest.raises(InputError) as caught:
        queue_runs(LogCommand([log], workspace_dir=root, as_json=True), marks=[missing])
    assert (caught.value.field, caught.value.path) == ("--marks", str(missing))
    assert caught.value.template == "no such file or directory"
    for command in ("queue", "replay"):
        res = run_cli(command, str(log), "--marks", str(missing), cwd=root)
        assert res.returncode == 2, (command, res.stdout, res.stderr)
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and str(missing) in lines[0] and "--marks" in lines[0]
        assert "Traceback" not in res.stderr
    assert not list((root / "evidence").glob("*.json"))


def test_replay_adds_the_measured_startup_to_a_first_step_slo(tmp_path: Path) -> None:
    """An SLO to the first training step: the replay adds each job's measured start-up to
    its simulated start. A pool of 16 GPUs starts all three jobs at once, so only start-up
    counts: job 1's 7 minutes break a 5-minute threshold, job 2's 4 do not, the evaluation
    has none measured (up to its start: no wait). Without marks, nothing is violated."""
    slos = {
        "normal": {
            "measure": "eligible_to_first_step",
            "threshold_minutes": 5,
            "allowed_violation_share": 0.5,
        },
        "urgent": {"threshold_minutes": 30, "allowed_violation_share": 0.05},
    }
    root = _workspace(tmp_path / "ws", slos)
    log = _log(tmp_path / "q.csv")
    marks = _marks(tmp_path / "marks")
    command = LogCommand([log], workspace_dir=root, as_json=True)
    run = replay_run(command, gpus="16", slo_name="normal", window="full", marks=[marks])
    f = replay_figures(run.record)
    assert f.slo is not None
    assert (f.slo.measure, f.slo.startup_measured) == ("eligible_to_first_step", 2)
    (pool,) = f.pools
    assert (pool.slo_violation_share, pool.slo_jobs) == (0.3333, 3)
    assert f.marks is not None and f.marks.matched == 3
    assert any(
        "for 2 of the 3 jobs it selects; for the rest its threshold is applied up to the start" in n
        for n in run.figures["notes"]
    )
    assert replay_figures(run.record).model_dump(mode="json") == run.record.figures
    # the twin: no marks, the clock stops at the start
    plain = replay_run(command, gpus="16", slo_name="normal", window="full")
    g = replay_figures(plain.record)
    assert g.slo is not None and g.marks is None
    assert (g.slo.measure, g.slo.startup_measured) == ("eligible_to_start", 0)
    assert g.pools[0].slo_violation_share == 0.0


def test_the_demo_marks_give_startup_and_lost_work(tmp_path: Path) -> None:
    """The demo workspace with its marks installed: most jobs get a start-up and a last
    checkpoint, lost work is measured, the cut-short line and the job the log does not list
    are named; the report's queue section shows the marks and what is still unmeasured."""
    from gpudecide.demo import create
    from gpudecide.report.model import Section

    ws = create(tmp_path / "demo")
    installed = queue_demo.install(ws.root)
    assert len(installed) == len(list(queue_demo.MARKS_DATA.glob("*.jsonl"))) == 39
    queue, written, _replay, _replay_written = queue_demo.run(workspace_logs(ws))
    assert written is not None
    f = overview_of(queue)
    assert f.marks is not None
    assert (f.marks.matched, f.marks.ambiguous, f.marks.unmatched) == (39, 0, 1)
    assert f.marks.problems_total == 2
    assert f.phases["startup"].n == 37
    assert f.phases["since_checkpoint"].n == 18
    assert f.summary.ambiguity.phases_indistinct == 12  # of 49, without marks
    assert f.preemption.gpu_minutes_lost_since_checkpoint == 174.3
    assert f.preemption.checkpoint_before_stop.unknown == 0
    section = Section("queue", "", ev.load(written), "fresh", "fresh", [])
    from gpudecide.queue.report import queue_section

    with speaking("ru"):
        queue_section(section)
    titles = [t.caption for t in section.tables]
    assert "Отметки жизненного цикла (Q1)" in titles
    assert any(t.startswith("Ещё не измерено, по видам заданий") for t in titles)
    assert "Неиспользованные отметки: первые 2, каждая с указанием файл:строка" in titles


def test_the_demo_marks_are_what_the_generator_writes() -> None:
    spec = importlib.util.spec_from_file_location(
        "make_demo_data", REPO / "scripts" / "make_demo_data.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        made = module.queue_marks()
    finally:
        del sys.modules[spec.name]
    shipped = {p.name: p.read_text(encoding="utf-8") for p in queue_demo.MARKS_DATA.glob("*.jsonl")}
    assert made == shipped


def test_load_logs_of_the_demo_is_unchanged_by_marks(tmp_path: Path) -> None:
    """with_marks returns copies: the log given keeps its empty first-step column."""
    path = _log(tmp_path / "q.csv")
    log = load_logs([path])
    loaded = Loaded(log=log, paths=[path], ws=None, evidence_dir=None)
    (marked,), _report = with_marks([loaded], [_marks(tmp_path / "marks")])
    assert loaded.log.attempts.column("first_step").null_count == log.attempts.num_rows
    assert marked.log.attempts.column("first_step").null_count == 1
