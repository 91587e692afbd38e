"""`--from-export DIR`: steps 5-6 on an export someone else produced; the export audit's
findings become reasons in the verdict (SPEC E1, E5, A2, A4)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpudecide.portability.executors import LocalExecutor
from gpudecide.portability.from_export import run_from_export
from gpudecide.portability.plan import ExportTestPlan
from gpudecide.portability.scenario import ExportTestSetup, run_export_test
from gpudecide.portability.storage import open_storage

from .test_portability_scenario import IDENTITY, MODEL, assert_typed_figures


@pytest.fixture(scope="module")
def executor() -> Iterator[LocalExecutor]:
    ex = LocalExecutor(timeout=300, warm=True)
    yield ex
    ex.close()


def _setup(tmp: Path, executor: LocalExecutor, name: str, **kw: object) -> ExportTestSetup:
    plan_path = tmp / f"{name}.yaml"
    plan_path.write_text("option: owned-pool\n")
    return ExportTestSetup(
        plan=ExportTestPlan(
            option="owned-pool", model=MODEL, identity=IDENTITY, throughput_floor_mb=1
        ),
        plan_path=plan_path,
        work=tmp / f"work-{name}",
        storage=open_storage(str(tmp / "store")),
        executor=executor,
        run_id=name,
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory, executor: LocalExecutor) -> Path:
    """Two exports produced by full runs: a complete one, and one without optimizer state."""
    tmp = tmp_path_factory.mktemp("produced")
    assert run_export_test(_setup(tmp, executor, "complete")).passed
    run_export_test(_setup(tmp, executor, "vendor", drop_from_export=("optimizer.pt",)))
    return tmp / "store"


def test_complete_export_resumes_and_matches(
    exports: Path, tmp_path: Path, executor: LocalExecutor
) -> None:
    result = run_from_export(_setup(tmp_path, executor, "check"), exports / "complete")
    f = result.figures
    assert f["verdict"] == "pass", f["reasons"]
    assert f["resumed_at_step"] == 4
    assert f["final_metrics"] == f["reference_metrics"]  # the producer's metrics.jsonl
    assert f["audit"]["hazards"] == []
    statuses = {s["name"]: s["status"] for s in f["steps"]}
    assert statuses["train"] == statuses["export"] == statuses["delete"] == "skip"
    assert statuses["resume"] == "pass"
    assert result.record.kind == "export_test" and result.record.figures["option"] == "owned-pool"
    assert_typed_figures(result.record, COMPARED_KEYS)
    assert [r["metric"] for r in f["metric_comparison"]] == ["loss", "eval_loss"]
    assert all(r["within"] for r in f["metric_comparison"])
    # The contour: where the resume ran, the export's own folder, the vendor's artifacts.
    assert f["contour"] == {
        "executor": "local",
        "cluster": "",
        "context": "",
        "host": socket.gethostname(),
        "storage": str((exports / "complete").resolve()),
        "artifacts": "vendor_export",
    }
    # The producer's run manifest and every lint finding, warnings included.
    assert f["manifest"]["run_id"] == "complete" and f["manifest"]["files"] > 5
    assert {x["severity"] for x in f["manifest_lint"]} <= {"error", "warning"}
    assert all("why" in x and x["message"] for x in f["manifest_lint"])
    # A folder received from a vendor says nothing of its egress: not measured, and how to.
    sample = f["throughput"]["sample"]
    assert sample["measured"] is False and sample["gbps"] is None
    assert sample["command"].startswith("gpudecide audit --source ")
    assert f["export_gbps"] is None and f["migration_window_hours"] is None


# The figures' keys as a test on a given export writes them, in order (and the comparison
# with the producer's curve where the resume reached its last step).
GIVEN_EXPORT_KEYS = [
    "option", "verdict", "status", "from_export", "plan", "plan_sha256", "checkpoint_step",
    "resumed_at_step", "final_metrics", "reference_metrics", "tolerance", "steps",
    "bytes_exported", "export_gbps", "restore_gbps", "throughput", "run_size_gb",
    "migration_window_hours", "manual_actions", "closed_formats", "restored_by_hand",
    "executor", "contour", "audit", "jobs", "reasons", "reason_messages", "manifest_lint",
    "manifest", "lifecycle", "summary", "messages",
]  # fmt: skip
COMPARED_KEYS = [
    *GIVEN_EXPORT_KEYS[:10], "metric_comparison", *GIVEN_EXPORT_KEYS[10:],
]  # fmt: skip


def test_vendor_export_without_optimizer_state_fails_with_audit_reasons(
    exports: Path, tmp_path: Path, executor: LocalExecutor
) -> None:
    result = run_from_export(_setup(tmp_path, executor, "check"), exports / "vendor")
    f = result.figures
    assert_typed_figures(result.record, GIVEN_EXPORT_KEYS)
    assert f["verdict"] == "fail"
    assert any(r.startswith("audit: weights_without_optimizer_state") for r in f["reasons"])
    resume = next(s for s in f["steps"] if s["name"] == "resume")
    assert resume["status"] == "fail"
    assert "cannot continue from the expected step 4" in resume["detail"]


def test_folder_without_a_resumable_checkpoint(tmp_path: Path, executor: LocalExecutor) -> None:
    export = tmp_path / "hf-export"
    export.mkdir()
    (export / "README.md").write_text("weights elsewhere\n")
    f = run_from_export(_setup(tmp_path, executor, "check"), export).figures
    assert f["verdict"] == "fail"
    resume = next(s for s in f["steps"] if s["name"] == "resume")
    assert "no checkpoint of a format this tool can resume" in resume["detail"]
    assert f["jobs"] == []  # nothing was started


@pytest.fixture(scope="module")
def hf_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real Hugging Face Trainer run (tiny GPT-2, 3 steps, checkpoints at 2 and 3)."""
    from .test_artifacts_models import _trainer

    out = tmp_path_factory.mktemp("hf") / "trainer"
    _trainer(out)
    return out


def test_hf_trainer_checkpoint_resumes_with_transformers(
    hf_export: Path, tmp_path: Path, executor: LocalExecutor
) -> None:
    f = run_from_export(_setup(tmp_path, executor, "hf"), hf_export).figures
    resume = next(s for s in f["steps"] if s["name"] == "resume")
    assert resume["status"] == "warn", resume["detail"]  # continued; no reference to compare
    assert f["resumed_at_step"] == 3 and "trained to 5" in resume["detail"]
    assert f["verdict"] == "warn" and f["reasons"] == []


def test_hf_trainer_checkpoint_without_optimizer_state(
    hf_export: Path, tmp_path: Path, executor: LocalExecutor
) -> None:
    import shutil

    export = tmp_path / "vendor-hf"
    shutil.copytree(hf_export, export)
    for ckpt in export.glob("checkpoint-*"):
        (ckpt / "optimizer.pt").unlink()
    f = run_from_export(_setup(tmp_path, executor, "hf"), export).figures
    assert f["verdict"] == "fail"
    assert any(r.startswith("audit: weights_without_optimizer_state") for r in f["reasons"])
    resume = next(s for s in f["steps"] if s["name"] == "resume")
    assert "optimizer_state_missing" in resume["detail"]
    assert "would start a new optimizer" in resume["detail"]


def test_a_cold_worker_reaches_the_trainer_resume(tmp_path: Path) -> None:
    """A job in a new interpreter (`python -m gpudecide.portability.worker SPEC`, the local
    executor's default) reaches the Hugging Face Trainer resume: a checkpoint without its
    optimizer state is refused for that reason, not a crash of the job."""
    pytest.importorskip("transformers")
    ckpt = tmp_path / "store" / "hf" / "checkpoint-3"
    ckpt.mkdir(parents=True)
    (ckpt / "config.json").write_text("{}\n")
    spec = {
        "action": "resume",
        "format": "hf_trainer",
        "workdir": str(tmp_path / "work"),
        "storage": str(tmp_path / "store"),
        "export_name": "hf",
        "checkpoint": "checkpoint-3",
        "device": "cpu",
        "result": str(tmp_path / "result.json"),
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    worker = [sys.executable, "-m", "gpudecide.portability.worker", str(tmp_path / "spec.json")]
    done = subprocess.run(worker, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["reason"] == "optimizer_state_missing", result["detail"]
    assert "would start a new optimizer" in result["detail"]
