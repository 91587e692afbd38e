"""The demo's export tests: each option's export as the team received it (`--from-export`).

The evidence of a managed option is its vendor's own export, never a rehearsal the team
ran on its laptop ("Если поставщик не позволяет провести такой тест, вы еще не знаете цену
выхода"):

- kz-local, the local provider, handed back run 12 with its full state: the checkpoint at
  step 4 with weights, optimizer, scheduler and RNG states (SHA-256 sums beside them), the
  run's uninterrupted metrics and its run manifest (`demo_data/kz-local-run-12`, made once by
  `make_export`, which `scripts/make_demo_data.py` calls). The test resumes it in a fresh
  process here and compares the final metrics with the provider's own curve: it passes.
- managed-ft, the global cloud's endpoint, handed back run 7: a LoRA adapter, its trainer
  state and a `vendor_state.vpk` only its SDK reads, no optimizer state (the export the
  audit reads, `gpudecide.artifacts.demo`). The test fails for the vendor's reasons: the
  audit's hazards and a resume that cannot continue.

Both run as real jobs (a fresh process each, forked warm) and side by side.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.artifacts import demo as artifacts_demo
from gpudecide.fsutil import atomic_write_text
from gpudecide.portability.executors import LocalExecutor
from gpudecide.portability.plan import ExportTestPlan, load_plan
from gpudecide.portability.storage import open_storage

__all__ = [
    "COMMIT",
    "DATA",
    "IMAGE",
    "KZ_LOCAL_EXPORT",
    "MODEL",
    "PROVIDER_IMAGE",
    "RUN_SIZE_GB",
    "install",
    "make_export",
    "run",
]

DATA = Path(__file__).parent / "demo_data"
# The local provider's export of run 12, as it was handed back (a folder of files).
KZ_LOCAL_EXPORT = "kz-local-run-12"
# Fictional identifiers of the demo team's training code and image, and of the provider's.
COMMIT = "3f9c2a7d1e5b8c0a4f6d2e9b7a1c3e5f7d9b2a4c"
IMAGE = "registry.bank.example/ml/train@sha256:" + "5e" * 32
PROVIDER_IMAGE = "registry.qazai.example/finetune/runner@sha256:" + "7a" * 32
# One thread per job: the two tests run side by side, and a tiny model gains nothing from more.
MODEL = {"size": "tiny", "steps": 8, "checkpoint_step": 4, "n_sequences": 64, "threads": 1}
# One full run of the team's LoRA fine-tuning of an 8B model: base weights, adapter,
# optimizer state and the run's data snapshot (GB).
RUN_SIZE_GB = 40.0


def _plan(option: str, vendor: bool) -> dict[str, object]:
    manual: dict[str, list[str]] = {"actions": [], "closed_formats": [], "restored_by_hand": []}
    if vendor:
        manual = {
            "actions": ["asked the vendor's support to list the export bucket (ticket 4471)"],
            "closed_formats": ["vendor_state.vpk (readable only by vendor-sdk)"],
            "restored_by_hand": ["learning-rate schedule, from the vendor console's screenshot"],
        }
    return {
        "version": 1,
        "option": option,
        "model": MODEL,
        "metrics": ["loss", "eval_loss"],
        "tolerance": {"relative": 0.02, "absolute": None},
        "throughput_floor_mb": 64,
        "run_size_gb": RUN_SIZE_GB,
        "identity": {
            "code_commit": COMMIT,
            "container_digest": IMAGE,
            "retention_class": "regulated-3y",
        },
        "manual": manual,
    }


def install(root: Path) -> Path:
    """Copy the local provider's export into the workspace, as the team received it, where
    its export tests look (`exports/export-test/`, the tests' default storage)."""
    target = root / "exports" / "export-test" / KZ_LOCAL_EXPORT
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(DATA / KZ_LOCAL_EXPORT, target)
    return target


def _vendor_export(root: Path) -> Path:
    """The global vendor's export the audit reads (installed by the artifacts demo)."""
    export = root / artifacts_demo.EXPORT
    return export if export.is_dir() else artifacts_demo.install(root)


def _one(ws: workspace.Workspace, option: str, export: Path, vendor: bool) -> Path:
    from gpudecide.portability.from_export import run_from_export
    from gpudecide.portability.scenario import ExportTestSetup

    name = f"export-test-{option}.yaml"
    path = ws.root / name
    text = f"# Export test plan of {option} (demo), fixed before the test.\n"
    atomic_write_text(path, text + yaml.safe_dump(_plan(option, vendor), sort_keys=False))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    run_id = f"{option}-{stamp}"
    runner = LocalExecutor(timeout=600, warm=True)
    setup = ExportTestSetup(
        plan=load_plan(path),
        plan_path=path,
        work=ws.root / ".export-test-work" / run_id,
        storage=open_storage(str(export.resolve().parent)),
        executor=runner,
        workspace_root=ws.root,
        run_id=run_id,
        option_id=option,
    )
    try:
        result = run_from_export(setup, export)
    finally:
        runner.close()
    return ev.write(result.record, ws.evidence_dir)


def run(
    ws: workspace.Workspace, passing: str = "kz-local", failing: str = "managed-ft"
) -> list[Path]:
    """Test both options' exports as received (in parallel); the evidence files, passing
    one first."""
    provider = install(ws.root)
    vendor = _vendor_export(ws.root)
    with ThreadPoolExecutor(2) as pool:
        good = pool.submit(_one, ws, passing, provider, False)
        bad = pool.submit(_one, ws, failing, vendor, True)
        return [good.result(), bad.result()]


# ---- the provider's export, made once (scripts/make_demo_data.py) -------------------------

_PROVIDER_ENVIRONMENT = {
    "platform": "Linux-5.15.0-qazai-x86_64-with-glibc2.35",
    "executable": "/opt/qazai/finetune/venv/bin/python",
}


def _as_provider(checkpoint: Path) -> None:
    """The checkpoint as the provider's runner wrote it: its environment names the
    provider's machine, and the SHA-256 sums cover the files as they now are."""
    from gpudecide.artifacts.hashing import FileDigest, format_sums
    from gpudecide.fsutil import sha256_path
    from gpudecide.portability import checkpoint as ck

    env_path = checkpoint / ck.ENVIRONMENT
    env = json.loads(env_path.read_text(encoding="utf-8"))
    env.update(_PROVIDER_ENVIRONMENT, container_digest=PROVIDER_IMAGE)
    atomic_write_text(env_path, json.dumps(env, indent=2, sort_keys=True) + "\n")
    files = sorted(p for p in checkpoint.iterdir() if p.name != ck.SUMS)
    digests = [FileDigest(p.name, p.stat().st_size, sha256_path(p)[0]) for p in files]
    atomic_write_text(checkpoint / ck.SUMS, format_sums(digests))


def make_export(target: Path = DATA / KZ_LOCAL_EXPORT) -> Path:
    """Train the run the provider exported (the demo's model, checkpoint at step 4, to the
    end), keep the checkpoint with its full state and the run's metrics, and write the run
    manifest over the folder: the export as the provider hands it back."""
    from gpudecide.portability import checkpoint as ck
    from gpudecide.portability.export import run_info, write_manifest
    from gpudecide.portability.worker import do_train

    plan = ExportTestPlan.model_validate(_plan("kz-local", vendor=False))
    plan.identity.container_digest = PROVIDER_IMAGE
    config = plan.model.train_config("cpu").model_dump()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / KZ_LOCAL_EXPORT
        trained: dict[str, Any] = do_train(
            {"config": config, "output_dir": str(run_dir), "container_digest": PROVIDER_IMAGE}
        )
        checkpoint = run_dir / f"{ck.PREFIX}{plan.model.checkpoint_step}"
        _as_provider(checkpoint)
        atomic_write_text(
            run_dir / "README.md",
            "Exported by QazAI Cloud managed fine-tuning (fictional), run 12: the checkpoint "
            "at step 4 with its full training state, the run's metrics, its run manifest.\n",
        )
        info = run_info(plan, KZ_LOCAL_EXPORT, trained, checkpoint)
        info.provenance.builder_id = "QazAI Cloud fine-tuning export API v2 (fictional)"
        write_manifest(run_dir, info, None)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(run_dir, target)
    return target
