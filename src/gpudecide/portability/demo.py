"""The demo's export tests, run for real on a tiny model (seconds on a laptop CPU).

Two options are tested with the same plan shape: the team's own pool exports everything
and passes; the managed vendor's export leaves out the optimizer state (as vendor consoles
often do: weights, trainer state and their own package only), so the resume cannot continue
from the expected step and the test fails: that option's stop factor in the decision.
Both run as real jobs (a fresh process each) against the workspace's exports folder.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import yaml

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.fsutil import atomic_write_text
from gpudecide.portability.executors import LocalExecutor
from gpudecide.portability.plan import load_plan
from gpudecide.portability.scenario import ExportTestSetup, run_export_test
from gpudecide.portability.storage import open_storage

__all__ = [
    "COMMIT",
    "IMAGE",
    "MODEL",
    "run",
]

# Fictional identifiers of the demo team's training code and image.
COMMIT = "3f9c2a7d1e5b8c0a4f6d2e9b7a1c3e5f7d9b2a4c"
IMAGE = "registry.bank.example/ml/train@sha256:" + "5e" * 32
# One thread per job: the two tests run side by side, and a tiny model gains nothing from more.
MODEL = {"size": "tiny", "steps": 8, "checkpoint_step": 4, "n_sequences": 64, "threads": 1}


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
        "identity": {
            "code_commit": COMMIT,
            "container_digest": IMAGE,
            "retention_class": "regulated-3y",
        },
        "manual": manual,
    }


def _one(ws: workspace.Workspace, option: str, vendor: bool) -> Path:
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
        storage=open_storage(str(ws.root / "exports" / "export-test")),
        executor=runner,
        workspace_root=ws.root,
        run_id=run_id,
        drop_from_export=("optimizer.pt",) if vendor else (),
    )
    try:
        result = run_export_test(setup)
    finally:
        runner.close()
    return ev.write(result.record, ws.evidence_dir)


def run(
    ws: workspace.Workspace, passing: str = "owned-pool", failing: str = "managed-endpoint"
) -> list[Path]:
    """Run both export tests (in parallel); return the evidence files, passing one first."""
    with ThreadPoolExecutor(2) as pool:
        good = pool.submit(_one, ws, passing, False)
        bad = pool.submit(_one, ws, failing, True)
        return [good.result(), bad.result()]
