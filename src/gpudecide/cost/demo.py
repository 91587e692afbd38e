"""costs.yaml of the demo team (a fictional Kazakh bank's ML platform team, prices in KZT).

Five options: an owned 8xH100 server in an Almaty data centre, a rented dedicated 8-GPU pool,
a managed fine-tuning endpoint of a global cloud, a local Kazakhstan provider's managed
service (SPEC H4), and a hybrid: a small local 2-GPU pool for evaluations and smoke runs with
the trainings sent to the local provider. Vendors, quotes and clauses are fictional; the
amounts are of a plausible size for 2026 (about 500 KZT to the US dollar, stated nowhere in
the file because gpudecide never converts).

The file is package data (`demo_data/costs.yaml`), in the format a team writes.
"""

from __future__ import annotations

from pathlib import Path

from gpudecide.cost.runs import CostRun, run_cost
from gpudecide.cost.schema import COSTS_NAME
from gpudecide.fsutil import atomic_write_text
from gpudecide.workspace import Workspace

__all__ = [
    "COSTS_DATA",
    "demo_costs_yaml",
    "install",
    "run",
]

COSTS_DATA = Path(__file__).parent / "demo_data" / COSTS_NAME


def demo_costs_yaml() -> str:
    """The demo team's costs.yaml (KZT; fictional vendors, plausible 2026 prices)."""
    return COSTS_DATA.read_text(encoding="utf-8")


def install(root: Path) -> None:
    """Write the demo's costs.yaml into the workspace."""
    atomic_write_text(root / COSTS_NAME, demo_costs_yaml())


def run(ws: Workspace) -> CostRun:
    """Cost every demo option against the workspace's newest profile and replay evidence."""
    return run_cost(ws.root)
