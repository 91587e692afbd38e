"""The one client of the warm job server (`gpudecide.portability.zygote.Zygote`), which the
export test's local executor and the drills both use: a real zygote process forking real
children; exit codes, a job past its time killed, the environment, folder and log each job
gets, and a server that cannot start."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpudecide.portability.zygote import Zygote

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
    z = Zygote("tests.zygote_job", env=env)
    yield z
    assert z.close() == "zygote stopped"
    assert z.close() == "zygote stopped"  # twice is safe (a rollback step)
    assert z.proc.returncode == 0


def _spec(tmp_path: Path, name: str, **spec: object) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(spec))
    return path


def test_a_job_runs_in_its_folder_with_its_environment(zygote: Zygote, tmp_path: Path) -> None:
    """The child gets the request's environment (only it), folder and log; its code comes back."""
    log = tmp_path / "job.log"
    work = tmp_path / "work"
    work.mkdir()
    spec = _spec(tmp_path, "a", say="hello", code=3)
    pid = zygote.fork(spec, log, {"ZYGOTE_TEST": "mine"}, cwd=work, append=False)
    assert zygote.wait(pid, 60) == 3
    assert zygote.code(pid) == 3
    assert log.read_text().split() == ["hello", "mine", str(work)]


def test_logs_append_or_start_afresh(zygote: Zygote, tmp_path: Path) -> None:
    """append=True keeps what the log held (a drill's resumed job); False starts it anew."""
    log = tmp_path / "job.log"
    log.write_text("before\n")
    env = {"ZYGOTE_TEST": "x", "PATH": os.environ.get("PATH", "")}
    pid = zygote.fork(_spec(tmp_path, "b", say="one"), log, env, cwd=tmp_path)
    assert zygote.wait(pid, 60) == 0
    assert log.read_text().splitlines()[0] == "before"
    pid = zygote.fork(_spec(tmp_path, "c", say="two"), log, env, cwd=tmp_path, append=False)
    assert zygote.wait(pid, 60) == 0
    assert log.read_text().split()[0] == "two" and "before" not in log.read_text()


def test_a_job_past_its_time_is_running_until_killed(zygote: Zygote, tmp_path: Path) -> None:
    """wait() gives None while the job runs (boundary: a short timeout), then the signal."""
    pid = zygote.fork(_spec(tmp_path, "d", sleep=60), tmp_path / "d.log", {}, cwd=tmp_path)
    assert zygote.wait(pid, 0.3) is None
    assert zygote.code(pid) is None
    os.kill(pid, signal.SIGKILL)
    assert zygote.wait(pid, 30) == -signal.SIGKILL


def test_a_server_that_cannot_start_says_so() -> None:
    """An entry module that does not exist: the zygote exits before `ready`."""
    with pytest.raises(RuntimeError, match="did not start"):
        Zygote("tests.no_such_module_here")
