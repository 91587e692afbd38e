"""SLO verdicts the interval supports (issue 9 items 11, 12, 14) and the queue's CLI output.

Logs are canonical CSV job logs (tests/logs.py) and the real sacct regression recording;
every figure asserted is worked out by hand in the comment beside it.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from gpudecide.jobs.cli import register as register_jobs
from gpudecide.jobs.load import load_logs
from gpudecide.queue.analysis import QueueOptions, analyse_queue, queue_evidence
from gpudecide.queue.cli import register as register_queue
from gpudecide.queue.slo import SLO, SLOFile

from .conftest import SACCT
from .logs import job, write_csv


def _rows(waits_min: list[int], reason: str = "Resources", first: int = 100) -> list[Any]:
    """One job per wait: submitted (and eligible) at 00:00 on day i, started waits_min later."""
    rows = []
    for i, wait in enumerate(waits_min):
        day = (date(2026, 9, 1) + timedelta(days=i)).isoformat()
        rows.append(
            job(
                str(first + i),
                "ft-train",
                1,
                f"{day}T{wait // 60:02d}:{wait % 60:02d}:00Z",
                f"{day}T20:00:00Z",
                submit=f"{day}T00:00:00Z",
                eligible=f"{day}T00:00:00Z",
                wait_reason=reason if wait else "",
            )
        )
    return rows


def _log(tmp_path: Path, waits_min: list[int]) -> Path:
    return write_csv(tmp_path / "jobs.csv", _rows(waits_min))


def _slo(path: Path, allowed: float = 0.1) -> dict[str, Any]:
    slos = SLOFile(
        slos={
            "normal": SLO(threshold_minutes=60, allowed_violation_share=allowed),
            "urgent": SLO(threshold_minutes=600, allowed_violation_share=allowed),
        }
    )
    figures = analyse_queue(load_logs([path]), QueueOptions(slos=slos))
    normal: dict[str, Any] = figures["slo"][0]
    return normal


def test_no_violation_in_20_jobs_is_inconclusive_against_10_percent(tmp_path: Path) -> None:
    # 0/20: Wilson 95 % interval 0.0-16.1 % holds 10 %; at 0 % the upper bound is
    # z^2 / (n + z^2), below 10 % from n = 35 on: 15 more jobs
    s = _slo(_log(tmp_path, [5] * 20))
    assert s["verdict"] == "inconclusive" and s["conclusive"] is False
    assert s["point_estimate"] == "pass"
    assert s["more_jobs_to_settle"] == 15
    assert "cannot tell" in s["why"]


def test_boundary_35_jobs_settle_it(tmp_path: Path) -> None:
    s = _slo(_log(tmp_path, [5] * 35))  # 0/35: upper bound 9.9 % < 10 %
    assert (s["verdict"], s["conclusive"], s["more_jobs_to_settle"]) == ("pass", True, None)
    s = _slo(_log(tmp_path, [5] * 34))  # 0/34: upper bound 10.2 %: one job short
    assert (s["verdict"], s["more_jobs_to_settle"]) == ("inconclusive", 1)


def test_fail_needs_the_whole_interval_above(tmp_path: Path) -> None:
    s = _slo(_log(tmp_path, [90] * 3 + [5] * 7))  # 3/10: interval 10.8-60.3 %
    assert (s["verdict"], s["conclusive"]) == ("fail", True)
    s = _slo(_log(tmp_path, [90] * 1 + [5] * 9))  # 1/10 = 10 %: interval 1.8-40.4 %
    assert s["verdict"] == "inconclusive" and s["point_estimate"] == "pass"
    assert s["more_jobs_to_settle"] is None  # a share equal to the allowed one never settles


def test_inconclusive_reaches_evidence_cli_and_report(tmp_path: Path) -> None:
    path = _log(tmp_path, [5] * 20)
    slo_file = tmp_path / "slo.yaml"
    slo_file.write_text(
        "slos:\n  normal:\n    threshold_minutes: 60\n    allowed_violation_share: 0.1\n"
        "  urgent:\n    threshold_minutes: 600\n    allowed_violation_share: 0.1\n"
    )
    app = typer.Typer()
    register_queue(app)
    result = CliRunner().invoke(
        app, ["queue", str(path), "--slo", str(slo_file), "--evidence-dir", str(tmp_path / "ev")]
    )
    assert result.exit_code == 0, result.output
    assert "SLO normal: inconclusive" in result.output
    assert "point estimate pass" in result.output and "15 more jobs" in result.output
    assert "SLO normal: pass" not in result.output
    record = json.loads(next((tmp_path / "ev").rglob("*.json")).read_text())
    normal = record["figures"]["slo"][0]
    assert (normal["verdict"], normal["conclusive"]) == ("inconclusive", False)
    assert record["verdict"] == "warn"
    assert record["figures"]["summary"]["slo_verdicts"]["normal"] == "inconclusive"


def test_own_limits_apart_from_capacity(tmp_path: Path) -> None:
    rows = _rows([90, 90, 90], "JobArrayTaskLimit") + _rows([90, 90], "Resources", first=200)
    s = _slo(write_csv(tmp_path / "both.csv", rows))
    assert s["violations"] == 5
    assert s["violations_by_cause"] == {
        "capacity": 2,
        "own_limits": 3,
        "team_choice": 0,
        "other": 0,
    }
    assert "3 of the violations waited on the team's own limits" in s["why"]


def test_queue_lists_skipped_rows_and_prints_the_reconciliation(tmp_path: Path) -> None:
    lines = (SACCT / "regression.utc.txt").read_text().splitlines()
    head = lines[0].split("|")
    i = next(n for n, ln in enumerate(lines) if ln.startswith("10|"))
    parts = lines[i].split("|")
    parts[head.index("State")] = "EXPLODED"
    lines[i] = "|".join(parts)
    path = tmp_path / "s.txt"
    path.write_text("\n".join(lines) + "\n")
    app = typer.Typer()
    register_queue(app)
    register_jobs(app)
    args = [str(path), "--skip-bad-rows", "--evidence-dir", str(tmp_path / "ev")]
    queue = CliRunner().invoke(app, ["queue", *args])
    assert queue.exit_code == 0, queue.output
    assert f"{path}:{i + 1}: State state 'EXPLODED'" in queue.output
    line = "9 jobs in the log: 8 GPU jobs, 0 CPU-only, 0 without GPU information, 1 never started"
    assert line in queue.output
    profile = CliRunner().invoke(app, ["profile", *args, "--weeks", "1"])
    assert profile.exit_code == 0, profile.output
    assert line in profile.output
    assert "GPU counts of started attempts: 9 from AllocTRES" in profile.output


@pytest.mark.parametrize(
    ("option", "words"),
    [
        (["--until", "0001-01-01T00:00:00"], "outside 2000-2099"),
        (["--weeks", "100000000"], "outside 1-1040"),
        (["--weeks", "0"], "outside 1-1040"),
    ],
)
def test_profile_window_out_of_range_is_one_line(option: list[str], words: str) -> None:
    app = typer.Typer()
    register_jobs(app)
    result = CliRunner().invoke(app, ["profile", str(SACCT / "regression.utc.txt"), *option])
    assert result.exit_code == 2
    assert words in result.output and option[0] in result.output
    assert "Traceback" not in result.output


def test_profile_accepts_the_longest_window() -> None:
    app = typer.Typer()
    register_jobs(app)
    result = CliRunner().invoke(
        app, ["profile", str(SACCT / "regression.utc.txt"), "--weeks", "1040", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["window"]["weeks"] == 1040


def test_conclusive_verdicts_stay_pass(tmp_path: Path) -> None:
    slos = SLOFile(
        slos={
            "normal": SLO(threshold_minutes=60, allowed_violation_share=0.1),
            "urgent": SLO(threshold_minutes=600, allowed_violation_share=0.1),
        }
    )
    figures = analyse_queue(load_logs([_log(tmp_path, [5] * 40)]), QueueOptions(slos=slos))
    assert figures["summary"]["slo_verdicts"] == {"normal": "pass", "urgent": "pass"}
    # one priority level is a finding (Q4): the record warns for it, not for the SLOs
    record = queue_evidence(figures, [])
    assert record.verdict == "warn"
    assert not any("cannot tell" in n for n in record.notes)
