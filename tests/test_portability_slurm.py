"""The export test with every job a real sbatch job on the local Slurm, sacct recorded.

Needs the single-node cluster of `scripts/slurm-local start`; with GPUDECIDE_REQUIRE_SLURM=1
(the test command sets it) a missing controller fails instead of skipping.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from gpudecide.portability.executors import SlurmExecutor, slurm_available
from gpudecide.portability.plan import ExportTestPlan
from gpudecide.portability.scenario import ExportTestSetup, run_export_test
from gpudecide.portability.storage import open_storage

from .test_portability_scenario import IDENTITY, MODEL


@pytest.fixture(scope="module")
def slurm() -> None:
    if not slurm_available():
        if os.environ.get("GPUDECIDE_REQUIRE_SLURM") == "1":
            pytest.fail("GPUDECIDE_REQUIRE_SLURM=1 but no Slurm controller answers")
        pytest.skip("no local Slurm (run scripts/slurm-local start)")


@pytest.mark.slurm
def test_export_test_as_slurm_jobs(slurm: None, tmp_path: Path) -> None:
    plan_path = tmp_path / "export-test.yaml"
    plan_path.write_text("option: owned-pool\n")
    setup = ExportTestSetup(
        plan=ExportTestPlan(
            option="owned-pool", model=MODEL, identity=IDENTITY, throughput_floor_mb=1
        ),
        plan_path=plan_path,
        work=tmp_path / "work",
        storage=open_storage(str(tmp_path / "store")),
        executor=SlurmExecutor(timeout=600),
        run_id="slurm-1",
        keep_work=True,
    )
    f = run_export_test(setup).figures
    assert f["verdict"] == "pass", f["reasons"]
    jobs = {j["name"]: j for j in f["jobs"]}
    assert set(jobs) == {"train", "resume"}
    assert jobs["train"]["job_id"] != jobs["resume"]["job_id"]
    for job in jobs.values():
        assert job["executor"] == "slurm" and job["job_id"].isdigit()
        assert job["state"] == "COMPLETED" and job["sacct"]["ExitCode"] == "0:0"
        assert job["sacct"]["JobName"] == f"gpudecide-{job['name']}"
    delete = next(s for s in f["steps"] if s["name"] == "delete")
    assert delete["status"] == "pass"
    assert delete["figures"]["slurm_job"]["job_id"] == jobs["train"]["job_id"]
    assert "final state COMPLETED" in delete["detail"]
    # the jobs ran in their own working folders: the resume's saw only the export
    assert (tmp_path / "work" / "restore" / "export" / "run-manifest.json").is_file()
    assert f["resumed_at_step"] == 4 and f["final_metrics"] == f["reference_metrics"]
    # The contour: Slurm's own cluster name and the node the jobs ran on.
    cluster = subprocess.run(
        ["scontrol", "show", "config"], capture_output=True, text=True, check=True
    ).stdout
    name = next(ln.split("=", 1)[1].strip() for ln in cluster.splitlines() if "ClusterName" in ln)
    contour = f["contour"]
    assert (contour["executor"], contour["cluster"]) == ("slurm", name)
    assert contour["host"] and contour["host"] in {j["host"] for j in jobs.values()}
    assert contour["artifacts"] == "produced_here" and contour["storage"].endswith("/store")
    # The jobs' own marks carry the Slurm job id: the lifecycle joins sacct's record.
    marked = {m["job"]: m for m in f["lifecycle"]}
    for name, job in jobs.items():
        assert marked[name]["slurm_job_id"] == job["job_id"]
        assert marked[name]["first_step"] and marked[name]["end_status"] == "completed"


def _cancel_when_running(job_name: str, stop: threading.Event) -> None:
    """scancel the job as soon as squeue shows it (a node lost mid-training)."""
    while not stop.is_set():
        out = subprocess.run(
            ["squeue", "-h", "-n", job_name, "-o", "%i"], capture_output=True, text=True
        ).stdout.split()
        if out:
            time.sleep(1.0)
            subprocess.run(["scancel", out[0]], check=False)
            return
        time.sleep(0.2)


@pytest.mark.slurm
def test_cancelled_training_job_is_no_verdict(slurm: None, tmp_path: Path) -> None:
    """A training job the cluster ends (scancel, a node lost) leaves no export to judge:
    the test could not run (status error, verdict info), and says how the job ended."""
    plan_path = tmp_path / "export-test.yaml"
    plan_path.write_text("option: owned-pool\n")
    prefix = f"gpd-test-{os.getpid()}"
    setup = ExportTestSetup(
        plan=ExportTestPlan(
            option="owned-pool", model=MODEL, identity=IDENTITY, throughput_floor_mb=1
        ),
        plan_path=plan_path,
        work=tmp_path / "work",
        storage=open_storage(str(tmp_path / "store")),
        executor=SlurmExecutor(timeout=600, job_prefix=prefix),
        run_id="slurm-2",
    )
    stop = threading.Event()
    killer = threading.Thread(target=_cancel_when_running, args=(f"{prefix}-train", stop))
    killer.start()
    try:
        f = run_export_test(setup).figures
    finally:
        stop.set()
        killer.join()
    assert (f["verdict"], f["status"]) == ("info", "error")
    train = next(s for s in f["steps"] if s["name"] == "train")
    assert train["status"] == "error" and "training job could not run" in train["detail"]
    assert "Slurm state CANCELLED" in train["detail"]
    job = f["jobs"][0]
    assert job["job_id"] and job["state"].startswith("CANCELLED")
    delete = next(s for s in f["steps"] if s["name"] == "delete")
    assert delete["status"] == "pass"  # the volume went; the job's end is train's error
    assert next(s for s in f["steps"] if s["name"] == "resume")["status"] == "skip"
