"""A fault of the tool or its harness is never a verdict on an option (issue 28): a worker
that crashes or dies without a result, a harness timeout, is status `error`, verdict `info`,
says why (the job's last lines, its exit code or signal) and raises no stop factor. The
demo's failure on a loaded machine ("job wrote no result (exit 1):" with an empty tail) came
from a workspace given as a relative path: every job changes into its own folder, where the
relative spec, result and log paths did not exist; the test that held it runs with the CPU
loaded. Real workers, real processes, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpudecide import evidence as ev
from gpudecide.message import english
from gpudecide.portability import rules
from gpudecide.portability.executors import LocalExecutor
from gpudecide.portability.figures import figures_of
from gpudecide.portability.plan import ExportTestPlan
from gpudecide.portability.scenario import ExportTestSetup, job_failure, run_export_test
from gpudecide.portability.storage import open_storage

from .test_portability_scenario import IDENTITY

# The smallest run that still trains, checkpoints, exports and resumes: seconds per job.
SMALL = {"size": "tiny", "steps": 4, "checkpoint_step": 2, "n_sequences": 16, "threads": 1}


@pytest.fixture(scope="module")
def executor() -> Iterator[LocalExecutor]:
    ex = LocalExecutor(timeout=300, warm=True)
    yield ex
    ex.close()


def _setup(tmp: Path, executor: Any, work: Path | None = None, **plan: Any) -> ExportTestSetup:
    plan_path = tmp / "export-test.yaml"
    plan_path.write_text("option: owned-pool\n")
    fields: dict[str, Any] = {"identity": IDENTITY, "throughput_floor_mb": 1, **plan}
    return ExportTestSetup(
        plan=ExportTestPlan(option="owned-pool", model=SMALL, **fields),
        plan_path=plan_path,
        work=work or tmp / "work",
        storage=open_storage(str(tmp / "store")),
        executor=executor,
        run_id="run-1",
    )


def _step(f: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in f["steps"] if s["name"] == name)


def _no_verdict(record: ev.Evidence) -> None:
    """An error record: info, status error, no stop factor and no score."""
    f = figures_of(record)
    assert record.verdict == "info" and f.status == "error"
    assert "could not run (no verdict on the option)" in record.summary
    assert rules.rules(record) == []


def test_harness_timeout_is_an_error_not_a_failure(tmp_path: Path) -> None:
    slow = LocalExecutor(timeout=0.5)  # a new interpreter cannot even import torch in time
    result = run_export_test(_setup(tmp_path, slow))
    train = _step(result.figures, "train")
    assert train["status"] == "error"
    assert "stopped by the harness at its time limit of 0.5 s" in train["detail"]
    assert result.figures["jobs"][0]["state"] == "timeout"
    assert [s["status"] for s in result.figures["steps"]][2:5] == ["skip", "pass", "skip"]
    _no_verdict(result.record)


def test_a_worker_killed_by_a_signal_says_so(tmp_path: Path, executor: LocalExecutor) -> None:
    """SIGKILL of the training job (as an OOM killer would): no result, the signal named."""

    def kill_the_job() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            z = executor.zygote
            if z is not None:
                children = Path(f"/proc/{z.proc.pid}/task/{z.proc.pid}/children")
                pids = children.read_text().split() if children.exists() else []
                if pids:
                    os.kill(int(pids[0]), signal.SIGKILL)
                    return
            time.sleep(0.01)

    killer = threading.Thread(target=kill_the_job)
    killer.start()
    result = run_export_test(_setup(tmp_path, executor))
    killer.join()
    train = _step(result.figures, "train")
    assert train["status"] == "error"
    assert "killed by signal 9 (SIGKILL)" in train["detail"]
    _no_verdict(result.record)


def test_a_crashed_worker_is_an_error_with_its_traceback(
    tmp_path: Path, executor: LocalExecutor
) -> None:
    """A spec the worker's own code chokes on: the traceback's last lines come back."""
    spec = {
        "action": "train",
        "config": {"size": "no-such-size"},
        "output_dir": str(tmp_path / "o"),
    }
    outcome = executor.submit(spec, tmp_path / "control", "train")
    problem = job_failure(outcome)
    assert problem is not None and problem.kind == "error"
    said = english(problem.why)
    assert "a fault of gpudecide, not of the export" in said
    assert "ValidationError" in said and "Traceback" not in said.split(";", 1)[0]
    unknown = executor.submit({"action": "dance"}, tmp_path / "control", "other")
    assert job_failure(unknown).kind == "error"  # type: ignore[union-attr]


def test_a_refused_checkpoint_stays_a_failure(tmp_path: Path, executor: LocalExecutor) -> None:
    """Twin: what the worker finds in the export (no optimizer state) is the option's."""
    setup = _setup(tmp_path, executor)
    setup.drop_from_export = ("optimizer.pt",)
    result = run_export_test(setup)
    assert result.record.verdict == "fail" and result.figures["status"] == "fail"
    (stop,) = rules.rules(result.record)
    assert stop.id == "export_test_failed"  # type: ignore[union-attr]


def _hogs(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def test_relative_workspace_under_cpu_load_passes(
    tmp_path: Path, executor: LocalExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's two failures: a workspace given as a relative path (`gpudecide demo`
    writes ./gpudecide-demo) with the CPU busy. Every job finds its spec, result and log."""
    monkeypatch.chdir(tmp_path)
    hogs = _hogs(2 * (os.cpu_count() or 1))
    try:
        result = run_export_test(_setup(Path("."), executor, work=Path("rel") / "work"))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert result.figures["verdict"] == "pass", result.figures["reasons"]
    assert [s["status"] for s in result.figures["steps"]] == ["pass"] * 6
    assert not (tmp_path / "rel" / "work").exists()


def test_the_job_that_cannot_start_leaves_its_traceback(tmp_path: Path) -> None:
    """A job whose folder is gone before it starts: the zygote's child writes why to the log
    it opened first (the empty tail of the demo's failure)."""
    from gpudecide.portability.zygote import Zygote

    z = Zygote()
    try:
        log = tmp_path / "job.log"
        pid = z.fork(tmp_path / "spec.json", log, {}, cwd=tmp_path / "gone", append=False)
        assert z.wait(pid, 60) == 1
    finally:
        z.close()
    text = log.read_text()
    assert "FileNotFoundError" in text and str(tmp_path / "gone") in text
