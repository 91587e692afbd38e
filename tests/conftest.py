"""Shared test helpers: fixture paths and a way to run the real console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Tests build their tiny models locally; nothing may be fetched from a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SACCT = FIXTURES / "sacct"


@pytest.fixture(scope="session")
def scenario() -> dict[str, Any]:
    """What the recording script submitted to the real Slurm (tests/fixtures/sacct/)."""
    data: dict[str, Any] = json.loads((SACCT / "scenario.json").read_text())
    return data


def run_cli(
    *args: str, cwd: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `gpudecide` as a user would: a separate process, real exit code and streams."""
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "gpudecide", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
