"""Shared test helpers: fixture paths and a way to run the real console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# CI derandomizes every property test: what a random run finds becomes a fixed @example.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
# A longer random search, to run by hand (`GPUDECIDE_HYPOTHESIS=explore pytest ...`): ten
# times the examples of every property test; what it finds becomes an @example.
EXPLORE = os.environ.get("GPUDECIDE_HYPOTHESIS") == "explore" and not os.environ.get("CI")
settings.register_profile("explore", max_examples=1000, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
elif EXPLORE:
    settings.load_profile("explore")

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
    """Run `gpudecide` as a user would: the console script's own entry (`run_app`), its
    exit code and both streams, in this process (a new interpreter per command costs a
    second and a half; GPUDECIDE_TEST_SUBPROCESS=1 runs each in its own process instead).

    `env` adds variables; the reader's language comes from it or `--lang` only (a
    GPUDECIDE_LANG of the machine running the tests is not passed on)."""
    base = {k: v for k, v in os.environ.items() if k != "GPUDECIDE_LANG"}
    full = dict(base, COLUMNS="200", NO_COLOR="1", **(env or {}))
    if os.environ.get("GPUDECIDE_TEST_SUBPROCESS") == "1" or "PYTHONPATH" in (env or {}):
        return run_script(*args, cwd=cwd, stdin=stdin, env=full)
    return _run_here(list(args), cwd=cwd, stdin=stdin, env=full)


def run_script(
    *args: str,
    cwd: Path | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`python -m gpudecide ...` in a process of its own (what the process itself does:
    its start-up, its streams at the OS level, its signals)."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "GPUDECIDE_LANG"}
        env |= {"COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "gpudecide", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _run_here(
    args: list[str], *, cwd: Path | None, stdin: str | None, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """The console script's entry in this process, with its argv, environment, working
    folder and standard streams of its own, restored after."""
    import contextlib
    import io
    import traceback
    import types

    import gpudecide
    from gpudecide.cli import app
    from gpudecide.console import choose_language, run_app

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_argv, saved_cwd, saved_stdin = (
        dict(os.environ),
        sys.argv,
        os.getcwd(),
        sys.stdin,
    )
    saved_main = sys.modules["__main__"]
    # `python -m gpudecide`, as click names the program in usage lines.
    main = types.ModuleType("__main__")
    main.__package__ = "gpudecide"
    code: int = 0
    try:
        os.environ.clear()
        os.environ.update(env)
        sys.argv = [str(Path(gpudecide.__file__).parent / "__main__.py"), *args]
        sys.modules["__main__"] = main
        sys.stdin = io.StringIO(stdin or "")
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                run_app(app)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except Exception:  # what a process would print before dying with status 1
                err.write(traceback.format_exc())
                code = 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.argv, sys.stdin = saved_argv, saved_stdin
        sys.modules["__main__"] = saved_main
        # The next run, or a test calling the library, starts from English as a process would.
        choose_language(None)
    return subprocess.CompletedProcess(["gpudecide", *args], code, out.getvalue(), err.getvalue())


# scripts/mutation sets this: every surviving mutant re-runs the covering tests, so property
# tests draw fewer examples there (the full count runs in the normal suite).
MUTATION = bool(os.environ.get("GPUDECIDE_MUTATION"))


def examples(n: int) -> int:
    """Hypothesis examples for a property test: `n`, a fifth of it under mutation testing,
    ten times it when exploring."""
    if MUTATION:
        return max(20, n // 5)
    return n * 10 if EXPLORE else n


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
