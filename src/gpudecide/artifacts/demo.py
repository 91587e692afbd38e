"""The demo's export audit: what a managed vendor handed back after run 7 (fictional).

The vendor exported a LoRA adapter whose config names its base model without a revision,
the adapter weights (bf16 safetensors, written here byte by byte in the format's layout),
the trainer state, and a `vendor_state.vpk` only its SDK reads; no optimizer state. The
team's retention.yaml answers two of the five A8 questions, one of them "who sees the keys":
the bank's HSM admins only, the vendor never (key_custody: team). The export is the
vendor's own (`vendor_export`): managed-ft is a managed option. The audit finds three stop
factors (E5) and writes its evidence into the demo workspace, so the report shows them.

The export and the answered retention.yaml are data files in the package (`demo_data/`),
written once by `scripts/make_demo_data.py`; `run` copies them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.artifacts import audit, runs
from gpudecide.fsutil import atomic_write_bytes

__all__ = [
    "DATA",
    "EXPORT",
    "OPTION",
    "install",
    "run",
]

EXPORT = "exports/vendor-run-7"
DATA = Path(__file__).parent / "demo_data"


def install(root: Path) -> Path:
    """Copy the export and the answered retention.yaml into the workspace."""
    export = root / EXPORT
    if export.exists():
        shutil.rmtree(export)
    shutil.copytree(DATA / "vendor-run-7", export)
    atomic_write_bytes(root / "retention.yaml", (DATA / "retention.yaml").read_bytes())
    return export


# The vendor of the story: the global cloud's managed endpoint declared in the demo's options.
OPTION = "managed-ft"


def run(ws: workspace.Workspace) -> Path:
    """Install the export, audit it as the export of OPTION, write the evidence record."""
    export = install(ws.root)
    vendor = runs.vendor_of(OPTION, ws)
    result = audit.run(export, workspace_root=ws.root, option=OPTION, from_vendor=vendor)
    return ev.write(result.record, ws.evidence_dir)
