"""Each drill's negative twin (SPEC G4): the same drill made to fail, so its checks can fail."""

from __future__ import annotations

from pathlib import Path

from gpudecide.drills import checkpoint_corrupt, disk_full, gpu_delay, node_loss, storage_revoked
from gpudecide.drills.runner import DrillContext


def test_node_loss_with_checkpoints_on_local_disk_restarts_from_zero(tmp_path: Path) -> None:
    """The Friday-night case (G1): the checkpoint went down with the node."""
    r = node_loss.run(DrillContext(root=tmp_path, storage="node"))
    assert r.verdict == "fail"
    assert r.resumed_from_step == 0 and r.details["restarted_from_zero"] is True
    assert r.noticed is True and r.data_kept is False
    assert "restarted from zero" in r.status
    assert "checkpoint-4" in r.details["local_checkpoints_lost"]
    assert r.lost_steps is not None and r.lost_steps >= 6


def test_disk_full_naive_copy_leaves_a_checkpoint_that_looks_whole(tmp_path: Path) -> None:
    r = disk_full.run(DrillContext(root=tmp_path), naive_copy=True)
    assert r.verdict == "fail" and r.data_kept is False
    broken = r.details["disk"]["looks_whole_but_broken"]
    assert broken and broken[0]["reason"] in ("hash_mismatch", "missing_file", "missing_sums")
    assert "No space left on device" in r.details["disk"]["naive_copy_error"]


def test_storage_revoked_without_retries_fails_the_backoff_check(tmp_path: Path) -> None:
    r = storage_revoked.run(DrillContext(root=tmp_path), retries=0)
    assert r.verdict == "fail"
    assert r.details["retried_with_backoff"] is False and r.details["attempts"] == 1
    assert r.explained is False
    assert r.data_kept is True  # the denial itself kept the last good checkpoint


def test_gpu_delay_read_the_naive_way_goes_unnoticed(tmp_path: Path) -> None:
    r = gpu_delay.run(DrillContext(root=tmp_path), naive_status=True)
    assert r.verdict == "fail" and r.noticed is False
    assert "running while it had no GPU" in r.status


def test_checkpoint_corrupt_everywhere_restarts_from_zero(tmp_path: Path) -> None:
    r = checkpoint_corrupt.run(DrillContext(root=tmp_path), corrupt_all=True)
    assert r.verdict == "fail" and r.data_kept is False
    assert r.resumed_from_step == 0
    assert [x["step"] for x in r.details["rejected"]] == [12, 8, 4]
    assert all(x["reason"] == "hash_mismatch" for x in r.details["rejected"])
