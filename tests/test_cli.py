"""The command line as a user runs it: real process, exit codes, one-line errors, --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudecide import __version__

from .conftest import SACCT, run_cli

PROFILE_KEYS = {
    "jobs_total",
    "attempts_total",
    "jobs_by_kind",
    "trainings_successful",
    "restarts",
    "gpu_hours_total",
    "gpu_hours_by_kind",
    "peak_concurrent_gpus",
    "busy_share",
    "weeks",
    "burstiness",
    "predictability",
    "skipped_rows",
    "never_started",
}


def test_version() -> None:
    res = run_cli("--version")
    assert res.returncode == 0 and res.stdout.strip() == f"gpudecide {__version__}"


def test_profile_json_interface(tmp_path: Path, scenario: dict) -> None:
    res = run_cli(
        "profile",
        str(SACCT / "scenario.utc.txt"),
        "--weeks",
        "1",
        "--pool-gpus",
        "2",
        "--json",
        "--evidence-dir",
        str(tmp_path / "ev"),
    )
    assert res.returncode == 0, res.stderr
    body = json.loads(res.stdout)
    assert body.keys() >= PROFILE_KEYS
    roles = scenario["roles"]
    ran_gpu = [r for r in roles.values() if r.get("ran") and r.get("gpus")]
    tasks = roles["array_sweep"]["tasks"]
    assert "ran" not in roles["array_sweep"]
    assert body["jobs_total"] == len(ran_gpu) + tasks  # the array is `tasks` jobs
    assert body["attempts_total"] == body["jobs_total"] + 1  # one requeue
    assert body["never_started"] == 1
    assert body["restarts"] == 1
    assert body["peak_concurrent_gpus"] == 2  # the node has two GPUs
    assert body["busy_share"] is not None
    assert len(body["weeks"]) == 1
    record = json.loads(Path(body["evidence"]).read_text())
    assert record["kind"] == "profile" and record["figures"]["jobs_total"] == body["jobs_total"]
    assert record["inputs"][0]["sha256"]


def test_profile_human_output_and_tz(tmp_path: Path) -> None:
    res = run_cli(
        "profile",
        str(SACCT / "scenario.almaty.txt"),
        "--tz",
        "Asia/Almaty",
        "--weeks",
        "1",
        "--evidence-dir",
        str(tmp_path),
    )
    assert res.returncode == 0, res.stderr
    assert "GPU jobs in all" in res.stdout and "predictability:" in res.stdout
    assert "WAPE" in res.stdout and "bursty at >=" in res.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["profile", "/nonexistent/sacct.txt"], "/nonexistent/sacct.txt: no such file"),
        (["profile", str(SACCT / "scenario.noheader.txt")], "--sacct-format"),
        (["profile", str(SACCT / "scenario.utc.txt"), "--tz", "Mars/Base"], "unknown time zone"),
        (["profile", str(SACCT / "scenario.utc.txt"), "--until", "yesterday"], "--until"),
        (["profile", str(SACCT / "scenario.utc.txt"), "--format", "xml"], "--format"),
        (["profile", str(SACCT)], "is a directory"),
        (["report", "--workspace", "/nonexistent"], "no gpudecide.yaml"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, args: list[str], words: str) -> None:
    res = (
        run_cli(*args, "--evidence-dir", str(tmp_path)) if args[0] == "profile" else run_cli(*args)
    )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr + res.stdout
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0]
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_bad_input_json_mode(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text((SACCT / "scenario.utc.txt").read_text().replace("COMPLETED", "DONE", 1))
    res = run_cli("profile", str(bad), "--json", "--evidence-dir", str(tmp_path / "ev"))
    assert res.returncode == 2
    body = json.loads(res.stdout)
    assert body["path"] == str(bad) and body["line"] == 2 and body["field"] == "State"
    assert not (tmp_path / "ev").exists()


def test_usage_error_is_exit_2() -> None:
    res = run_cli("profile", "--weeks", "zero")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--weeks" in lines[0] and res.stdout == ""


def test_replay_is_the_same_every_run(tmp_path: Path) -> None:
    """Issue 14 item 11: same inputs, same figures and the same record id, run after run."""
    from typer.testing import CliRunner

    from gpudecide.cli import app

    runner = CliRunner()
    seen = set()
    for i in range(12):
        res = runner.invoke(
            app,
            [
                "replay",
                str(SACCT / "scenario.utc.txt"),
                "--gpus",
                "1,2",
                "--policy",
                "backfill",
                "--json",
                "--evidence-dir",
                str(tmp_path / f"ev{i}"),
            ],
        )
        assert res.exit_code == 0, res.output
        body = json.loads(res.stdout)
        seen.add((Path(body.pop("evidence")).name, json.dumps(body, sort_keys=True)))
    assert len(seen) == 1


def test_init_profile_report_evidence_in_a_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    (ws / "logs" / "sacct-8w.txt").write_text((SACCT / "scenario.utc.txt").read_text())
    res = run_cli("profile", "--json", cwd=ws)
    assert res.returncode == 0, res.stderr
    assert Path(json.loads(res.stdout)["evidence"]).parent == ws / "evidence"
    ok = run_cli("evidence", "--json", cwd=ws)
    assert ok.returncode == 0 and json.loads(ok.stdout)["all_fresh"] is True
    rep = run_cli("report", "--json", cwd=ws)
    assert rep.returncode == 0
    paths = json.loads(rep.stdout)
    assert "Workload profile" in Path(paths["html"]).read_text()
    # a changed log makes the evidence stale: exit 1 (a check failed) and the report says so
    with open(ws / "logs" / "sacct-8w.txt", "a") as handle:
        handle.write("\n")
    stale = run_cli("evidence", "--json", cwd=ws)
    assert stale.returncode == 1 and json.loads(stale.stdout)["records"][0]["freshness"] == "stale"
    run_cli("report", cwd=ws)
    assert "STALE" in (ws / "report" / "index.html").read_text()


def test_columns() -> None:
    res = run_cli("columns", "--json")
    assert res.returncode == 0
    assert {"job_id", "gpu_count", "state", "first_step"} <= json.loads(res.stdout).keys()


QUEUE_JOB_KEYS = {
    "job_id",
    "attempts",
    "queue_wait_s",
    "submit_to_start_s",
    "dependency_wait_s",
    "startup_s",
    "state",
    "wait_reason",
}


def _slo_file(tmp_path: Path, normal_minutes: float = 5, allowed: float = 0.5) -> Path:
    path = tmp_path / "slo.yaml"
    path.write_text(
        "slos:\n"
        f"  normal:\n    threshold_minutes: {normal_minutes}\n"
        f"    allowed_violation_share: {allowed}\n"
        "  urgent:\n    threshold_minutes: 1\n    allowed_violation_share: 0.5\n"
        "    selector:\n      kinds: [eval]\n"
    )
    return path


def test_queue_json_interface(tmp_path: Path, scenario: dict) -> None:
    res = run_cli(
        "queue",
        str(SACCT / "scenario.utc.txt"),
        "--json",
        "--slo",
        str(_slo_file(tmp_path)),
        "--evidence-dir",
        str(tmp_path / "ev"),
    )
    assert res.returncode == 0, res.stderr
    body = json.loads(res.stdout)
    assert {
        "jobs",
        "summary",
        "phases",
        "wait_reasons",
        "slo",
        "preemption",
        "chains",
    } <= body.keys()
    jobs = {j["job_id"]: j for j in body["jobs"]}
    for job in jobs.values():
        assert job.keys() >= QUEUE_JOB_KEYS
    roles = scenario["roles"]
    requeued = jobs[roles["requeued"]["job_id"]]
    assert requeued["attempts"] == 2
    held = jobs[roles["held_cancel"]["job_id"]]
    assert held["start"] is None and held["queue_wait_s"] is None  # Eligible was Unknown
    dep = jobs[roles["eval_dep"]["job_id"]]
    assert dep["wait_reason"] == "Dependency" and dep["dependency_wait_s"] > 0
    assert body["summary"]["slo_verdicts"]["normal"] == "pass"
    chains = {c["chain"] for c in body["chains"]}
    assert roles["train_ok"]["chain"] in chains
    record = json.loads(Path(body["evidence"]).read_text())
    assert record["kind"] == "queue" and len(record["inputs"]) == 2  # the log and slo.yaml


def test_queue_failed_slo_is_exit_1(tmp_path: Path) -> None:
    res = run_cli(
        "queue",
        str(SACCT / "scenario.utc.txt"),
        "--slo",
        str(_slo_file(tmp_path, normal_minutes=0.01, allowed=0.0)),
        "--evidence-dir",
        str(tmp_path / "ev"),
    )
    assert res.returncode == 1, res.stderr
    assert "SLO normal: fail" in res.stdout


def test_replay_json_and_auto(tmp_path: Path) -> None:
    log = str(SACCT / "scenario.utc.txt")
    res = run_cli("replay", log, "--gpus", "1,2", "--json", "--evidence-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    body = json.loads(res.stdout)
    assert [p["gpus"] for p in body["pools"]] == [1, 2]
    one, two = body["pools"]
    assert one["jobs_unplaceable"] == 1  # the 2-GPU training cannot run on 1 GPU
    assert two["jobs_unplaceable"] == 0 and body["largest_job_gpus"] == 2
    auto = run_cli(
        "replay",
        log,
        "--gpus",
        "auto",
        "--slo",
        str(_slo_file(tmp_path, 60, 0.0)),
        "--json",
        "--evidence-dir",
        str(tmp_path),
    )
    assert auto.returncode == 0, auto.stderr
    assert json.loads(auto.stdout)["recommended_gpus"] == 2


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--gpus", "auto"], "--gpus auto needs an SLO"),
        (["--gpus", "eight"], "--gpus"),
        (["--gpus", "2", "--policy", "lottery"], "--policy"),
        (["--gpus", "2", "--window", "month"], "--window"),
    ],
)
def test_replay_bad_options(tmp_path: Path, args: list[str], words: str) -> None:
    res = run_cli("replay", str(SACCT / "scenario.utc.txt"), *args, "--evidence-dir", str(tmp_path))
    assert res.returncode == 2 and words in res.stderr and "Traceback" not in res.stderr


def test_bad_slo_file_names_line_and_field(tmp_path: Path) -> None:
    slo = tmp_path / "slo.yaml"
    slo.write_text(
        "slos:\n  normal:\n    threshold_minutes: -5\n    allowed_violation_share: 0.1\n"
        "  urgent:\n    threshold_minutes: 5\n    allowed_violation_share: 0.1\n"
    )
    res = run_cli(
        "queue",
        str(SACCT / "scenario.utc.txt"),
        "--slo",
        str(slo),
        "--evidence-dir",
        str(tmp_path / "ev"),
    )
    assert res.returncode == 2
    assert f"{slo}:3: field 'slos.normal.threshold_minutes'" in res.stderr
    slo.write_text("slos:\n  normal:\n    threshold_minutes: 5\n    allowed_violation_share: 0.1\n")
    res = run_cli(
        "queue",
        str(SACCT / "scenario.utc.txt"),
        "--slo",
        str(slo),
        "--evidence-dir",
        str(tmp_path / "ev"),
    )
    assert res.returncode == 2 and "urgent" in res.stderr
