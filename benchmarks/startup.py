"""Start-up of the command line: five everyday commands against the bare import of its libraries.

    .venv/bin/python benchmarks/startup.py                       # builds a demo (~2 min) once
    .venv/bin/python benchmarks/startup.py --workspace DIR       # reuses a demo workspace
    .venv/bin/python benchmarks/startup.py --workspace DIR --runs 11

Every run is a fresh process, timed from outside from its start to its exit (what a person
waits for): `gpudecide --help`, `init DIR` (a new folder each run), `evidence`, `check raci`
and `assess --json` on the demo workspace. The floor is the same interpreter importing only
the CLI's own libraries (`python -c "import typer, rich, pydantic, yaml"`), timed in the same
run and interleaved with the commands so that the machine's load moves both alike. One
warm-up run of each is not counted (page cache, bytecode). The median of `--runs` is printed.

The commands run with their bytecode cached, as an installed package has it (pip compiles
it on install): PYTHONDONTWRITEBYTECODE is taken out of their environment, so the warm-up
writes `__pycache__` for the source tree. `--no-bytecode` keeps the environment as it is
(every gpudecide module compiled from source on every run, where that variable is set).

Target (issue 25): each command <= 0.3 s, or <= 2.5x the floor, whichever is larger.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 0.3
TARGET_X_FLOOR = 2.5
FLOOR = [sys.executable, "-c", "import typer, rich, pydantic, yaml"]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _gpudecide() -> list[str]:
    """The console script beside this interpreter (what people run), else `-m gpudecide`."""
    script = Path(sys.executable).with_name("gpudecide")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gpudecide"]


def _once(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Seconds from start to exit of one fresh process; a usage error or a crash stops the
    benchmark (exit 1 is a check that failed on the demo, an answer like any other)."""
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)}: exit {done.returncode}\n{done.stderr.decode()[-2000:]}")
    return took


def build_demo(base: Path) -> Path:
    """A demo workspace (`gpudecide demo --out`), built once for the evidence commands."""
    ws = base / "demo"
    print(f"building the demo workspace in {ws} (about 2 minutes) ...", flush=True)
    subprocess.run([*_gpudecide(), "demo", "--out", str(ws)], check=True, stdout=subprocess.DEVNULL)
    return ws


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", type=Path, help="a demo workspace to reuse")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each (median)")
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE as the environment sets it",
    )
    args = parser.parse_args()
    env = dict(os.environ)
    if not args.no_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)

    scratch = Path(tempfile.mkdtemp(prefix="gpudecide-startup-"))
    try:
        ws = args.workspace.resolve() if args.workspace else build_demo(scratch)
        gd = _gpudecide()
        init_dirs = iter(scratch / f"init-{i}" for i in range(args.runs + 1))
        commands: dict[str, list[str] | None] = {
            "floor: import typer, rich, pydantic, yaml": FLOOR,
            "gpudecide --help": [*gd, "--help"],
            "gpudecide init DIR": None,  # a new folder each run, made below
            # Run in the workspace, found from here up as people use it.
            "gpudecide evidence": [*gd, "evidence"],
            "gpudecide check raci": [*gd, "check", "raci"],
            "gpudecide assess --json": [*gd, "assess", "--json"],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        # Round-robin: run r of every command, then run r + 1, so that a burst of load on
        # the shared machine lands on all of them rather than on one command's runs.
        for r in range(args.runs + 1):
            for name, argv in commands.items():
                if argv is None:
                    argv = [*gd, "init", str(next(init_dirs))]
                took = _once(argv, ws, env)
                if r > 0:
                    times[name].append(took)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    medians = {name: statistics.median(ts) for name, ts in times.items()}
    floor = medians.pop("floor: import typer, rich, pydantic, yaml")
    target = max(TARGET_S, TARGET_X_FLOOR * floor)
    cached = "no" if "PYTHONDONTWRITEBYTECODE" in env else "yes"
    print(
        f"machine: {_cores()} cores, load {os.getloadavg()[0]:.2f}; median of {args.runs} runs;"
        f" bytecode cached: {cached}"
    )
    print(f"floor (import typer, rich, pydantic, yaml): {floor:.3f} s")
    print(f"target: <= {target:.3f} s (max of {TARGET_S} s and {TARGET_X_FLOOR}x the floor)")
    width = max(len(name) for name in medians)
    failed = 0
    for name, median in medians.items():
        spread = f"{min(times[name]):.3f}-{max(times[name]):.3f}"
        verdict = "PASS" if median <= target else "FAIL"
        failed += verdict == "FAIL"
        print(f"  {name:<{width}}  {median:.3f} s  ({spread})  {median / floor:4.1f}x  {verdict}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
