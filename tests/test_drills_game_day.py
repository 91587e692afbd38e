"""Game day (SPEC G1, G4): all five drills for real on CPU, in a fresh workspace, no flags.

One `gpudecide drill all --json` run (the real training job, SIGKILL, a tmpfs filling up,
permissions the job really lacks, a delayed start, flipped bytes in storage) is shared by
the tests of this module; each checks what its drill must show.
"""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.drills import faults
from gpudecide.drills.cli import register
from gpudecide.drills.drill_figures import figures_of
from gpudecide.drills.names import DRILLS


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """The root app, as the main CLI builds it."""

    register(app)
    return app


def _stale_mount(root: Path) -> Path | None:
    """What a disk-full drill killed with SIGKILL leaves: its small filesystem, mounted."""
    point = root / "drills" / "20260101T000000000000Z" / "disk-full" / "small-disk"
    point.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(point)], capture_output=True
    )
    return point if done.returncode == 0 else None


@pytest.fixture(scope="module")
def game_day(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("ws")
    workspace.init(root)
    stale = _stale_mount(root)
    mp = pytest.MonkeyPatch()
    mp.chdir(root)
    try:
        r = CliRunner().invoke(_app(), ["drill", "all", "--json"])
    finally:
        mp.undo()
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    by = {d["drill"]: d for d in data["drills"]}
    return {"root": root, "data": data, "by": by, "stale": stale}


def test_all_five_drills_pass_with_the_machine_interface(game_day: dict[str, Any]) -> None:
    drills = game_day["data"]["drills"]
    assert [d["drill"] for d in drills] == list(DRILLS)
    for d in drills:
        assert d["verdict"] == "pass", d
        assert d["noticed"] is True and d["data_kept"] is True and d["explained"] is True
        assert Path(d["journal"]).is_file()
        assert {"resumed_from_step", "lost_steps", "lost_seconds"} <= set(d)
        assert d["option"] == "owned-pool"  # from the template's drills.yaml


def test_node_loss_resumes_from_external_storage(game_day: dict[str, Any]) -> None:
    d = game_day["by"]["node-loss"]
    # A checkpoint every 4 steps, SIGKILL two steps after the first one is stored (on a busy
    # machine the kill may land after the next one): resumed from a stored checkpoint.
    assert d["resumed_from_step"] in (4, 8)
    assert d["lost_steps"] >= 0 and d["lost_seconds"] > 0
    assert d["restarted_from_zero"] is False
    assert d["would_restart_from_zero_on_local_disk"] is True
    assert "SIGKILL" in d["status"] and f"checkpoint-{d['resumed_from_step']}" in d["status"]


def test_disk_full_is_a_kernel_enospc_and_nothing_half_written_looks_whole(
    game_day: dict[str, Any],
) -> None:
    d = game_day["by"]["disk-full"]
    assert "ENOSPC" in d["status"]
    assert d["disk"]["published"] == [4] and d["disk"]["verified"] == [4]
    assert d["disk"]["looks_whole_but_broken"] == [] and d["disk"]["leftovers"] == []
    journal = json.loads(Path(d["journal"]).read_text())
    assert journal["fault"]["filesystem"] in ("tmpfs", "loop-ext4")
    rollbacks = [r["activity"]["name"] for r in journal["rollbacks"]]
    assert "unmount the small filesystem" in rollbacks


def test_storage_revoked_retries_with_backoff_and_keeps_the_checkpoint(
    game_day: dict[str, Any],
) -> None:
    d = game_day["by"]["storage-revoked"]
    assert d["retried_with_backoff"] is True and d["attempts"] == 4
    assert "Permission denied" in d["status"] and "back-off 0.1, 0.2, 0.4 s" in d["status"]
    assert d["resumed_from_step"] in (4, 8)  # the last checkpoint stored before the revocation


def test_gpu_delay_shows_pending_with_a_reason(game_day: dict[str, Any]) -> None:
    d = game_day["by"]["gpu-delay"]
    assert d["wait_reason"] and d["wait_reason"].startswith("Resources")
    assert 1.6 <= d["queue_wait_s"] < 10
    assert d["samples_while_waiting"] >= 5


def test_checkpoint_corrupt_falls_back_to_the_previous_good_one(game_day: dict[str, Any]) -> None:
    d = game_day["by"]["checkpoint-corrupt"]
    assert d["rejected"] == [{"step": 12, "reason": "hash_mismatch"}]
    assert d["resumed_from_step"] == 8 and d["lost_steps"] == 4


def test_journals_are_chaos_toolkit_shaped(game_day: dict[str, Any]) -> None:
    for d in game_day["data"]["drills"]:
        j = json.loads(Path(d["journal"]).read_text())
        assert j["steady_states"]["before"]["steady_state_met"] is True
        assert j["steady_states"]["after"]["steady_state_met"] is True
        assert j["run"] and j["rollbacks"] and j["fault"]
        assert j["verdict"]["verdict"] == "pass"
        stamps = [t["at"] for t in j["timeline"]]
        assert stamps == sorted(stamps) and all(s.endswith("Z") for s in stamps)
        assert all(r["status"] == "succeeded" for r in j["rollbacks"])


def test_evidence_names_the_option_and_carries_the_game_day(game_day: dict[str, Any]) -> None:
    records = [r for r in ev.load_all(game_day["root"] / "evidence") if r.kind == "drill"]
    assert len(records) == 5
    assert {r.figures["option"] for r in records} == {"owned-pool"}
    # Each states the contour it exercised: this host, the local executor, and the folder
    # its own job's checkpoints went to (no cluster or context: none was used).
    for r in records:
        contour = r.figures["contour"]
        assert contour["executor"] == "local" and contour["host"] == socket.gethostname()
        assert contour["cluster"] == contour["context"] == ""
        assert contour["storage"].startswith(str(game_day["root"] / "drills"))
        assert contour["storage"].endswith(f"/{r.figures['drill']}/storage")
    newest = records[-1]
    assert [row["drill"] for row in newest.figures["game_day"]] == list(DRILLS)
    state, _problems = ev.freshness(newest, game_day["root"])
    assert state is ev.Freshness.FRESH  # the journal it cites is its input


def test_the_figures_model_is_each_record_as_written(game_day: dict[str, Any]) -> None:
    """Every drill's own details and the game day read back typed, and dump to the very
    figures the record holds (its content hash unchanged)."""
    records = [r for r in ev.load_all(game_day["root"] / "evidence") if r.kind == "drill"]
    for record in records:
        typed = figures_of(record)
        dumped = typed.model_dump(mode="json")
        assert dumped == record.figures, record.figures["drill"]
        again = record.model_copy(update={"figures": dumped})
        assert again.compute_content_sha256() == record.content_sha256
    newest = figures_of(records[-1])
    assert [row.drill for row in newest.rows()] == list(DRILLS)
    by = {r.figures["drill"]: r for r in records}
    disk = figures_of(by["disk-full"]).disk
    assert disk is not None and disk.verified == [4]
    assert figures_of(by["node-loss"]).restarted_from_zero is False
    # One drill's details stay out of the others' records.
    assert figures_of(by["gpu-delay"]).disk is None and "disk" not in by["gpu-delay"].figures


def test_a_mount_left_by_a_killed_run_is_removed_and_said(game_day: dict[str, Any]) -> None:
    """The disk-full drill finds the earlier run's small filesystem, unmounts it, and its
    record says so (the figure and a note); no other drill's record carries it."""
    stale = game_day["stale"]
    if stale is None:
        pytest.skip("mount is not allowed here")
    d = game_day["by"]["disk-full"]
    assert d["stale_mounts"] == [{"path": str(stale), "removed": True, "problem": None}]
    assert not faults.stale_mounts(game_day["root"] / "drills")
    records = {r.figures["drill"]: r for r in ev.load_all(game_day["root"] / "evidence")}
    assert any("had left" in n and str(stale) in n for n in records["disk-full"].notes)
    assert "stale_mounts" not in records["node-loss"].figures


def test_each_job_writes_its_lifecycle_marks(game_day: dict[str, Any]) -> None:
    """Issue 24: the drills' jobs write their marks through gpudecide.marks, as a team's
    training script would, and each record carries its jobs' lifecycle read back from them:
    startup measured, checkpoints marked, how each job ended (none for the job the node-loss
    drill killed, whose work after its last checkpoint runs to the kill)."""
    by = game_day["by"]
    for d in game_day["data"]["drills"]:
        jobs = d["lifecycle"]
        assert jobs and all(j["prep_start"] and j["first_step"] for j in jobs), d["drill"]
        assert all(j["startup_seconds"] is not None and j["startup_seconds"] >= 0 for j in jobs)
    node_loss = {j["job"]: j for j in by["node-loss"]["lifecycle"]}
    assert node_loss["attempt-1"]["end"] is None and node_loss["attempt-1"]["checkpoints"]
    assert node_loss["attempt-1"]["since_checkpoint_seconds"] is not None
    assert node_loss["attempt-2"]["end_status"] == "completed"
    assert node_loss["attempt-2"]["first_step_number"] == by["node-loss"]["resumed_from_step"] + 1
    assert by["disk-full"]["lifecycle"][0]["end_status"] == "disk_full"
    revoked = {j["job"]: j["end_status"] for j in by["storage-revoked"]["lifecycle"]}
    assert revoked == {"train": "storage_denied", "resume": "completed"}
    # The marks files are inputs of the record: an edited marks file makes it stale.
    records = {r.figures["drill"]: r for r in ev.load_all(game_day["root"] / "evidence")}
    marks = [i.path for i in records["node-loss"].inputs if "/marks/" in i.path]
    assert len(marks) == 2 and all(m.endswith(".jsonl") for m in marks)
