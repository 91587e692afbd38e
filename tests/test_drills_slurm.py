"""Drills with `--executor slurm` on the real local Slurm (sbatch, scontrol hold/release, scancel).

CI starts Slurm and sets GPUDECIDE_REQUIRE_SLURM=1: there this module cannot skip.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.drills import gpu_delay, node_loss
from gpudecide.drills.runner import DrillContext


@pytest.fixture(autouse=True)
def _slurm() -> None:
    try:
        up = subprocess.run(
            ["scontrol", "ping"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (FileNotFoundError, subprocess.TimeoutExpired):
        up = ""
    if "UP" not in up:
        if os.environ.get("GPUDECIDE_REQUIRE_SLURM") == "1":
            pytest.fail("GPUDECIDE_REQUIRE_SLURM=1 but no Slurm controller answers")
        pytest.skip("no local Slurm (run scripts/slurm-local start)")


def test_gpu_delay_held_job_is_pending_with_jobhelduser(tmp_path: Path) -> None:
    r = gpu_delay.run(DrillContext(root=tmp_path, executor="slurm"))
    assert r.verdict == "pass", r.status
    assert r.details["wait_reason"] == "JobHeldUser"
    assert r.details["queue_wait_s"] is not None and r.details["queue_wait_s"] >= 1.0


def test_node_loss_scancel_signal_kill_resumes(tmp_path: Path) -> None:
    r = node_loss.run(DrillContext(root=tmp_path, executor="slurm"))
    assert r.verdict == "pass", r.status
    assert r.resumed_from_step in (4, 8) and r.lost_steps is not None and r.lost_steps >= 0
    assert "SIGKILL" in r.status and r.details["restarted_from_zero"] is False


def test_a_slurm_drill_states_the_cluster_its_controller_names(tmp_path: Path) -> None:
    """The record's contour is the cluster as `scontrol show config` names it."""
    from gpudecide.drills import drill_run

    name = subprocess.run(
        ["scontrol", "show", "config"], capture_output=True, text=True, check=True
    ).stdout
    cluster = next(
        line.split("=", 1)[1].strip()
        for line in name.splitlines()
        if line.startswith("ClusterName")
    )
    ws_root = tmp_path / "ws"
    workspace.init(ws_root)
    run = drill_run.run_drills("gpu-delay", ws=workspace.load(ws_root), executor="slurm")
    record = ev.load(run.evidence[0])
    assert record.figures["contour"]["executor"] == "slurm"
    assert record.figures["contour"]["cluster"] == cluster
