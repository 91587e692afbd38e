"""Start-up loads no heavy library (issue 25): `import gpudecide.cli` and `--help` in every
language import none of matplotlib, DuckDB, Arrow, NumPy, PyTorch, safetensors or Jinja2;
each command imports its library inside its body, where the work is done.

Each check runs in a fresh interpreter (the test session itself has imported everything) and
reads `sys.modules` there; a twin proves the check sees a heavy import when one happens.
The time it takes is benchmarks/startup.py's business, not a test's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("matplotlib", "duckdb", "pyarrow", "numpy", "torch", "safetensors", "jinja2")

# Runs `body` in a fresh interpreter, then prints the heavy top-level modules it loaded.
_PROBE = """
import json, sys
{body}
heavy = {heavy!r}
print(json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""

# `gpudecide ARGS` in-process through the app, as the console script runs it, without exiting.
_CLI = """
import contextlib, io
from gpudecide.cli import app
with contextlib.redirect_stdout(io.StringIO()):
    app({args!r}, prog_name="gpudecide", standalone_mode=False)
"""


def _loaded(body: str, cwd: Path | None = None) -> list[str]:
    """The heavy libraries in `sys.modules` after `body` ran in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(body=body, heavy=HEAVY)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_importing_the_command_line_loads_no_heavy_library() -> None:
    assert _loaded("import gpudecide.cli") == []


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--lang", "ru", "--help"],
        ["--lang", "kk", "--help"],
        ["init", "--help"],
        ["evidence", "--help"],
        ["assess", "--help"],
        ["check", "--help"],
        ["check", "raci", "--help"],
        ["profile", "--help"],
        ["queue", "--help"],
        ["cost", "--help"],
    ],
    ids=" ".join,
)
def test_help_loads_no_heavy_library(args: list[str], tmp_path: Path) -> None:
    assert _loaded(_CLI.format(args=args), cwd=tmp_path) == []


def test_init_loads_no_heavy_library(tmp_path: Path) -> None:
    args = ["init", str(tmp_path / "ws")]
    assert _loaded(_CLI.format(args=args), cwd=tmp_path) == []
    assert (tmp_path / "ws" / "gpudecide.yaml").is_file()


def test_the_check_sees_a_heavy_import() -> None:
    """The twin: the report's charts do load matplotlib, and the probe says so."""
    assert "matplotlib" in _loaded("import gpudecide.cli\nimport gpudecide.cost.charts")
    assert "duckdb" in _loaded("import gpudecide.jobs.sql")
