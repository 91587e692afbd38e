"""Against a live Slurm: submit real jobs, read real sacct output, profile it.

Needs the single-node cluster of `scripts/slurm-local start` (the test command starts it and
sets GPUDECIDE_REQUIRE_SLURM=1, so in CI this test cannot silently skip).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpudecide.jobs.sacct import read_sacct

from .conftest import ROOT, run_cli

sys.path.insert(0, str(ROOT / "scripts"))
import slurm_scenario


def _slurm_up() -> bool:
    if shutil.which("sinfo") is None:
        return False
    res = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=20)
    return "UP" in res.stdout


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    if not _slurm_up():
        if os.environ.get("GPUDECIDE_REQUIRE_SLURM") == "1":
            pytest.fail("GPUDECIDE_REQUIRE_SLURM=1 but no Slurm controller answers")
        pytest.skip("no local Slurm (run scripts/slurm-local start)")
    work = tmp_path_factory.mktemp("slurm")
    roles = slurm_scenario.run_scenario(work, full=False)
    ids = slurm_scenario.job_ids(roles)
    out = work / "sacct.txt"
    out.write_text(slurm_scenario.sacct_dump(ids, header=True, tz="Asia/Almaty"))
    return roles, out


@pytest.mark.slurm
def test_live_sacct_rows_match_what_was_submitted(live: tuple[dict[str, Any], Path]) -> None:
    roles, path = live
    rows: dict[tuple[str, int], dict[str, Any]] = {
        (r["job_id"], r["attempt"]): r for r in read_sacct(path, tz="Asia/Almaty").table.to_pylist()
    }
    for role, spec in roles.items():
        if role == "array_sweep":
            tasks = [k for k in rows if k[0].startswith(f"{spec['job_id']}_")]
            assert len(tasks) == spec["tasks"]
            continue
        attempts = [rows[k] for k in sorted(rows) if k[0] == str(spec["job_id"])]
        assert attempts, role
        final = attempts[-1]
        assert final["state_detail"] == spec["state"], role
        assert final["name"] == spec["name"], role
        if spec.get("ran"):
            assert final["gpu_count"] == spec["gpus"], role
            assert final["start"] is not None and final["steps"] >= 2, role  # .batch, .extern
        else:
            assert final["gpu_count"] is None, role
        if spec.get("records"):
            assert [a["state_detail"] for a in attempts] == spec["records"], role
        if spec.get("reason") == "Dependency":
            assert final["wait_reason"] == "Dependency"


@pytest.mark.slurm
def test_live_profile_through_the_cli(live: tuple[dict[str, Any], Path], tmp_path: Path) -> None:
    roles, path = live
    res = run_cli(
        "profile",
        str(path),
        "--tz",
        "Asia/Almaty",
        "--weeks",
        "1",
        "--json",
        "--evidence-dir",
        str(tmp_path),
    )
    assert res.returncode == 0, res.stderr
    body = json.loads(res.stdout)
    ran_gpu = [r for k, r in roles.items() if k != "array_sweep" and r.get("ran") and r["gpus"]]
    assert body["jobs_total"] == len(ran_gpu) + roles["array_sweep"]["tasks"]
    assert body["never_started"] == sum(1 for r in roles.values() if r.get("ran") is False)
    assert body["requeue_attempts"] == sum(1 for r in roles.values() if r.get("records"))
    # The training took both of the node's GPUs, so the peak is exactly 2; a sweep over the
    # real sacct rows, independent of the profile's code, gives the same figure.
    assert body["peak_concurrent_gpus"] == _peak_from_rows(path) == 2
    assert body["skipped_rows"] == 0


def _peak_from_rows(path: Path) -> int:
    """Most GPUs held at once by the attempts in a sacct dump, by brute force."""
    held = [
        (r["start"], r["end"], r["gpu_count"])
        for r in read_sacct(path, tz="Asia/Almaty").table.to_pylist()
        if r["start"] is not None and r["end"] is not None and (r["gpu_count"] or 0) > 0
    ]
    return max((sum(g for s, e, g in held if s <= t < e) for t, _, _ in held), default=0)
