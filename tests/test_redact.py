"""No credential in anything a person archives (issue 28): every record and report passes
through one redaction at its edge. By class: each token shape and each assignment syntax is
masked; digests, ids and metric names that merely contain a word are not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from gpudecide import evidence as ev
from gpudecide import sections, workspace
from gpudecide.errors import InputError, excerpt
from gpudecide.redact import MASK, looks_like_credential, redact

SECRET = "Zq8vR2mX9kL4pT7w"  # a value no test text contains otherwise
MASKED = [
    f"ghp_{SECRET}{SECRET}",
    f"github_pat_{SECRET}{SECRET}",
    f"hf_{SECRET}{SECRET}",
    f"sk-proj-{SECRET}{SECRET}",
    "AKIAIOSFODNN7EXAMPLE",
    f"xoxb-{SECRET}",
    f"glpat-{SECRET}",
    f"export HF_TOKEN={SECRET}",
    f"aws_secret_access_key = {SECRET}",
    f'{{"password": "{SECRET}"}}',
    f"db_password: {SECRET}",
    f"API_KEY='{SECRET}'",
    f"Authorization: Bearer {SECRET}",
    f"s3://user:{SECRET}@storage.local:9000/bucket",
    f"--token={SECRET}",
]
KEPT = [
    "sha256 " + "ab" * 32,
    "train-llm-a-r3",
    "tokens_per_second=4000",
    "max_tokens: 512",
    "sk-learn 1.2",
    "s3://bucket/ckpt/run-41",
    "checkpoint-12/optimizer.pt",
    "Authorization header missing",
]


@pytest.mark.parametrize("text", MASKED)
def test_every_credential_shape_is_masked(text: str) -> None:
    said = redact(text)
    assert MASK in said and SECRET not in said and "EXAMPLE" not in said, said
    assert looks_like_credential(text)
    assert SECRET not in excerpt(text)


@pytest.mark.parametrize("text", KEPT)
def test_what_is_no_credential_stays(text: str) -> None:
    assert redact(text) == text
    assert not looks_like_credential(text)


@pytest.mark.parametrize("text", MASKED)
def test_a_credential_is_masked_in_a_short_text_said_again_and_in_a_long_one(text: str) -> None:
    """Short texts are remembered (records repeat them thousands of times), long ones are
    not: either way the credential is masked, every time it is said."""
    short = redact(text)
    assert redact(text) == short and SECRET not in short
    padding = "x " * 200
    long = redact(padding + text + " " + padding)
    assert len(padding + text) > 256
    assert long == padding + short + " " + padding


@given(st.text(max_size=200))
def test_redaction_is_idempotent_and_never_grows_a_secret(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
    assert len(once) <= len(text) + 3 * len(MASK) * (text.count("=") + text.count(":") + 3)


def test_a_credential_in_a_record_never_reaches_the_file(tmp_path: Path) -> None:
    record = ev.Evidence(
        kind="queue",
        title="Queue",
        spec_ids=["Q1"],
        verdict="info",
        summary=f"job deploy-ghp_{SECRET}{SECRET} waited 3 min",
        figures={"jobs": [{"name": f"export HF_TOKEN=hf_{SECRET}{SECRET}"}], "digest": "ab" * 32},
        notes=[f"password={SECRET}"],
    )
    path = ev.write(record, tmp_path)
    text = path.read_text()
    assert SECRET not in text and "ab" * 32 in text
    assert ev.load(path, verify=True).summary.startswith("job deploy-ghp_***")


def test_a_credential_in_the_workspace_description_stays_out_of_the_report(
    tmp_path: Path,
) -> None:
    workspace.init(tmp_path)
    cfg = tmp_path / workspace.CONFIG_NAME
    doc = yaml.safe_load(cfg.read_text())
    doc["team"] = f"ML team (ask for token={SECRET})"
    doc["decision"] = f"where to fine-tune; vault s3://admin:{SECRET}@vault.local/x"
    cfg.write_text(yaml.safe_dump(doc))
    paths = sections.build_report(workspace.load(tmp_path), tmp_path / "out")
    for kind in ("html", "markdown", "json"):
        assert SECRET not in paths[kind].read_text(encoding="utf-8"), kind
    assert "ML team" in paths["html"].read_text(encoding="utf-8")


def test_an_error_never_quotes_a_credential() -> None:
    error = InputError("unknown option id {option}", option=excerpt(f"ghp_{SECRET}{SECRET}"))
    assert SECRET not in error.one_line() and SECRET not in json.dumps(error.as_dict())


# Texts on which a pattern that scans to the end from every start position is quadratic: a
# long run of key characters and dots, of scheme letters, of secret words without a value.
# At 400 KB a quadratic scan takes minutes; the linear one well under a second.
SLOW_SHAPES = [
    "x." * 200_000,
    "x" * 400_000,
    "a://" * 100_000,
    "x-password" * 40_000,
    "password " * 40_000,
]


@pytest.mark.parametrize("text", SLOW_SHAPES, ids=lambda t: repr(t[:10]))
def test_redaction_is_linear_in_the_text(text: str) -> None:
    """A record of megabytes (a job log's comments) is redacted in one pass: the run is cut
    off by an alarm long before a quadratic scan would end."""
    import signal

    def too_slow(*_: object) -> None:
        raise TimeoutError("redact scanned the text more than once per position")

    old = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(20)
    try:
        assert redact(text) == text
        looks_like_credential(text)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
