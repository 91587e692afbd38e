"""Secrets in logs (SPEC I3): real-shaped fake credentials are found at file:line and their
values never appear in any output, JSON, evidence record or report."""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.governance import checks, rules, secrets
from gpudecide.governance.cli import register
from gpudecide.governance.report import governance_section
from gpudecide.governance.secrets import SecretsFigures
from gpudecide.i18n import speaking
from gpudecide.report.model import Section

from .conftest import examples
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


# --- every syntax a credential is written in, on real-format files ---------------------------

TOKEN = "Zq8vR2mX9kL4pT7w" + "Nd3cF6hJ"  # 24 characters, letters and digits
HF = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456"
GH_FINE = "github_pat_" + "11ABCDEFG0123456789_" + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ012345"
OPENAI = "sk-proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0"
ANTHROPIC = "sk-ant-api03-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9"
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzQ8x4Kd7"
PLANTED = (TOKEN, HF, GH_FINE, OPENAI, ANTHROPIC, GOOGLE, AWS_SECRET)

# (file name, content, the line of each credential): the formats a team's logs and configs
# come in, with names that say nothing of their format (a credentials file, a .env).
REAL_FILES: list[tuple[str, str, list[int]]] = [
    (
        "train.sh",
        "#!/bin/sh\nset -eu\n"
        f"export HF_TOKEN={HF}\n"
        f"export WANDB_API_KEY={TOKEN}\n"
        "python train.py --max_tokens 4096 --tokenizer meta-llama/Llama-3-8B\n",
        [3, 4],
    ),
    (
        "credentials",  # ~/.aws/credentials: INI without an extension
        "[default]\naws_access_key_id = AKIA" + "Z7Q3JX4M5N6P7R2T\n"
        f"aws_secret_access_key = {AWS_SECRET}\nregion = eu-central-1\n",
        [2, 3],
    ),
    (".env", f"DB_HOST=db.internal\nDB_PASSWORD={TOKEN}\nOPENAI_API_KEY={OPENAI}\n", [2, 3]),
    (
        "config.toml",
        f'[hub]\ntoken = "{HF}"\n[db]\nuser = "trainer"\npassword = "{TOKEN}"\n',
        [2, 5],
    ),
    (
        "values.yaml",
        f"wandb:\n  api_key: {TOKEN}\nanthropic:\n  key_file: /run/secrets/anthropic\n"
        f"  apiKey: {ANTHROPIC}\n",
        [2, 5],
    ),
    (
        "config.json",
        '{"auths": {"registry.internal": {"auth": "' + TOKEN + '"}}, "google": "' + GOOGLE + '"}\n',
        [1],
    ),
    (
        ".netrc",
        f"machine huggingface.co\nlogin trainer\npassword {TOKEN}\n",
        [3],
    ),
    (
        "job-77.log",
        "2026-06-01 10:00:01 step=0 loss=2.31 tokens_per_second=4000\n"
        f"2026-06-01 10:00:02 curl -H 'Authorization: Bearer {TOKEN}' https://api.internal/v1\n"
        f"2026-06-01 10:00:03 fetch https://data.internal/set.jsonl?token={TOKEN}&part=1\n"
        f"2026-06-01 10:00:04 redis://:{TOKEN}@cache.internal:6379/0\n"
        f"2026-06-01 10:00:05 git clone https://x-access-token:{GH_FINE}@github.com/o/r\n"
        f"2026-06-01 10:00:06 huggingface-cli login --token {HF}\n"
        "2026-06-01 10:05:00 step=100 loss=1.92 max_tokens=512\n",
        [2, 3, 4, 5, 6],
    ),
]


@pytest.mark.parametrize(("name", "content", "lines"), REAL_FILES, ids=[f[0] for f in REAL_FILES])
def test_credentials_in_real_format_files(
    tmp_path: Path, name: str, content: str, lines: list[int]
) -> None:
    path = tmp_path / name
    path.write_text(content)
    result = secrets.scan([path], root=tmp_path)
    assert sorted({int(f.params["line"]) for f in result.findings}) == lines
    dumped = result.figures.model_dump_json()
    for value in PLANTED:
        assert value not in dumped and value[:12] not in dumped


# Lines that hold no credential: ML logs, placeholders, references to a secret, paths, code.
CLEAN_LINES = [
    "step=100 loss=1.92 max_tokens=512 tokens_per_second=4000",
    "tokenizer=meta-llama/Llama-3-8B pad_token: <pad> eos_token: </s>",
    "export HF_TOKEN=$HF_TOKEN",
    "password: ${{ secrets.DB_PASSWORD }}",
    'api_key: "<your-api-key>"',
    "token: ********",
    "secret: null",
    "auth: enabled",
    "password_file=/run/secrets/db-password",
    "token_url=https://auth.internal/oauth2/token",
    "token = session.get_token()",
    "sha256: " + "e3b0c442" * 8,
    "checkpoint saved to s3://bucket/ckpt-2",
    "postgres://trainer:${PGPASSWORD}@db.internal/ds",
    "the password is rotated every 90 days",
]


@pytest.mark.parametrize("line", CLEAN_LINES)
def test_no_credential_in_clean_lines(line: str, tmp_path: Path) -> None:
    """The twins: nothing in a line a real log or config holds without a secret."""
    assert secrets.find_in_line(line) == []
    path = tmp_path / "clean.log"
    path.write_text(line + "\n")
    assert secrets.scan([path]).findings == []


SYNTAXES = [
    "{key}={value}",
    "export {key}={value}",
    "export {key}='{value}'",
    "set {key}={value}",
    "setenv {key} {value}",
    "{key} = {value}",
    '{key} = "{value}"',
    "{key}: {value}",
    '"{key}": "{value}"',
    "--{key} {value}",
    "--{key}={value}",
    "{{'{key}': '{value}'}}",
    "https://api.internal/v1?{key}={value}&x=1",
]
KEYS = [
    "HF_TOKEN",
    "GITHUB_TOKEN",
    "aws_secret_access_key",
    "db_password",
    "client_secret",
    "api_key",
    "X-Api-Key",
    "private_key",
    "PASSWD",
]
FUZZ = settings(max_examples=examples(80), deadline=None, derandomize=bool(os.environ.get("CI")))


@FUZZ
@given(
    syntax=st.sampled_from(SYNTAXES),
    key=st.sampled_from(KEYS),
    value=st.text(alphabet=string.ascii_letters + string.digits + "/+_-", min_size=12, max_size=40)
    .filter(lambda v: any(c.isdigit() for c in v) and any(c.isalpha() for c in v))
    .filter(lambda v: v[0] not in "-/"),
    noise=st.text(alphabet=string.printable.replace("\n", "").replace("\r", ""), max_size=30),
)
def test_any_assignment_syntax_is_found(syntax: str, key: str, value: str, noise: str) -> None:
    line = noise + " " + syntax.format(key=key, value=value)
    assert secrets.find_in_line(line), line


@FUZZ
@given(st.text(max_size=400))
def test_any_line_is_read_without_error(line: str) -> None:
    found = secrets.find_in_line(line)
    assert all(isinstance(k, str) for k in found)


@pytest.mark.parametrize(
    "line",
    [
        "a" * 1_000_000,
        "x=1 " * 250_000,
        "-" * 1_000_000,
        "a://" * 250_000,
        "token=" * 160_000,
        "?" * 1_000_000,
        " --password" * 90_000,
        "password " * 110_000,
        "machine " + "password x " * 90_000,
    ],
    ids=["letters", "pairs", "dashes", "schemes", "keys", "marks", "flags", "words", "netrc"],
)
def test_a_long_hostile_line_is_read_in_linear_time(line: str) -> None:
    """A minified bundle or a binary blob in a log folder: a megabyte line is read in well
    under a second a megabyte (no pattern backtracks over the whole line)."""
    import time

    start = time.monotonic()
    secrets.find_in_line(line + f" token={TOKEN}")
    assert time.monotonic() - start < 10


def test_a_credential_after_a_long_line_is_still_found(tmp_path: Path) -> None:
    path = tmp_path / "minified.log"
    path.write_text("a" * 200_000 + f" token={TOKEN}\nstep=1\n")
    assert {int(f.params["line"]) for f in secrets.scan([path]).findings} == {1}


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_path_that_is_no_file_or_folder_is_bad_input(tmp_path: Path, kind: str) -> None:
    target = Path("/dev/zero")
    if kind == "fifo":
        target = tmp_path / "pipe"
        os.mkfifo(target)
    res = CliRunner().invoke(_app(), ["check", "secrets", str(target)])
    assert res.exit_code == 2, res.output
    assert "not a regular file or folder" in res.output and "Traceback" not in res.output


def test_a_fifo_inside_a_folder_is_skipped(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    _clean(tmp_path)
    result = secrets.scan([tmp_path])
    assert result.figures.files_scanned == 1 and result.findings == []


def test_an_option_id_that_is_a_token_is_never_echoed(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path / "ws")
    log = _clean(tmp_path)
    token = "ghp_" + TOKEN + "Qw12"
    res = CliRunner().invoke(
        _app(), ["check", "secrets", str(log), "--option", token, "-w", str(ws.root)]
    )
    assert res.exit_code == 2, res.output
    assert "unknown option id" in res.output
    assert TOKEN not in res.output and "ghp_Zq8" not in res.output
