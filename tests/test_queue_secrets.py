"""No credential from a job log or slo.yaml reaches the queue record, its --json or its
lines (issue 28: "a credential in a job log reaches the queue evidence and the archived
report.json"). Text from the log is masked where it enters the record, by the one redaction
every archive uses (`gpudecide.redact`); names that only look long stay whole.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from gpudecide import evidence as ev
from gpudecide.jobs.load import load_logs
from gpudecide.queue.analysis import QueueOptions, analyse_queue, queue_evidence
from gpudecide.queue.slo import SLOFile

from .conftest import run_cli
from .logs import job, write_csv

T0 = datetime(2026, 7, 27, 8, tzinfo=UTC)

# One of each class the redaction knows, as a team might paste it into a job name, a
# Slurm reason, a chain label or an SLO's description.
SECRETS = {
    "github": "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "huggingface": "hf_abcdefghijklmnopqrstuvwxyz012345",
    "aws": "AKIAABCDEFGHIJKLMNOP",
    "openai": "sk-proj-abcdefghijklmnopqrstuvwx0123",
}
ASSIGNED = "hunter2-very-secret"
KEPT = {
    "name": "llm-a-r3-train-20260727-lora-rank16",
    "digest": "3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea",
}


def _log(path: Path) -> Path:
    rows = []
    names = [
        f"train --hf-token {SECRETS['huggingface']}",
        f"eval password={ASSIGNED}",
        f"export GITHUB={SECRETS['github']}",
        KEPT["name"],
        f"merge-{KEPT['digest']}",
    ]
    for i, name in enumerate(names):
        submit = T0 + timedelta(hours=i)
        rows.append(
            job(
                str(i + 1),
                name,
                1,
                (submit + timedelta(minutes=40)).isoformat(),
                (submit + timedelta(hours=1)).isoformat(),
                submit=submit.isoformat(),
                eligible=submit.isoformat(),
                wait_reason=f"Resources aws_secret_access_key={SECRETS['aws']}",
                chain_id=f"ft-{SECRETS['openai']}" if i == 0 else "ft-a",
            )
        )
    return write_csv(path, rows)


def _slos() -> dict[str, object]:
    urgent = {
        "description": f"fixes; pager token: {SECRETS['github']}",
        "threshold_minutes": 30,
        "allowed_violation_share": 0.05,
    }
    return {"slos": {"normal": {**urgent, "threshold_minutes": 240}, "urgent": urgent}}


def _leaks(text: str) -> list[str]:
    return [s for s in [*SECRETS.values(), ASSIGNED] if s in text]


def test_the_record_holds_no_credential_of_the_log(tmp_path: Path) -> None:
    options = QueueOptions(slos=SLOFile.model_validate(_slos()))
    figures = analyse_queue(load_logs([_log(tmp_path / "log.csv")]), options)
    said = json.dumps(figures)
    assert _leaks(said) == []
    # what is not a credential stays as written: a long dashed name, a digest
    assert KEPT["name"] in said and KEPT["digest"] in said
    names = {j["job_id"]: j["name"] for j in figures["jobs"]}
    assert names["1"] == "train --hf-token hf_***"
    assert names["2"] == "eval password=***"
    path = ev.write(queue_evidence(figures, []), tmp_path / "evidence")
    assert _leaks(path.read_text()) == []
    # the record read back is what was analysed: nothing masked only on the way to disk
    assert ev.load(path).figures == figures


def test_neither_json_nor_the_lines_printed_hold_one(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.csv")
    slo = tmp_path / "slo.yaml"
    slo.write_text(yaml.safe_dump(_slos()))
    out = tmp_path / "evidence"
    for extra in (["--json"], []):
        res = run_cli("queue", str(log), "--slo", str(slo), "--evidence-dir", str(out), *extra)
        assert res.returncode in (0, 1), res.stderr
        assert _leaks(res.stdout + res.stderr) == []
    assert all(_leaks(p.read_text()) == [] for p in out.glob("*.json"))


@pytest.mark.parametrize("secret", sorted(SECRETS))
def test_a_credential_given_as_an_option_is_never_echoed(tmp_path: Path, secret: str) -> None:
    """--option is text from the command line: an unknown one that is a token is not
    quoted in the error line, nor are --gpus, --policy and --window values."""
    from gpudecide import workspace
    from gpudecide.errors import InputError
    from gpudecide.jobs.log_command import LogCommand
    from gpudecide.queue.runs import queue_runs, replay_run

    workspace.init(tmp_path / "ws")
    command = LogCommand([_log(tmp_path / "l.csv")], workspace_dir=tmp_path / "ws")
    token = SECRETS[secret]
    calls = [
        lambda: queue_runs(command, option=token),
        lambda: replay_run(command, gpus=token),
        lambda: replay_run(command, policy=token),
        lambda: replay_run(command, window=token),
        lambda: replay_run(command, slo_name=token),
    ]
    for call in calls:
        with pytest.raises(InputError) as caught:
            call()
        assert _leaks(caught.value.one_line()) == [], caught.value.one_line()
