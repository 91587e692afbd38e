"""The drills' part of the demo: GPU telemetry of the demo pool, the cordon decision, a game day.

`install(root, option_id)` copies the demo telemetry (nvidia-smi CSV captures, a
dcgm-exporter dump, a dcgmi dmon table and kernel logs, in `demo_data/telemetry/`) into the
workspace's `telemetry/` and points `drills.yaml` at the demo's owned pool; `run(ws,
option_id)` decides the cordon actions for that option's nodes (the article's ECC case: the
GPU with rising corrected errors is cordoned, the double-bit ECC and Xid 79 nodes drained
beyond the breaker's share; never applied, so the record says no cordon is wired to a
scheduler) and runs all five drills with the real training job, on this machine.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gpudecide import workspace
from gpudecide.drills import cordon_run, drill_run
from gpudecide.fsutil import atomic_write_text

__all__ = [
    "DATA",
    "DEMO_OPTION",
    "install",
    "run",
]

DATA = Path(__file__).parent / "demo_data" / "telemetry"
DEMO_OPTION = "owned-8xh100"


def install(root: Path, option_id: str = DEMO_OPTION) -> list[Path]:
    """Copy the demo telemetry into `root/telemetry/`; drills.yaml names `option_id`."""
    target = root / cordon_run.TELEMETRY_DIR
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for src in sorted(DATA.iterdir()):
        dest = target / src.name
        shutil.copyfile(src, dest)
        written.append(dest)
    template = workspace.template_files()[drill_run.CONFIG_NAME]
    config = root / drill_run.CONFIG_NAME
    atomic_write_text(config, template.replace("option: owned-pool", f"option: {option_id}"))
    written.append(config)
    return written


def run(ws: workspace.Workspace, option_id: str) -> list[Path]:
    """Cordon decision on the demo telemetry, then a game day on `option_id`; records written."""
    if not (ws.root / cordon_run.TELEMETRY_DIR).is_dir():
        install(ws.root)
    cordon = cordon_run.run_cordon([], ws=ws, option=option_id)
    drills = drill_run.run_drills("all", ws=ws, option=option_id)
    return [p for p in (cordon.written, *drills.evidence) if p is not None]
