"""The demo's queue analysis and pool replay, on the demo job log and the template slo.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpudecide.jobs.cli import Loaded
from gpudecide.queue import slo as slo_mod
from gpudecide.queue.cli import run_queue, run_replay_for, slo_path_of

# Pool sizes around the 8-GPU pools the demo's costs.yaml prices.
POOL_SIZES = [4, 8, 12, 16, 24]


def run(loaded: Loaded) -> tuple[dict[str, Any], Path | None, dict[str, Any], Path | None]:
    """Queue figures and a peak-month FIFO replay against the normal SLO, with their records."""
    slo_path = slo_path_of(None, loaded.ws)
    slos = slo_mod.load(slo_path) if slo_path else None
    queue_figures, queue_written = run_queue(loaded, slo_path, slos, None)
    replay_figures, replay_written = run_replay_for(
        loaded,
        POOL_SIZES,
        "fifo",
        "peak",
        ("normal", slos.slos["normal"]) if slos else None,
        slo_path,
    )
    return queue_figures, queue_written, replay_figures, replay_written
