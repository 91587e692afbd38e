"""Secrets in logs (SPEC I3): real-shaped fake credentials are found at file:line and their
values never appear in any output, JSON, evidence record or report."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.governance import checks, rules, secrets
from gpudecide.governance.cli import register
from gpudecide.governance.report import governance_section
from gpudecide.governance.secrets import SecretsFigures
from gpudecide.i18n import speaking
from gpudecide.report.model import Section

from .governance_fixtures import demo_workspace

# Fake, never-issued values in the shapes the detectors know (built from parts so that this
# source file itself does not look like it leaks anything).
AWS_KEY = "AKIA" + "Z7Q3JX4M5N6P7R2T"
URL_PASSWORD = "Xk9pLm" + "Q2vR7tW3zB"
PEM_BODY = "MIIEpAIBAAKCAQEA" + "x3q9Lr7kTzW2vB8nYc4dPfGhJ"
SECRETS = (AWS_KEY, URL_PASSWORD, PEM_BODY)


def _plant(folder: Path) -> Path:
    log = folder / "logs" / "job-41902.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(
        "\n".join(
            [
                "2026-06-01 10:00:01 starting training step=0",
                f"2026-06-01 10:00:02 env AWS_ACCESS_KEY_ID={AWS_KEY}",
                f"2026-06-01 10:00:03 dataset url=postgres://trainer:{URL_PASSWORD}@db.internal:5432/ds",
                "2026-06-01 10:00:04 loading key:",
                "-----BEGIN RSA PRIVATE KEY-----",
                PEM_BODY,
                "-----END RSA PRIVATE KEY-----",
                "2026-06-01 10:05:00 step=100 loss=1.92",
            ]
        )
        + "\n"
    )
    return log


def _clean(folder: Path) -> Path:
    log = folder / "clean.log"
    log.write_text("step=1 loss=2.0\nstep=2 loss=1.9\ncheckpoint saved to s3://bucket/ckpt-2\n")
    return log


def _app() -> typer.Typer:
    app = typer.Typer(pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """Test shell."""

    register(app)
    return app


def _no_secret(text: str) -> None:
    for value in SECRETS:
        assert value not in text
    assert "Xk9p" not in text and "Z7Q3" not in text


def test_planted_credentials_found_at_their_lines(tmp_path: Path) -> None:
    _plant(tmp_path)
    result = secrets.scan([tmp_path / "logs"], root=tmp_path)
    found = {(f.params["line"], f.params["type"]) for f in result.findings}
    assert (2, "AWS Access Key") in found
    assert (3, "Basic Auth Credentials") in found
    assert (5, "Private Key") in found
    assert all(f.params["path"] == "logs/job-41902.log" for f in result.findings)
    _no_secret(result.figures.model_dump_json())


def test_clean_log_has_no_finding(tmp_path: Path) -> None:
    result = secrets.scan([_clean(tmp_path)])
    assert result.findings == [] and result.figures.files_scanned == 1


def test_cli_masks_values_in_text_json_and_evidence(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    workspace.init(root)
    log = _plant(root)
    runner = CliRunner()
    res = runner.invoke(_app(), ["check", "secrets", str(log), "-w", str(root)])
    assert res.exit_code == 1, res.output
    assert "logs/job-41902.log:2: AWS Access Key (value masked)" in res.output
    _no_secret(res.output)
    res = runner.invoke(_app(), ["check", "secrets", str(log), "-w", str(root), "--json"])
    assert res.exit_code == 1
    body = json.loads(res.stdout)
    assert body["secrets"] >= 3 and body["findings"][0]["masked"] == "********"
    _no_secret(res.stdout)
    record_path = Path(body["evidence"])
    _no_secret(record_path.read_text())
    record = ev.load(record_path)
    section = Section("secrets", "", record, "fresh", "", [])
    with speaking("ru"):
        governance_section(section)
    _no_secret(json.dumps([t.rows for t in section.tables], ensure_ascii=False))


def test_cli_clean_exits_zero_outside_a_workspace(tmp_path: Path) -> None:
    log = _clean(tmp_path)
    res = CliRunner().invoke(_app(), ["check", "secrets", str(log), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["secrets"] == 0


def test_missing_path_is_bad_input(tmp_path: Path) -> None:
    res = CliRunner().invoke(_app(), ["check", "secrets", str(tmp_path / "nope.log")])
    assert res.exit_code == 2
    assert "nope.log" in res.output and "Traceback" not in res.output


def test_option_scores_isolation(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path / "ws")
    log = _plant(ws.root)
    run = checks.run_secrets([log], ws, "managed-ft")
    assert run.record.figures["option"] == "managed-ft"
    # The model holds the record as written, the option included (absent without one).
    figures = SecretsFigures.model_validate(run.record.figures)
    assert figures.option == "managed-ft"
    assert figures.model_dump(mode="json") == run.record.figures
    out = rules.rules(run.record)
    assert [(s.option, s.criterion, s.score) for s in out] == [("managed-ft", "isolation", 2)]  # type: ignore[union-attr]
    clean = checks.run_secrets([_clean(tmp_path)], ws, "managed-ft")
    assert rules.rules(clean.record) == []
    unowned = checks.run_secrets([_clean(tmp_path)], ws)
    assert "option" not in unowned.record.figures
    figures = SecretsFigures.model_validate(unowned.record.figures)
    assert figures.option is None
    assert figures.model_dump(mode="json") == unowned.record.figures
