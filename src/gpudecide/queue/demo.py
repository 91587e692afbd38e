"""The demo's queue analysis and pool replay, on the demo job log, its lifecycle marks and
the template slo.yaml.

The demo team adopted `gpudecide.marks` in its training, evaluation and export scripts:
most GPU jobs of the log wrote their preparation start, first training step and
checkpoints (`demo_data/marks/`, one marks JSONL per job and node as the writer names them,
generated once from the log by `scripts/make_demo_data.py`). The scheduled evaluation of
the production model and the notebook never did, so the report still shows what is
unmeasured; the node that failed cut its last line short, and one job ran after the log
was exported, so the report shows marks it could not use too.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from gpudecide.jobs.log_command import MARKS_FOLDER, Loaded, marks_folders
from gpudecide.queue import slo as slo_mod
from gpudecide.queue.runs import (
    QueueSettings,
    ReplaySettings,
    run_queue,
    run_replay,
    slo_path_of,
)

__all__ = ["MARKS_DATA", "POOL_SIZES", "install", "run"]

# Pool sizes around the 8-GPU pools the demo's costs.yaml prices.
POOL_SIZES = [4, 8, 12, 16, 24]
MARKS_DATA = Path(__file__).parent / "demo_data" / "marks"


def install(root: Path) -> list[Path]:
    """Copy the demo's lifecycle marks into the workspace's `marks/` folder."""
    target = root / MARKS_FOLDER
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for src in sorted(MARKS_DATA.glob("*.jsonl")):
        dest = target / src.name
        shutil.copyfile(src, dest)
        written.append(dest)
    return written


def run(loaded: Loaded) -> tuple[dict[str, Any], Path | None, dict[str, Any], Path | None]:
    """Queue figures and a peak-month FIFO replay against the normal SLO, with the
    workspace's marks as `gpudecide queue` reads them, and their records."""
    slo_path = slo_path_of(None, loaded.ws)
    slos = slo_mod.load(slo_path) if slo_path else None
    marks = tuple(marks_folders(None, loaded.ws))
    queue = run_queue(loaded, QueueSettings(slo_path=slo_path, slos=slos, marks=marks))
    replay = run_replay(
        loaded,
        ReplaySettings(
            sizes=POOL_SIZES,
            policy="fifo",
            window="peak",
            slo=("normal", slos.slos["normal"]) if slos else None,
            slo_path=slo_path,
            marks=marks,
        ),
    )
    return queue.figures, queue.written, replay.figures, replay.written
