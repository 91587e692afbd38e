"""The export acceptance test end to end on CPU, and each way it must fail (SPEC E1-E4, A2, A4).

Real PyTorch training in real worker processes, a real folder as external storage, the
real deletion of the source volume. Jobs are forked from one warm process (the demo's
executor) to keep the suite fast; `test_portability_cli` runs the cold default once.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpudecide import evidence as ev
from gpudecide.portability.executors import LocalExecutor
from gpudecide.portability.figures import figures_of
from gpudecide.portability.plan import ExportTestPlan, Tolerance
from gpudecide.portability.scenario import ExportTestSetup, run_export_test
from gpudecide.portability.storage import open_storage

MODEL = {"size": "tiny", "steps": 8, "checkpoint_step": 4, "n_sequences": 64}
IDENTITY = {
    "code_commit": "3f9c2a7d1e5b8c0a4f6d2e9b7a1c3e5f7d9b2a4c",
    "container_digest": "registry.example/train@sha256:" + "ab" * 32,
    "retention_class": "regulated-3y",
}


@pytest.fixture(scope="module")
def executor() -> Iterator[LocalExecutor]:
    ex = LocalExecutor(timeout=300, warm=True)
    yield ex
    ex.close()


def _setup(tmp: Path, executor: LocalExecutor, **kw: Any) -> ExportTestSetup:
    plan_path = tmp / "export-test.yaml"
    plan_path.write_text("option: owned-pool\n")
    # A 1 MB floor: the export itself is the sample (the whole-scenario test probes 64 MB).
    extra = {"identity": IDENTITY, "throughput_floor_mb": 1, **kw.pop("plan", {})}
    plan = ExportTestPlan(option="owned-pool", model=MODEL, **extra)
    return ExportTestSetup(
        plan=plan,
        plan_path=plan_path,
        work=tmp / "work",
        storage=kw.pop("storage", None) or open_storage(str(tmp / "store")),
        executor=executor,
        run_id="run-1",
        **kw,
    )


def _step(figures: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in figures["steps"] if s["name"] == name)


def test_whole_scenario_passes(tmp_path: Path, executor: LocalExecutor) -> None:
    plan = {"throughput_floor_mb": 64, "run_size_gb": 120.0}
    result = run_export_test(_setup(tmp_path, executor, plan=plan))
    f = result.figures
    assert f["verdict"] == "pass", f["reasons"]
    assert [s["name"] for s in f["steps"]] == [
        "plan", "train", "export", "delete", "resume", "record",
    ]  # fmt: skip
    assert all(s["status"] == "pass" for s in f["steps"])
    assert all(
        s["started_at"].endswith("Z") and s["finished_at"] >= s["started_at"] for s in f["steps"]
    )
    assert f["checkpoint_step"] == 4 and f["resumed_at_step"] == 4
    # Same CPU build: the resumed run reproduces the reference exactly.
    assert f["final_metrics"] == f["reference_metrics"]
    assert set(f["final_metrics"]) == {"loss", "eval_loss"}
    assert [m["step"] for m in f["resumed_curve"]] == [5, 6, 7, 8]
    assert len(f["plan_sha256"]) == 64
    root = tmp_path / "store" / "run-1"
    exported = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert "checkpoint-4/optimizer.pt" in exported and "run-manifest.json" in exported
    assert f["bytes_exported"] == sum(
        (tmp_path / "store" / "run-1" / p).stat().st_size for p in exported
    )
    # The 1.6 MB export is under the 64 MB floor: the storage is measured on a sample of the
    # floor's size, written (fsync) and read back, and only that rate is extrapolated.
    assert f["throughput"]["export"]["below_floor"] is True
    assert f["throughput"]["export"]["migration_window_hours"] is None
    sample = f["throughput"]["sample"]
    assert sample["measured"] is True and sample["source"] == "probe"
    assert sample["sample_bytes"] == sample["floor_bytes"] == 64_000_000
    assert sample["gbps"] == min(sample["write_gbps"], sample["read_gbps"]) > 0
    assert (f["export_gbps"], f["restore_gbps"]) == (sample["write_gbps"], sample["read_gbps"])
    assert f["run_size_gb"] == 120.0
    assert f["migration_window_hours"] == pytest.approx(120 / sample["gbps"] / 3600, rel=1e-2)
    assert not list((tmp_path / "store").glob(".*throughput-sample*"))  # the sample is gone
    assert "storage throughput" in _step(f, "record")["detail"]
    assert f["contour"] == {
        "executor": "local",
        "cluster": "",
        "context": "",
        "host": socket.gethostname(),
        "storage": str((tmp_path / "store").resolve()),
        "artifacts": "produced_here",
    }
    assert all(j["host"] == socket.gethostname() for j in f["jobs"])
    assert f["manifest"]["path"].endswith("/run-1/run-manifest.json")
    assert f["manifest"]["code_commit"] == IDENTITY["code_commit"] and f["manifest"]["files"] > 5
    # Each job marked its lifecycle through gpudecide.marks: startup and the checkpoint.
    train, resume = f["lifecycle"]
    assert (train["job"], resume["job"]) == ("train", "resume")
    assert train["job_id"] == "run-1-train" and train["end_status"] == "completed"
    assert train["prep_start"] <= train["first_step"] <= train["end"]
    assert train["first_step_number"] == 1 and resume["first_step_number"] == 5
    assert [c["step"] for c in train["checkpoints"]] == [4]
    assert train["checkpoints"][0]["path"].endswith("checkpoint-4")
    assert train["startup_seconds"] >= 0 and train["since_checkpoint_seconds"] >= 0
    assert resume["checkpoints"] == [] and resume["startup_seconds"] >= 0
    assert not (tmp_path / "work").exists()  # the controller's folder is gone after the run
    record = result.record
    assert record.kind == "export_test" and record.figures["option"] == "owned-pool"
    assert record.inputs[0].sha256 == f["plan_sha256"]
    lint = _step(f, "export")
    assert lint["status"] == "pass"
    assert_typed_figures(record, FULL_TEST_KEYS)


# The figures' keys as the full test writes them, in order.
FULL_TEST_KEYS = [
    "option", "verdict", "status", "run_id", "plan", "plan_sha256", "checkpoint_step",
    "resumed_at_step", "final_metrics", "reference_metrics", "metric_comparison", "tolerance",
    "steps", "bytes_exported", "export_gbps", "restore_gbps", "throughput", "run_size_gb",
    "migration_window_hours", "manual_actions", "closed_formats", "restored_by_hand",
    "executor", "contour", "storage", "export_url", "device", "resume_device", "model", "jobs",
    "reasons", "reason_messages", "reference_curve", "resumed_curve", "environments",
    "manifest_lint", "manifest", "lifecycle", "summary", "messages",
]  # fmt: skip


def assert_typed_figures(record: ev.Evidence, keys: list[str]) -> None:
    """The record's figures are the typed model's JSON exactly (keys, order, values), and
    the model declares every key the producer wrote."""
    typed = figures_of(record)
    dumped = typed.model_dump(mode="json")
    assert dumped == record.figures and list(dumped) == list(record.figures) == keys
    assert json.dumps(dumped) == json.dumps(record.figures)  # nested order and number types
    parts = [typed, typed.tolerance, typed.throughput, typed.messages, *typed.steps, *typed.jobs]
    parts += [*typed.metric_comparison, *typed.reference_curve]
    parts += [p for p in (typed.contour, typed.manifest, typed.throughput.sample) if p]
    parts += [*typed.lifecycle, *(c for j in typed.lifecycle for c in j.checkpoints)]
    assert all(not part.model_extra for part in parts)


def test_tolerance_violated_fails_with_the_figure(tmp_path: Path, executor: LocalExecutor) -> None:
    result = run_export_test(_setup(tmp_path, executor, perturb_resume=0.5))
    f = result.figures
    assert f["verdict"] == "fail"
    resume = _step(f, "resume")
    assert resume["status"] == "fail"
    assert "over the tolerance 0.02 relative" in resume["detail"]
    assert_typed_figures(result.record, FULL_TEST_KEYS)
    rows = {r["metric"]: r for r in f["metric_comparison"]}
    assert rows["loss"]["within"] is False and rows["loss"]["rel_diff"] > 0.02
    assert f["resumed_at_step"] == 4  # it did resume: only the values are off


def test_optimizer_state_missing_cannot_continue(tmp_path: Path, executor: LocalExecutor) -> None:
    result = run_export_test(_setup(tmp_path, executor, drop_from_export=("optimizer.pt",)))
    f = result.figures
    assert f["verdict"] == "fail"
    assert (
        "declared artifact 'checkpoint-*/optimizer.pt' is missing" in _step(f, "export")["detail"]
    )
    resume = _step(f, "resume")
    assert resume["status"] == "fail"
    assert "optimizer_state_missing" in resume["detail"]
    assert "cannot continue from the expected step 4" in resume["detail"]
    assert f["resumed_at_step"] is None


def test_tampered_export_caught_before_loading(tmp_path: Path, executor: LocalExecutor) -> None:
    def delete_and_tamper(volume: Path) -> None:
        shutil.rmtree(volume)
        target = tmp_path / "store" / "run-1" / "checkpoint-4" / "model.safetensors"
        data = bytearray(target.read_bytes())
        data[-1] ^= 0xFF  # one flipped bit in the last weight
        target.write_bytes(bytes(data))

    result = run_export_test(_setup(tmp_path, executor, delete_volume=delete_and_tamper))
    resume = _step(result.figures, "resume")
    assert result.figures["verdict"] == "fail" and resume["status"] == "fail"
    assert "hash_mismatch" in resume["detail"]
    assert "checkpoint-4/model.safetensors" in resume["detail"]
    assert result.figures["resumed_at_step"] is None  # nothing was loaded


def test_tampered_checkpoint_and_manifest_caught_by_checkpoint_sums(
    tmp_path: Path, executor: LocalExecutor
) -> None:
    from gpudecide.fsutil import sha256_path

    def rewrite(volume: Path) -> None:
        shutil.rmtree(volume)
        root = tmp_path / "store" / "run-1"
        target = root / "checkpoint-4" / "optimizer.pt"
        target.write_bytes(target.read_bytes() + b"\0")
        manifest = json.loads((root / "run-manifest.json").read_text())
        for f in manifest["files"]:  # a forger who also fixes the run manifest
            if f["path"] == "checkpoint-4/optimizer.pt":
                f["sha256"], f["size"] = sha256_path(target)
        (root / "run-manifest.json").write_text(json.dumps(manifest))

    result = run_export_test(_setup(tmp_path, executor, delete_volume=rewrite))
    detail = _step(result.figures, "resume")["detail"]
    assert "hash_mismatch" in detail and "optimizer.pt" in detail and "nothing was loaded" in detail


def test_deleted_volume_still_listed_fails_step_3(tmp_path: Path, executor: LocalExecutor) -> None:
    result = run_export_test(_setup(tmp_path, executor, delete_volume=lambda _p: None))
    delete = _step(result.figures, "delete")
    assert delete["status"] == "fail"
    assert "still listed" in delete["detail"]
    assert "volume" in delete["figures"]["listing_after"]
    assert result.figures["verdict"] == "fail"


def test_plan_edited_during_the_test_fails(tmp_path: Path, executor: LocalExecutor) -> None:
    setup = _setup(tmp_path, executor)

    def edit_plan(volume: Path) -> None:
        shutil.rmtree(volume)
        setup.plan_path.write_text("option: owned-pool\ntolerance: {relative: 0.5}\n")

    setup.delete_volume = edit_plan
    result = run_export_test(setup)
    record = _step(result.figures, "record")
    assert record["status"] == "fail" and "plan changed during the test" in record["detail"]


def test_tolerance_boundaries() -> None:
    # Binary fractions, so "exactly at the bound" is exact in floating point.
    rel = Tolerance(relative=0.03125, absolute=None)
    assert rel.allows(2.0625, 2.0)  # exactly at the bound: within
    assert not rel.allows(2.0626, 2.0)
    assert rel.allows(1.9375, 2.0)  # below the reference counts the same
    both = Tolerance(relative=0.0, absolute=0.25)
    assert both.allows(2.25, 2.0) and not both.allows(2.2501, 2.0)
    with pytest.raises(ValueError):
        Tolerance(relative=None, absolute=None)


def test_refused_deletion_is_a_failed_step(tmp_path: Path, executor: LocalExecutor) -> None:
    def refuse(_volume: Path) -> None:
        raise PermissionError(13, "Permission denied", str(_volume))

    f = run_export_test(_setup(tmp_path, executor, delete_volume=refuse)).figures
    delete = _step(f, "delete")
    assert delete["status"] == "fail" and "PermissionError" in delete["figures"]["error"]
    assert "still listed" in delete["detail"]
