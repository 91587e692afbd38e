"""The demo's queue analysis and pool replay, on the demo job log and the template slo.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpudecide.jobs.cli import Loaded
from gpudecide.queue import slo as slo_mod
from gpudecide.queue.runs import (
    QueueSettings,
    ReplaySettings,
    run_queue,
    run_replay,
    slo_path_of,
)

__all__ = ["POOL_SIZES", "run"]

# Pool sizes around the 8-GPU pools the demo's costs.yaml prices.
POOL_SIZES = [4, 8, 12, 16, 24]


def run(loaded: Loaded) -> tuple[dict[str, Any], Path | None, dict[str, Any], Path | None]:
    """Queue figures and a peak-month FIFO replay against the normal SLO, with their records."""
    slo_path = slo_path_of(None, loaded.ws)
    slos = slo_mod.load(slo_path) if slo_path else None
    queue = run_queue(loaded, QueueSettings(slo_path=slo_path, slos=slos))
    replay = run_replay(
        loaded,
        ReplaySettings(
            sizes=POOL_SIZES,
            policy="fifo",
            window="peak",
            slo=("normal", slos.slos["normal"]) if slos else None,
            slo_path=slo_path,
        ),
    )
    return queue.figures, queue.written, replay.figures, replay.written
