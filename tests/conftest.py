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
    *args: str,
    cwd: Path | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `gpudecide` as a user would: a separate process, real exit code and streams.

    `env` adds variables; the reader's language comes from it or `--lang` only (a
    GPUDECIDE_LANG of the machine running the tests is not passed on)."""
    base = {k: v for k, v in os.environ.items() if k != "GPUDECIDE_LANG"}
    env = dict(base, COLUMNS="200", NO_COLOR="1", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "gpudecide", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


# scripts/mutation sets this: every surviving mutant re-runs the covering tests, so property
# tests draw fewer examples there (the full count runs in the normal suite).
MUTATION = bool(os.environ.get("GPUDECIDE_MUTATION"))


def examples(n: int) -> int:
    """Hypothesis examples for a property test: `n`, or a fifth of it under mutation testing."""
    return max(20, n // 5) if MUTATION else n


@pytest.fixture(scope="session")
def demo_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo workspace as `gpudecide demo` builds it, once per test session."""
    root = tmp_path_factory.mktemp("demo") / "ws"
    result = run_cli("demo", "--out", str(root), "--json")
    assert result.returncode == 0, result.stderr
    return root


@pytest.fixture
def demo_copy(demo_workspace: Path, tmp_path: Path) -> Path:
    """A private copy of the demo workspace, for a test whose commands write evidence."""
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(demo_workspace, root, symlinks=True)
    return root
