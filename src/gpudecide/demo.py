"""The demo workspace: a fictional bank's ML platform team and 8 weeks of its Slurm log.

Its data are files in the packages, in the formats a team gives (`demo_data/` beside each
package's `demo.py`; the log and the export are generated once by
`scripts/make_demo_data.py`). `create` lays them out as a workspace; `run` runs every
analysis on it in report order, each package's own part of the demo doing its share.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpudecide import workspace
from gpudecide.artifacts import demo as artifacts_demo
from gpudecide.cost import demo as cost_demo
from gpudecide.cost.runs import CostRun
from gpudecide.decision import demo as decision_demo
from gpudecide.decision.assess import Assessment
from gpudecide.drills import demo as drills_demo
from gpudecide.errors import InputError
from gpudecide.fsutil import atomic_write_bytes
from gpudecide.governance import demo as governance_demo
from gpudecide.jobs import demo as jobs_demo
from gpudecide.jobs.log_command import workspace_logs
from gpudecide.jobs.profile import ProfileResult
from gpudecide.portability import demo as portability_demo
from gpudecide.queue import demo as queue_demo

__all__ = ["CONFIG_DATA", "DemoRun", "create", "run"]


CONFIG_DATA = Path(__file__).parent / "demo_data" / workspace.CONFIG_NAME


def create(root: Path, *, force: bool = False) -> workspace.Workspace:
    """Write the demo workspace (config, template files, the sacct log, costs) and load it."""
    if root.exists() and any(root.iterdir()) and not force:
        raise InputError(
            "folder is not empty", path=root, hint="pass --force to reuse it, or pick another"
        )
    workspace.init(root, force=True)
    atomic_write_bytes(root / workspace.CONFIG_NAME, CONFIG_DATA.read_bytes())
    jobs_demo.install(root)
    queue_demo.install(root)  # the lifecycle marks the team's training jobs wrote
    cost_demo.install(root)
    decision_demo.install(root)
    drills_demo.install(root)
    for stale in (root / "evidence").glob("*.json"):
        stale.unlink()
    return workspace.load(root)


@dataclass
class DemoRun:
    """What the demo computed, and the evidence records it wrote (in report order)."""

    profile: ProfileResult
    queue: dict[str, Any]
    replay: dict[str, Any]
    cost: CostRun
    audit: Path
    decision: Assessment
    evidence: list[Path]


def run(ws: workspace.Workspace) -> DemoRun:
    """Run every analysis of the demo workspace and write its evidence."""
    loaded = workspace_logs(ws)
    profile, profile_written = jobs_demo.run(loaded)
    queue, queue_written, replay, replay_written = queue_demo.run(loaded)
    cost = cost_demo.run(ws)
    audited = artifacts_demo.run(ws)
    # Our own pipeline through the local provider passes; the global vendor's export (no
    # optimizer state) cannot resume: the same story as the vendor export's audit.
    export_tests = portability_demo.run(ws, passing="kz-local", failing="managed-ft")
    hybrid_written = decision_demo.run_hybrid(ws)
    governance = [p for p in governance_demo.run(ws) if p.parent == ws.evidence_dir]
    written = [profile_written, queue_written, replay_written, cost.written, audited]
    drills = drills_demo.run(ws, "owned-8xh100")
    written += [*export_tests, *drills, hybrid_written, *governance]
    decision, decision_written = decision_demo.run(ws)  # last: it reads every record above
    written.append(decision_written)
    return DemoRun(profile, queue, replay, cost, audited, decision, [p for p in written if p])
