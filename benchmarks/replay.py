"""Replay 1,000,000 jobs through a FIFO pool: gpudecide against the same model in SimPy.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/replay.py [--jobs 1000000] [--pool 64] [--simpy-jobs N]

The trace is a realistic mix of 1-8 GPU jobs (mostly small, a few whole-node trainings) with
Poisson arrivals sized for about 85 % load on the pool. Both sides compute every job's start
time; they are compared job by job before any time is printed. Then a 16-size sweep (what
`gpudecide replay --gpus auto` may evaluate) is timed. Targets (issue): >= 20x faster than
SimPy, under 10 s for 1M jobs on a 2-core machine, 16-size sweep under 60 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

from gpudecide.queue.replay import Trace, pool_stats, simulate


def make_trace(jobs: int, pool: int, seed: int = 11) -> Trace:
    """Poisson arrivals; GPUs 1/2/4/8 with weights 55/25/12/8 %; log-normal run times."""
    rng = np.random.default_rng(seed)
    gpus = rng.choice([1, 2, 4, 8], size=jobs, p=[0.55, 0.25, 0.12, 0.08])
    runtime = np.clip(rng.lognormal(mean=np.log(1800), sigma=1.2, size=jobs), 60, 3 * 86400)
    load = 0.85
    mean_work = float((gpus * runtime).mean())
    gap = mean_work / (pool * load)
    ready = np.cumsum(rng.exponential(gap, size=jobs))
    return Trace(ready=ready, runtime=runtime, gpus=gpus)


def simpy_fifo(trace: Trace, pool: int) -> np.ndarray:
    """The same strict-FIFO pool written the usual SimPy way: a Container of GPUs."""
    import simpy

    env = simpy.Environment()
    gpus_left = simpy.Container(env, capacity=pool, init=pool)
    start = np.full(len(trace), np.nan)
    ready = trace.ready.tolist()
    runtime = trace.runtime.tolist()
    gpus = trace.gpus.tolist()

    def job(i: int):  # type: ignore[no-untyped-def]
        yield gpus_left.get(gpus[i])
        start[i] = env.now
        yield env.timeout(runtime[i])
        yield gpus_left.put(gpus[i])

    def arrivals():  # type: ignore[no-untyped-def]
        for i in np.argsort(trace.ready, kind="stable").tolist():
            if gpus[i] > pool:
                continue
            delay = ready[i] - env.now
            if delay > 0:
                yield env.timeout(delay)
            env.process(job(i))

    env.process(arrivals())
    env.run()
    return start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--pool", type=int, default=64)
    parser.add_argument(
        "--simpy-jobs",
        type=int,
        default=None,
        help="jobs for the SimPy side (default: the same as --jobs)",
    )
    args = parser.parse_args()
    trace = make_trace(args.jobs, args.pool)
    print(f"machine: {os.cpu_count()} cores; {args.jobs:,} jobs on a {args.pool}-GPU pool")

    t = time.perf_counter()
    ours = simulate(trace, args.pool, "fifo")
    ours_s = time.perf_counter() - t
    span = float(np.nanmax(ours.end) - trace.ready.min())
    stats = pool_stats(trace, ours, args.pool, "fifo", span_s=span)
    events = 2 * args.jobs

    n_simpy = args.simpy_jobs or args.jobs
    sub = Trace(
        ready=trace.ready[:n_simpy], runtime=trace.runtime[:n_simpy], gpus=trace.gpus[:n_simpy]
    )
    t = time.perf_counter()
    theirs = simpy_fifo(sub, args.pool)
    simpy_s = time.perf_counter() - t
    t = time.perf_counter()
    ours_sub = simulate(sub, args.pool, "fifo").start
    ours_sub_s = time.perf_counter() - t
    if not np.allclose(ours_sub, theirs, rtol=0, atol=1e-6, equal_nan=True):
        bad = int((~np.isclose(ours_sub, theirs, rtol=0, atol=1e-6, equal_nan=True)).sum())
        raise SystemExit(f"start times differ from SimPy for {bad} of {n_simpy} jobs")

    sizes = [args.pool // 2 + i * max(1, args.pool // 16) for i in range(16)]
    t = time.perf_counter()
    for n in sizes:
        simulate(trace, n, "fifo")
    sweep_s = time.perf_counter() - t

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ratio = (simpy_s / n_simpy) / (ours_sub_s / n_simpy)
    print(f"same start times as SimPy for all {n_simpy:,} jobs")
    print(
        f"gpudecide FIFO: {ours_s:.2f} s for {args.jobs:,} jobs = {events / ours_s:,.0f} events/s "
        f"(p95 wait {stats.wait_p95_s / 60:.0f} min, utilisation {stats.utilisation:.1%}, "
        f"longest queue {stats.longest_queue})"
    )
    print(
        f"SimPy FIFO    : {simpy_s:.2f} s for {n_simpy:,} jobs = "
        f"{2 * n_simpy / simpy_s:,.0f} events/s (gpudecide on the same jobs: {ours_sub_s:.2f} s)"
    )
    print(f"ratio         : {ratio:.1f}x (target >= 20x); 1M under 10 s: {ours_s < 10}")
    print(f"16-size sweep : {sweep_s:.1f} s for pools {sizes[0]}..{sizes[-1]} (target < 60 s)")
    print(f"peak memory   : {peak_mb:.0f} MB (whole process, both simulators)")


if __name__ == "__main__":
    main()
