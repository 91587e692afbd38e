"""Queue evidence names the option whose platform its log comes from (issue 21: queue scores
stop being assumptions, the hard-SLO stop can fire; issue 27: a missing file names the
setting that points at it).

Real logs (canonical CSV, the recorded sacct and SageMaker/OpenAI fixtures), a real
workspace from `gpudecide init`, the real commands; each rule with a twin that must not
trigger.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.decision.context import RuleContext
from gpudecide.errors import InputError
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.jobs.log_command import LogCommand
from gpudecide.matrix_config import MatrixConfig
from gpudecide.queue.figures import queue_figures, replay_figures
from gpudecide.queue.rules import queue_rules
from gpudecide.queue.runs import queue_runs, replay_run

from .conftest import FIXTURES, run_cli
from .logs import job, write_csv

SAGEMAKER = sorted((FIXTURES / "managed" / "sagemaker").glob("*.json"))
OPENAI = FIXTURES / "managed" / "openai"
SACCT = FIXTURES / "sacct" / "scenario.utc.txt"

SLOS = {
    "slos": {
        "normal": {
            "threshold_minutes": 240,
            "allowed_violation_share": 0.10,
            "selector": {"kinds": ["train"]},
        },
        "urgent": {
            "threshold_minutes": 30,
            "allowed_violation_share": 0.05,
            "selector": {"kinds": ["eval"]},
        },
    }
}


def _slow_evals(path: Path, n: int = 40, wait_min: int = 60, slow: int = 0) -> Path:
    """`n` eval jobs, each waiting `wait_min` minutes, the first `slow` of them an hour:
    with 40 waiting an hour the urgent SLO (30 min, 5 % allowed) fails conclusively."""
    rows = []
    for i in range(n):
        submit = datetime(2026, 7, 1 + i // 10, 8 + i % 10, tzinfo=UTC)
        start = submit + timedelta(minutes=60 if i < slow else wait_min)
        rows.append(
            job(
                f"e{i}",
                f"eval-{i}",
                1,
                start.isoformat(),
                (start + timedelta(minutes=30)).isoformat(),
                submit=submit.isoformat(),
                eligible=submit.isoformat(),
                kind="eval",
            )
        )
    return write_csv(path, rows)


def _workspace(root: Path, logs: list[dict[str, Any]] | None = None, **queue: Any) -> Path:
    """A workspace from `gpudecide init` with our SLOs, its logs and queue settings."""
    workspace.init(root)
    (root / "slo.yaml").write_text(yaml.safe_dump(SLOS))
    config = yaml.safe_load((root / workspace.CONFIG_NAME).read_text())
    config["logs"] = logs or []
    config["queue"].update(queue)
    (root / workspace.CONFIG_NAME).write_text(yaml.safe_dump(config, sort_keys=False))
    return root


def _command(root: Path, logs: list[Path] | None = None) -> LogCommand:
    return LogCommand(list(logs or []), workspace_dir=root, as_json=True)


def _records(root: Path) -> list[ev.Evidence]:
    return ev.load_all(root / "evidence")


def _refused(call: Any) -> InputError:
    """The input error a run raises (the CLI prints its one line and exits 2)."""
    with pytest.raises(InputError) as caught:
        call()
    return caught.value


# --- --option on the command line ---------------------------------------------------------


def test_queue_log_option_is_the_decisions_command_line(tmp_path: Path) -> None:
    """`gpudecide queue LOG --option X`, as the decision suggests it: the record names X and
    the contour its log exercised; the same log without --option is the team's workload,
    its figures without the key (the record's shape unchanged)."""
    root = _workspace(tmp_path / "ws")
    log = _slow_evals(tmp_path / "evals.csv")
    res = run_cli("queue", str(log), "--option", "owned-pool", "--json", cwd=root)
    assert res.returncode == 1, res.stderr  # the urgent SLO fails: exit 1, record written
    body = json.loads(res.stdout)
    assert body["option"] == "owned-pool"
    assert body["contour"] == {
        "executor": None,  # a CSV export says nothing of the platform that printed it
        "cluster": "",
        "context": "",
        "host": "",
        "storage": "",
        "artifacts": None,
    }
    record = ev.load(Path(body["evidence"]))
    assert ev.subject(record) == ("queue", "owned-pool")
    assert queue_figures(record).model_dump(mode="json") == record.figures
    assert record.summary.startswith("option owned-pool: 40 jobs")
    # the twin: no option, no key
    res = run_cli("queue", str(log), "--json", cwd=root)
    assert res.returncode == 1, res.stderr
    plain = json.loads(res.stdout)
    assert "option" not in plain and "contour" not in plain
    assert ev.subject(ev.load(Path(plain["evidence"]))) == ("queue", None)


def _with_cluster(path: Path, *clusters: str) -> Path:
    """The recorded sacct log with a Cluster column (the clusters taken in turn)."""
    lines = SACCT.read_text().splitlines()
    out = [lines[0] + "|Cluster"]
    out += [f"{line}|{clusters[i % len(clusters)]}" for i, line in enumerate(lines[1:])]
    path.write_text("\n".join(out) + "\n")
    return path


def test_a_sacct_log_states_its_scheduler_and_cluster(tmp_path: Path) -> None:
    """sacct prints Slurm's jobs: the contour's executor; its Cluster column, when the log
    holds one cluster, is the contour's cluster; a log of two names none."""
    root = _workspace(tmp_path / "ws")
    one = _with_cluster(tmp_path / "one.txt", "hpc-a")
    [run] = queue_runs(_command(root, [one]), option="owned-pool")
    assert run.figures["contour"]["executor"] == "slurm"
    assert run.figures["contour"]["cluster"] == "hpc-a"
    two = _with_cluster(tmp_path / "two.txt", "hpc-a", "hpc-b")
    [run] = queue_runs(_command(root, [two]), option="owned-pool")
    assert run.figures["contour"] == {**run.figures["contour"], "executor": "slurm", "cluster": ""}


@pytest.mark.parametrize(
    "option, words",
    [
        ("nope", "unknown option id 'nope'"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "masked"),
        ("", "unknown option id"),
    ],
)
def test_an_undeclared_option_is_refused_before_a_log_is_read(
    tmp_path: Path, option: str, words: str
) -> None:
    root = _workspace(tmp_path / "ws")
    missing = tmp_path / "no-such.csv"
    error = _refused(lambda: queue_runs(_command(root, [missing]), option=option))
    line = error.one_line()
    assert error.field == "--option" and words in line and "ghp_abc" not in line
    error = _refused(lambda: replay_run(_command(root, [missing]), option=option))
    assert error.field == "--option"
    assert not _records(root)


def test_undeclared_option_on_the_command_line_is_exit_2(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    res = run_cli("queue", str(tmp_path / "no-such.csv"), "--option", "nope", cwd=root)
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "'--option'" in res.stderr and "Traceback" not in res.stderr


def test_option_outside_a_workspace_says_where_options_are_declared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    log = _slow_evals(tmp_path / "evals.csv", n=3)
    command = LogCommand([log], evidence_dir=tmp_path / "evidence", as_json=True)
    error = _refused(lambda: queue_runs(command, option="x"))
    assert error.field == "--option" and "workspace" in error.one_line()
    [run] = queue_runs(command)
    assert run.option is None and run.written is not None


def test_a_vendors_log_counts_for_that_vendor_and_never_for_a_slurm_pool(tmp_path: Path) -> None:
    """A SageMaker job log named for the managed option: that vendor's start time (its
    contour is the vendor's). Named for the owned pool, which declares Slurm: refused."""
    root = _workspace(tmp_path / "ws")
    [run] = queue_runs(_command(root, SAGEMAKER), option="managed-endpoint")
    assert run.option == "managed-endpoint"
    assert run.figures["contour"]["executor"] == "vendor"
    assert run.figures["summary"]["jobs"] == 4
    assert not any("is read as the team's workload" in n for n in run.record.notes)
    with pytest.raises(InputError) as caught:
        queue_runs(_command(root, SAGEMAKER), option="owned-pool")
    assert caught.value.field == "--option"
    assert "sagemaker log comes from vendor" in caught.value.message
    assert not _records(root) or all(ev.subject(r)[1] != "owned-pool" for r in _records(root))


def test_a_vendors_log_without_an_option_says_what_it_does_not_measure(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    [run] = queue_runs(_command(root, SAGEMAKER))
    assert run.option is None
    assert any("(sagemaker) is read as the team's workload" in n for n in run.record.notes)
    # the twin: a Slurm log of the team's workload is no vendor's, nothing to say
    [plain] = queue_runs(_command(root, [SACCT]))
    assert not any("is read as the team's workload" in n for n in plain.record.notes)


# --- a workspace whose logs name several options ------------------------------------------


def _mixed(tmp_path: Path) -> Path:
    """Team's sacct log, SageMaker jobs of managed-endpoint, OpenAI jobs of rented-pool
    whose event lists name no option (they annotate whichever jobs they belong to)."""
    root = tmp_path / "ws"
    logs_dir = root / "logs"
    logs_dir.mkdir(parents=True)
    shutil.copy(SACCT, logs_dir / "sacct.txt")
    entries: list[dict[str, Any]] = [{"path": "logs/sacct.txt"}]
    for src in SAGEMAKER:
        shutil.copy(src, logs_dir / src.name)
        entries.append({"path": f"logs/{src.name}", "option": "managed-endpoint"})
    for src in sorted(OPENAI.glob("*.json")):
        shutil.copy(src, logs_dir / src.name)
        if src.name.endswith(".events.json"):
            entries.append({"path": f"logs/{src.name}"})
        else:
            entries.append({"path": f"logs/{src.name}", "option": "rented-pool"})
    return _workspace(root, entries)


def test_one_record_per_option_and_one_for_the_logs_of_none(tmp_path: Path) -> None:
    root = _mixed(tmp_path)
    res = run_cli("queue", "--json", cwd=root)
    assert res.returncode == 0, res.stderr
    records = json.loads(res.stdout)["records"]
    assert [r.get("option") for r in records] == [None, "managed-endpoint", "rented-pool"]
    by = {r.get("option"): r for r in records}
    assert by["managed-endpoint"]["summary"]["jobs"] == 4
    assert by["rented-pool"]["summary"]["jobs"] == 4
    # the OpenAI jobs found their events although the event lists name no option: the
    # "Fine-tuning job started" event gives a start
    assert by["rented-pool"]["summary"]["started"] >= 1
    # the team's record holds none of the vendors' jobs
    [team] = queue_runs(_command(root, [root / "logs" / "sacct.txt"]))
    assert by[None]["summary"]["jobs"] == team.figures["summary"]["jobs"]
    subjects = {ev.subject(r) for r in _records(root)}
    assert {("queue", None), ("queue", "managed-endpoint"), ("queue", "rented-pool")} <= subjects
    # people read a heading per record
    res = run_cli("queue", cwd=root)
    assert res.returncode == 0, res.stderr
    assert "queue of the team's workload (logs of no option):" in res.stdout
    assert "queue of option managed-endpoint:" in res.stdout
    assert "queue of option rented-pool:" in res.stdout
    assert res.stdout.count("evidence: ") == 3


def test_a_command_line_log_keeps_its_workspace_entrys_option(tmp_path: Path) -> None:
    root = _mixed(tmp_path)
    log = root / "logs" / SAGEMAKER[0].name
    [run] = queue_runs(_command(root, [log]))
    assert run.option == "managed-endpoint"
    # --option says otherwise: it wins (and is checked against the option's contour)
    [other] = queue_runs(_command(root, [log]), option="rented-pool")
    assert other.option == "rented-pool"


def test_nothing_is_written_when_one_group_cannot_be_read(tmp_path: Path) -> None:
    root = _mixed(tmp_path)
    (root / "logs" / SAGEMAKER[-1].name).write_text('{"TrainingJobName": 3}')
    res = run_cli("queue", cwd=root)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert not list((root / "evidence").glob("*.json"))


def test_replay_holds_every_log_and_names_one_option_only_when_all_share_it(
    tmp_path: Path,
) -> None:
    root = _mixed(tmp_path)
    run = replay_run(_command(root), gpus="8,16")
    assert "option" not in run.figures
    assert any("holds the jobs of every log together" in n for n in run.figures["notes"])
    assert not any("is read as the team's workload" in n for n in run.figures["notes"])
    one = replay_run(_command(root, SAGEMAKER), gpus="8,16", option="managed-endpoint")
    assert one.figures["option"] == "managed-endpoint"
    assert not any("every log together" in n for n in one.figures["notes"])
    assert replay_figures(one.record).model_dump(mode="json") == one.record.figures
    assert one.record.summary.startswith("option managed-endpoint: ")


# --- the decision reads it: the hard-SLO stop factor can fire ------------------------------


def _ctx(root: Path, hard: list[str]) -> RuleContext:
    ws = workspace.load(root)
    matrix = MatrixConfig.model_validate({**ws.config.matrix.model_dump(), "slo": {"hard": hard}})
    return RuleContext(ws.config.options, matrix)


def test_a_hard_slo_failed_on_the_options_own_log_stops_it(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    log = _slow_evals(tmp_path / "evals.csv")
    [run] = queue_runs(_command(root, [log]), option="managed-endpoint")
    urgent = next(s for s in run.figures["slo"] if s["name"] == "urgent")
    assert urgent["verdict"] == "fail" and urgent["conclusive"]
    found = queue_rules(run.record, _ctx(root, ["urgent"]))
    stops = [f for f in found if isinstance(f, StopFactor)]
    assert [(s.option, s.id) for s in stops] == [("managed-endpoint", "hard_slo_violated")]
    scores = [f for f in found if isinstance(f, Suggestion)]
    assert any(s.criterion == "queue" and s.score == 2 for s in scores)
    # twins: not a hard SLO (a score, no stop); the team's workload (no option: nothing)
    soft = queue_rules(run.record, _ctx(root, []))
    assert not [f for f in soft if isinstance(f, StopFactor)] and soft
    [plain] = queue_runs(_command(root, [log]))
    assert queue_rules(plain.record, _ctx(root, ["urgent"])) == []


def test_a_fast_queue_scores_the_option_and_stops_nothing(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    log = _slow_evals(tmp_path / "evals.csv", n=80, wait_min=5)  # 0 of 80: conclusive
    [run] = queue_runs(_command(root, [log]), option="managed-endpoint")
    found = queue_rules(run.record, _ctx(root, ["urgent"]))
    assert not [f for f in found if isinstance(f, StopFactor)]
    assert [f.score for f in found if isinstance(f, Suggestion)] == [5]


def test_an_unsettled_slo_scores_by_its_point_estimate(tmp_path: Path) -> None:
    """Ten jobs cannot settle the urgent SLO: the option's queue is scored from its own log
    (leaning fail 3, leaning pass 4) instead of staying an assumption; no stop."""
    root = _workspace(tmp_path / "ws")
    one_slow = _slow_evals(tmp_path / "one.csv", n=10, wait_min=5, slow=1)
    [run] = queue_runs(_command(root, [one_slow]), option="managed-endpoint")
    urgent = next(s for s in run.figures["slo"] if s["name"] == "urgent")
    assert urgent["verdict"] == "inconclusive" and urgent["point_estimate"] == "fail"
    found = queue_rules(run.record, _ctx(root, ["urgent"]))
    assert [f.score for f in found if isinstance(f, Suggestion)] == [3]
    assert not [f for f in found if isinstance(f, StopFactor)]
    quick = _slow_evals(tmp_path / "quick.csv", n=10, wait_min=5)
    [run] = queue_runs(_command(root, [quick]), option="managed-endpoint")
    assert [f.score for f in queue_rules(run.record, _ctx(root, []))] == [4]


# --- issue 27: a missing file names the setting --------------------------------------------


def test_a_missing_slo_file_names_queue_slo_and_how_to_go_without(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws", slo="slos/missing.yaml")
    log = _slow_evals(tmp_path / "evals.csv", n=3, wait_min=5)
    res = run_cli("queue", str(log), cwd=root)
    assert res.returncode == 2, res.stderr
    line = res.stderr.strip()
    assert line.count("\n") == 0 and "Traceback" not in line
    assert "gpudecide.yaml:" in line and "'queue.slo'" in line
    assert "'slos/missing.yaml'" in line and "queue.slo: null" in line
    error = _refused(lambda: replay_run(_command(root, [log])))
    assert error.field == "queue.slo" and error.line is not None
    assert str(error.path).endswith(workspace.CONFIG_NAME)
    # the twin: null goes without SLOs
    _workspace(tmp_path / "ws2", slo=None)
    [run] = queue_runs(_command(tmp_path / "ws2", [log]))
    assert run.figures["slo"] == []


def test_a_missing_workspace_log_names_its_entry(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws", [{"path": "logs/a.csv"}, {"path": "logs/gone.csv"}])
    (root / "logs").mkdir(exist_ok=True)
    _slow_evals(root / "logs" / "a.csv", n=3, wait_min=5)
    for run in (lambda: queue_runs(_command(root)), lambda: replay_run(_command(root))):
        error = _refused(run)
        assert error.field == "logs.1.path" and "'logs/gone.csv'" in error.one_line()
        assert "remove this entry from logs" in error.one_line()
    # a dangling link is as missing as no file
    (root / "logs" / "gone.csv").symlink_to(root / "logs" / "nowhere.csv")
    assert _refused(lambda: queue_runs(_command(root))).field == "logs.1.path"
    (root / "logs" / "gone.csv").unlink()
    shutil.copy(root / "logs" / "a.csv", root / "logs" / "gone.csv")
    assert len(queue_runs(_command(root))) == 1


def test_a_missing_slo_flag_file_names_the_flag(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    log = _slow_evals(tmp_path / "evals.csv", n=3)
    error = _refused(lambda: queue_runs(_command(root, [log]), slo=tmp_path / "none.yaml"))
    assert error.field == "--slo" and "queue.slo" in error.one_line()


def test_an_unknown_replay_slo_names_where_it_was_set(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    config = yaml.safe_load((root / workspace.CONFIG_NAME).read_text())
    config["replay"]["slo"] = "fast"
    (root / workspace.CONFIG_NAME).write_text(yaml.safe_dump(config, sort_keys=False))
    log = _slow_evals(tmp_path / "evals.csv", n=3)
    error = _refused(lambda: replay_run(_command(root, [log])))
    assert error.field == "replay.slo" and error.line is not None
    error = _refused(lambda: replay_run(_command(root, [log]), slo_name="fast"))
    assert error.field == "--slo-name" and error.path is None
    run = replay_run(_command(root, [log]), slo_name="urgent", gpus="2")
    assert run.figures["slo"]["name"] == "urgent"
