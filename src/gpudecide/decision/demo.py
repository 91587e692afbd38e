"""The demo's part of the decision: its hybrid's contours (`check hybrid`), then `assess`.

The hybrid's inputs are package data (`demo_data/`: hybrid.yaml and a run manifest per
contour), written once by `scripts/make_demo_data.py`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gpudecide import evidence as ev
from gpudecide.decision import hybrid
from gpudecide.decision.assess import Assessment, decide
from gpudecide.workspace import Workspace

__all__ = ["DATA", "install", "run", "run_hybrid"]


DATA = Path(__file__).parent / "demo_data"


def install(root: Path) -> None:
    """Copy hybrid.yaml and the contours' run manifests into the workspace."""
    shutil.copytree(DATA / "runs", root / "runs", dirs_exist_ok=True)
    shutil.copyfile(DATA / hybrid.HYBRID_NAME, root / hybrid.HYBRID_NAME)


def run_hybrid(ws: Workspace) -> Path:
    """Check the demo hybrid and write its record."""
    record = hybrid.check(ws.root / hybrid.HYBRID_NAME, ws.config.options, ws.root)
    return ev.write(record, ws.evidence_dir)


def run(ws: Workspace) -> tuple[Assessment, Path]:
    """Assess the demo workspace: the decision and its record."""
    return decide(ws)
