"""Drills' pieces without a training job: rules, journal, inputs, report."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.drills import checkpoint_corrupt, disk_full, report, rules, runner, storage_revoked
from gpudecide.drills.cli import register
from gpudecide.drills.drill_figures import DrillFigures, figures_of
from gpudecide.drills.faults import FaultUnsupported, SmallFilesystem
from gpudecide.drills.journal import Journal, always
from gpudecide.drills.runner import DrillContext
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.i18n import speaking
from gpudecide.jobs.load import load_logs
from gpudecide.queue import restarts
from gpudecide.report.model import Section

DEMO_LOG = Path(__file__).parents[1] / "src" / "gpudecide" / "jobs" / "demo_data" / "sacct-8w.txt"


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """The root app, as the main CLI builds it."""

    register(app)
    return app


def _drill_record(**figures: Any) -> ev.Evidence:
    base: dict[str, Any] = {
        "drill": "disk-full",
        "verdict": "pass",
        "noticed": True,
        "data_kept": True,
        "explained": True,
        "resumed_from_step": 4,
        "status": "ok",
        "option": "owned-pool",
    }
    base.update(figures)
    record = ev.Evidence(kind="drill", title="t", spec_ids=["G4"], verdict="pass", summary="s",
                         figures=base)  # fmt: skip
    return ev.seal(record)


# --- decision rules ---


def test_passed_drill_suggests_a_good_operations_score() -> None:
    out = rules.rules(_drill_record())
    said = out[0].rule_message
    expected = Suggestion("owned-pool", "operations", 4, out[0].rule, (out[0].evidence[0],),  # type: ignore[union-attr]
                          rule_message=said)  # fmt: skip
    assert out == [expected]
    assert said is not None and said["args"] == {"drill": "disk-full"}


def test_failed_drill_suggests_a_low_operations_score() -> None:
    out = rules.rules(_drill_record(verdict="fail", data_kept=False, status="disk full"))
    assert len(out) == 1 and isinstance(out[0], Suggestion)
    assert out[0].criterion == "operations" and out[0].score == 2
    assert "data_kept" in out[0].rule


def test_node_loss_from_zero_is_a_stop_factor_and_a_resume_is_not() -> None:
    zero = rules.rules(_drill_record(drill="node-loss", verdict="fail", data_kept=False,
                                     resumed_from_step=0, restarted_from_zero=True))  # fmt: skip
    stops = [f for f in zero if isinstance(f, StopFactor)]
    assert [s.id for s in stops] == ["cannot_resume_after_node_loss"]
    assert stops[0].option == "owned-pool" and stops[0].clear
    assert min(f.score for f in zero if isinstance(f, Suggestion)) == 1
    resumed = rules.rules(_drill_record(drill="node-loss", resumed_from_step=4))
    assert not [f for f in resumed if isinstance(f, StopFactor)]


def test_a_record_is_judged_by_its_own_drill_only() -> None:
    """A gpu-delay record carries its game day (a failed node-loss row in it): its rules are
    gpu-delay's alone; node loss is judged by node-loss records."""
    day = [
        {"drill": "node-loss", "verdict": "fail", "noticed": True, "data_kept": False,
         "explained": True, "resumed_from_step": 0, "restarted_from_zero": True, "status": "x"},
        {"drill": "gpu-delay", "verdict": "pass", "noticed": True, "data_kept": True,
         "explained": True, "resumed_from_step": 0, "status": "y"},
    ]  # fmt: skip
    out = rules.rules(_drill_record(drill="gpu-delay", resumed_from_step=0, game_day=day))
    assert not [f for f in out if isinstance(f, StopFactor)]
    assert [(f.score, f.rule_message["args"]["drill"]) for f in out] == [(4, "gpu-delay")]  # type: ignore[union-attr,index]


def _result(drill: str, verdict: str, tmp_path: Path, **details: Any) -> runner.DrillResult:
    from gpudecide.message import message

    journal = tmp_path / f"{drill}-{len(list(tmp_path.iterdir()))}.json"
    journal.write_text("{}")
    fail = verdict == "fail"
    return runner.DrillResult(
        drill, verdict, True, not fail, True, 0 if fail else 4, 6 if fail else 2, 1.0,  # type: ignore[arg-type]
        message("drills", "{text}", text=f"{drill} {verdict}"), journal, details=details,
        storage_url=str(tmp_path / drill / "storage"),
    )  # fmt: skip


def _stops(records: list[ev.Evidence], root: Path) -> set[tuple[str, str]]:
    """The stop factors the decision gets from the records it stands on (per drill scenario,
    as decision.context keys them)."""
    from gpudecide.decision.context import standing

    options = workspace.load(root).config.options
    found = set()
    for record in standing(records, options).values():
        for f in rules.rules(record):
            if isinstance(f, StopFactor):
                found.add((f.option, f.id))
    return found


def test_a_later_passing_drill_of_another_scenario_keeps_the_node_loss_stop(tmp_path: Path) -> None:
    """Issue 28: node-loss restarted from zero (stop); the next day gpu-delay passes. The stop
    stays; only a node-loss drill that resumes clears it. Real records, the decision's own
    keying of checks."""
    root = tmp_path / "ws"
    workspace.init(root)
    ctx = DrillContext(root=root / "drills" / "d", option="owned-pool")
    lost = _result("node-loss", "fail", tmp_path, restarted_from_zero=True)
    delay = _result("gpu-delay", "pass", tmp_path)
    day1 = [runner.game_day_row(lost)]
    first = ev.seal(runner.to_evidence(lost, ctx, root, day1, None))
    day2 = [*day1, runner.game_day_row(delay)]  # the same game day: node-loss's row rides along
    second = ev.seal(runner.to_evidence(delay, ctx, root, day2, None))
    assert _stops([first, second], root) == {("owned-pool", "cannot_resume_after_node_loss")}
    alone = ev.seal(runner.to_evidence(delay, ctx, root, [runner.game_day_row(delay)], None))
    assert _stops([first, alone], root) == {("owned-pool", "cannot_resume_after_node_loss")}
    # Twin: the node-loss drill passing clears it, though the older gpu-delay record still
    # carries the failed row in its game day.
    resumed = _result("node-loss", "pass", tmp_path, restarted_from_zero=False)
    third = ev.seal(runner.to_evidence(resumed, ctx, root, [runner.game_day_row(resumed)], None))
    assert _stops([first, second, third], root) == set()


def test_no_option_no_findings() -> None:
    assert rules.rules(_drill_record(option=None)) == []


# --- journal ---


def test_rollback_runs_and_is_recorded_when_the_action_fails(tmp_path: Path) -> None:
    j = Journal("d", "t", "d", "h")
    with pytest.raises(RuntimeError), j.activity("action", "inject"):
        raise RuntimeError("boom")
    always(j, "undo", lambda: "undone")
    always(j, "undo that fails", lambda: 1 / 0)
    j.steady("after", [])
    data = json.loads(j.write(tmp_path / "j.json", {"verdict": "fail"}).read_text())
    assert data["run"][0]["status"] == "failed" and "boom" in data["run"][0]["exception"]
    assert [r["status"] for r in data["rollbacks"]] == ["succeeded", "failed"]
    assert data["rollbacks"][0]["output"] == "undone"
    assert data["status"] == "failed"


# --- inputs ---


def test_bad_drill_inputs_are_one_line_exit_2(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    workspace.init(root)
    cwd = Path.cwd()
    os.chdir(root)
    try:
        r = CliRunner().invoke(_app(), ["drill", "meteor-strike"])
        assert r.exit_code == 2 and "unknown drill 'meteor-strike'" in r.output
        r = CliRunner().invoke(_app(), ["drill", "gpu-delay", "--executor", "cloud"])
        assert r.exit_code == 2 and "--executor" in r.output
        r = CliRunner().invoke(_app(), ["drill", "gpu-delay", "--option", "nope"])
        assert r.exit_code == 2 and "unknown option id 'nope'" in r.output
        (root / "drills.yaml").write_text("option: nope\n")
        r = CliRunner().invoke(_app(), ["drill", "gpu-delay"])
        assert r.exit_code == 2 and "drills.yaml" in r.output and "'option'" in r.output
        (root / "drills.yaml").write_text("executor: cloud\n")
        r = CliRunner().invoke(_app(), ["drill", "gpu-delay"])
        assert r.exit_code == 2 and "drills.yaml:1" in r.output
        assert "Traceback" not in r.output
    finally:
        os.chdir(cwd)
    assert not list((root / "evidence").glob("*.json"))


def _no_slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH whose scontrol is there but its controller is down, as Slurm says it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scontrol = bin_dir / "scontrol"
    scontrol.write_text(
        '#!/bin/sh\necho "slurm_load_ctl_conf error: Unable to contact slurm controller '
        '(connect failure)" >&2\nexit 1\n'
    )
    scontrol.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_slurm_executor_without_a_controller_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--executor slurm (or drills.yaml's executor) with no controller answering: exit 2,
    one line naming the flag or the file's line, no record, no job started."""
    _no_slurm(tmp_path, monkeypatch)
    root = tmp_path / "ws"
    workspace.init(root)
    monkeypatch.chdir(root)
    r = CliRunner().invoke(_app(), ["drill", "gpu-delay", "--executor", "slurm"])
    assert r.exit_code == 2, r.output
    assert "field '--executor'" in r.output and "Unable to contact slurm controller" in r.output
    (root / "drills.yaml").write_text("version: 1\nexecutor: slurm\n")
    r = CliRunner().invoke(_app(), ["drill", "gpu-delay"])
    assert r.exit_code == 2 and "drills.yaml:2: field 'executor'" in r.output
    assert "Traceback" not in r.output
    assert not list((root / "evidence").glob("*.json")) and not (root / "drills").exists()


# --- report ---


def _section(record: ev.Evidence) -> Section:
    return Section("drill", record.title, record, "fresh", "fresh", [])


def test_report_section_of_an_older_record_in_russian_and_kazakh() -> None:
    """A record of one drill written before game days were kept: its own table and the
    restarts in the job logs."""
    log = load_logs([DEMO_LOG], tz="Asia/Almaty")
    record = _drill_record(log_restarts=restarts.restarts_from_zero(log.attempts))
    for lang, word in (("ru", "Учение disk-full"), ("kk", "disk-full жаттығуы")):
        s = _section(record)
        with speaking(lang):
            report.drills_section(s)
        assert s.title.startswith(word)
        assert len(s.tables) == 2
        assert {r[0] for r in s.tables[1].rows} == {"41874", "41892", "41909"}
    s = _section(record)
    report.drills_section(s)
    zero = next(r for r in s.tables[1].rows if r[0] == "41874")
    assert zero[5] == "restarted from zero" and zero[6] == "177.3"


def _game_day(root: Path, restarts_found: Any = None) -> list[ev.Evidence]:
    """The five records of one `drill all` run, as run_drills writes them (real records)."""
    from gpudecide.drills.names import DRILLS

    ctx = DrillContext(root=root / "drills" / "d", option="owned-pool", planned=list(DRILLS))
    results = []
    records = []
    for name in DRILLS:
        details = {"restarted_from_zero": False} if name == "node-loss" else {}
        results.append(_result(name, "pass", root, **details))
        day = [runner.game_day_row(r) for r in results]
        records.append(ev.seal(runner.to_evidence(results[-1], ctx, root, day, restarts_found)))
    return records


def test_each_drill_of_a_game_day_has_its_own_section_and_one_summary(tmp_path: Path) -> None:
    """Five records, five sections: each with its own drill's answers and contour; only the
    record that closes the game day carries the game day's table and the restarts, once."""
    found = restarts.RestartsFigures.model_validate(
        restarts.restarts_from_zero(load_logs([DEMO_LOG], tz="Asia/Almaty").attempts)
    )
    sections = []
    for record in _game_day(tmp_path, found):
        s = _section(record)
        report.drills_section(s)
        sections.append(s)
    titles = [s.title for s in sections]
    assert titles == [
        f"Drill {d}: was the failure noticed, data kept, the status explained?"
        for d in ("node-loss", "disk-full", "storage-revoked", "gpu-delay", "checkpoint-corrupt")
    ]
    captions = [[t.caption for t in s.tables] for s in sections]
    assert all(c[0].startswith("Drill ") and c[1].startswith("Where it ran") for c in captions)
    summaries = [s for s in sections if any(t.caption.startswith("The game day") for t in s.tables)]
    assert summaries == [sections[-1]]
    game = next(t for t in sections[-1].tables if t.caption.startswith("The game day"))
    assert game.caption == "The game day: 5 drills of this run (G1, G4)"
    assert [r[0] for r in game.rows] == [r.figures["drill"] for r in _game_day(tmp_path)]
    restart_tables = [t for s in sections for t in s.tables if t.caption.startswith("Restarts")]
    assert len(restart_tables) == 1
    own = {r[0]: r[1] for r in sections[0].tables[0].rows}
    assert own["verdict"] == "pass" and own["restarted from zero"] == "no"
    # No marks were written by these results' jobs: no lifecycle table.
    assert not any("lifecycle marks" in c for c in captions[0])
    where = sections[0].tables[1].rows[0]
    assert where[0] == "local" and where[3].endswith("/node-loss/storage")


def test_a_single_drill_run_shows_no_game_day_table(tmp_path: Path) -> None:
    """Twin: `drill node-loss` alone: its own table, its contour and the restarts; no
    summary of one row."""
    ctx = DrillContext(root=tmp_path / "drills" / "d", option="owned-pool", planned=["node-loss"])
    result = _result("node-loss", "fail", tmp_path, restarted_from_zero=True)
    record = ev.seal(runner.to_evidence(result, ctx, tmp_path, [runner.game_day_row(result)], None))
    s = _section(record)
    with speaking("ru"):
        report.drills_section(s)
    assert s.tables[0].caption == "Учение node-loss на варианте owned-pool (G1, G4)"
    assert not any("День учений" in t.caption for t in s.tables)
    rows = {r[0]: r[1] for r in s.tables[0].rows}
    assert rows["перезапуск с нуля"] == "да" and rows["итог"] == "не пройдено"


# --- drills that cannot run say why, as a failed drill ---


def test_unsupported_fault_fails_loudly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no small filesystem can be mounted, disk-full fails and says why (never skips)."""

    def refuse(self: SmallFilesystem) -> str:
        raise FaultUnsupported("cannot mount a small filesystem (tmpfs: not permitted)")

    monkeypatch.setattr(SmallFilesystem, "mount", refuse)
    r = disk_full.run(DrillContext(root=tmp_path))
    assert r.verdict == "fail" and not r.noticed
    assert r.status.startswith("cannot inject the fault: cannot mount")


def test_node_local_storage_fails_the_storage_drills(tmp_path: Path) -> None:
    for run in (storage_revoked.run, checkpoint_corrupt.run):
        r = run(DrillContext(root=tmp_path, storage="node"))
        assert r.verdict == "fail" and r.status.startswith("no external storage")
        assert r.journal.is_file()


def test_root_without_setpriv_cannot_revoke_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root ignores file modes: without a way to drop that power the drill fails, saying so."""
    monkeypatch.setattr(storage_revoked.os, "geteuid", lambda: 0)
    monkeypatch.setattr(storage_revoked.shutil, "which", lambda _name: None)
    r = storage_revoked.run(DrillContext(root=tmp_path))
    assert r.verdict == "fail" and "setpriv" in r.status
    assert r.status.startswith("cannot inject the fault")


# --- typed figures ---


def test_a_drill_record_reads_back_typed_as_written(tmp_path: Path) -> None:
    """A drill that could not run (checkpoints on the node only) and the demo log's
    restarts: the typed figures dump to the record's figures, hash unchanged."""
    ctx = DrillContext(root=tmp_path, storage="node", option="owned-pool")
    result = storage_revoked.run(ctx)
    found = restarts.RestartsFigures.model_validate(
        restarts.restarts_from_zero(load_logs([DEMO_LOG], tz="Asia/Almaty").attempts)
    )
    day = [runner.game_day_row(result)]
    path = ev.write(runner.to_evidence(result, ctx, tmp_path, day, found), tmp_path / "ev")
    record = ev.load(path)
    typed = figures_of(record)
    assert typed.model_dump(mode="json") == record.figures
    again = record.model_copy(update={"figures": typed.model_dump(mode="json")})
    assert again.compute_content_sha256() == record.content_sha256
    assert typed.log_restarts is not None
    assert [
        e.job_id for e in typed.log_restarts.restarts if e.verdict == "restarted_from_zero"
    ] == ["41874"]
    assert typed.rows()[0].status_message == result.status_message
    # A record of one drill without a game day is its own row (older records).
    alone = DrillFigures.model_validate({k: v for k, v in record.figures.items()
                                         if k != "game_day"})  # fmt: skip
    assert [r.drill for r in alone.rows()] == ["storage-revoked"]
    assert "game_day" not in alone.model_dump(mode="json")


def test_the_lifecycle_table_reads_the_jobs_marks(tmp_path: Path) -> None:
    """Marks written with gpudecide.marks' own writer, read back per job: startup, the
    checkpoints, how it ended; a job without an end mark (killed) is said so."""
    from datetime import datetime, timedelta

    from gpudecide.drills import drill_run
    from gpudecide.marks import MarkWriter

    run_dir = tmp_path / "d" / "node-loss"
    for job, end in (("attempt-1", None), ("attempt-2", "completed")):
        w = MarkWriter(run_dir / "marks", job_id=f"node-loss-{job}", env={}, strict=True)
        w.prep_start()
        w.first_step(1)
        w.checkpoint(4, run_dir / "node-a" / "checkpoint-4")
        if end:
            w.end(end)
    result = _result("node-loss", "pass", tmp_path, restarted_from_zero=False)
    result.journal = run_dir / "journal.json"
    result.journal.write_text("{}")
    marked = drill_run.job_lifecycles(result)[0]["checkpoints"][0]["at"]
    killed = datetime.fromisoformat(marked.replace("Z", "+00:00")) + timedelta(seconds=3)
    result.stopped_at = {"attempt-1": killed.isoformat().replace("+00:00", "Z")}
    jobs = drill_run.job_lifecycles(result)
    assert [(j["job"], j["end_status"]) for j in jobs] == [
        ("attempt-1", None), ("attempt-2", "completed")
    ]  # fmt: skip
    assert all(0 <= j["startup_seconds"] < 5 and j["first_step_number"] == 1 for j in jobs)
    assert jobs[0]["since_checkpoint_seconds"] == 3.0  # to the kill
    assert 0 <= jobs[1]["since_checkpoint_seconds"] < 5  # to its own end mark
    result.details["lifecycle"] = jobs
    ctx = DrillContext(root=tmp_path / "d", option="owned-pool", planned=["node-loss"])
    record = ev.seal(runner.to_evidence(result, ctx, tmp_path, [runner.game_day_row(result)], None))
    assert figures_of(record).model_dump(mode="json") == record.figures
    s = _section(record)
    with speaking("ru"):
        report.drills_section(s)
    table = next(t for t in s.tables if "отметкам жизненного цикла" in t.caption)
    assert [r[0] for r in table.rows] == ["attempt-1", "attempt-2"]
    assert table.rows[0][4] == "нет отметки конца: задача убита" and table.rows[1][4] == "завершено"
