"""Wall time of a whole game day: the five drills in sequence, and each one apart.

    .venv/bin/python benchmarks/drills_game_day.py                   # all cores
    taskset -c 0,1 .venv/bin/python benchmarks/drills_game_day.py    # on 2 CPU cores
    .venv/bin/python benchmarks/drills_game_day.py --repeat 3 --json
    .venv/bin/python benchmarks/drills_game_day.py --cold            # a fresh interpreter a job

Each drill starts real training processes (a tiny causal LM on the CPU). As `gpudecide drill
all` does, they fork from one warm zygote (torch imported once); `--cold` starts a fresh
interpreter per job instead. The load average at the start is printed beside the figures,
since other work on the machine stretches them.

Target (issue 13): all five drills together under about 60 s on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from gpudecide.drills.drill_run import RUNNERS
from gpudecide.drills.launch import Zygote
from gpudecide.drills.names import DRILLS
from gpudecide.drills.runner import DrillContext


def one_day(root: Path, warm: bool) -> dict[str, Any]:
    """Run every drill once; seconds per drill and in total (zygote start included)."""
    per: dict[str, float] = {}
    verdicts: dict[str, str] = {}
    started = time.perf_counter()
    ctx = DrillContext(root=root, zygote=Zygote() if warm else None)
    per["zygote"] = round(time.perf_counter() - started, 2)
    try:
        for name in DRILLS:
            t = time.perf_counter()
            verdicts[name] = RUNNERS[name](ctx).verdict
            per[name] = round(time.perf_counter() - t, 2)
    finally:
        if ctx.zygote is not None:
            ctx.zygote.close()
    return {
        "total_s": round(time.perf_counter() - started, 2),
        "drills_s": per,
        "verdicts": verdicts,
    }


def main() -> None:
    """Parse arguments, run the game days, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--cold", action="store_true", help="A fresh interpreter per job (no zygote)."
    )
    args = parser.parse_args()
    runs = []
    load = os.getloadavg()[0]
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="gpudecide-game-day.") as tmp:
            runs.append(one_day(Path(tmp), warm=not args.cold))
    totals = [r["total_s"] for r in runs]
    result = {
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_at_start": round(load, 2),
        "best_total_s": min(totals),
        "totals_s": totals,
        "runs": runs,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['cpus']} CPUs, load average {load:.2f} at the start")
    for r in runs:
        parts = ", ".join(
            f"{k} {v:g} s ({r['verdicts'].get(k, 'start')})" for k, v in r["drills_s"].items()
        )
        print(f"game day {r['total_s']:g} s: {parts}")
    print(f"best {min(totals):g} s over {len(totals)} run(s)")


if __name__ == "__main__":
    main()
