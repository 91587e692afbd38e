"""Pool replay against hand-computed traces and a slow, obviously-correct FIFO reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudecide.queue.replay import (
    Trace,
    longest_queue,
    pool_stats,
    simulate,
    smallest_pool,
    zero_wait_peak,
)


def reference_fifo(
    ready: list[float], runtime: list[float], gpus: list[int], pool: int
) -> list[float]:
    """Strict FIFO by brute force: each job, in arrival order, starts at the first moment at or
    after both its arrival and the previous start when the jobs already placed leave room."""
    order = sorted(range(len(ready)), key=lambda i: (ready[i], i))
    start = [math.nan] * len(ready)
    placed: list[tuple[float, float, int]] = []
    prev = -math.inf
    for i in order:
        if gpus[i] > pool:
            continue
        earliest = max(ready[i], prev)
        candidates = sorted({earliest} | {e for _, e, _ in placed if e > earliest})
        for t in candidates:
            # placed jobs all started at or before t, so usage can only fall after t
            used = sum(g for s, e, g in placed if s <= t < e)
            if used + gpus[i] <= pool:
                start[i] = t
                break
        placed.append((start[i], start[i] + runtime[i], gpus[i]))
        prev = start[i]
    return start


def test_fifo_hand_computed() -> None:
    # pool 4: A(0s, 3 GPUs, 10s) runs; B(1s, 2 GPUs) waits for A; C(2s, 1 GPU) would fit now
    # but strict FIFO keeps it behind B.
    tr = Trace(ready=[0, 1, 2], runtime=[10, 5, 1], gpus=[3, 2, 1])
    out = simulate(tr, 4, "fifo")
    assert out.start.tolist() == [0, 10, 10]
    assert out.end.tolist() == [10, 15, 11]
    assert longest_queue(tr.ready, out.start) == 2


def test_backfill_lets_a_short_job_through() -> None:
    # Same trace under EASY backfill: C needs 1 GPU for 1s, ends before B's reservation (10s).
    tr = Trace(ready=[0, 1, 2], runtime=[10, 5, 1], gpus=[3, 2, 1], limit=[10, 5, 1])
    out = simulate(tr, 4, "backfill")
    assert out.start.tolist() == [0, 10, 2]
    # With a 20 s limit C would still end after the shadow time but uses an "extra" GPU:
    # at 10 s, 4 GPUs free, B needs 2 -> 2 extra; so C may run past the shadow.
    tr2 = Trace(ready=[0, 1, 2], runtime=[10, 5, 1], gpus=[3, 2, 1], limit=[10, 5, 20])
    assert simulate(tr2, 4, "backfill").start.tolist() == [0, 10, 2]
    # Pool 5: B needs all 5 GPUs at its reservation (no extra), so C with a 20 s limit
    # would delay it and must wait until B is done.
    tr3 = Trace(ready=[0, 1, 2], runtime=[10, 5, 1], gpus=[4, 5, 1], limit=[10, 5, 20])
    assert simulate(tr3, 5, "backfill").start.tolist() == [0, 10, 15]


def test_backfill_without_limits_says_so() -> None:
    out = simulate(Trace(ready=[0], runtime=[1], gpus=[1]), 1, "backfill")
    assert any("actual run times" in n for n in out.notes)


def test_priority_preempts_and_loses_work_since_checkpoint() -> None:
    # pool 4: low-priority L (4 GPUs, 100 s) starts at 0; high-priority H (2 GPUs) at 35 s.
    tr = Trace(ready=[0, 35], runtime=[100, 10], gpus=[4, 2], priority=[1, 10])
    out = simulate(tr, 4, "priority", checkpoint_s=30)
    assert out.preemptions == 1
    # L checkpointed at 30 s: 5 s x 4 GPUs lost; it restarts at 45 s with 70 s left.
    assert out.lost_gpu_s == 20
    assert out.start.tolist() == [0, 35]
    assert out.end.tolist() == [115, 45]
    no_ckpt = simulate(tr, 4, "priority")
    assert no_ckpt.lost_gpu_s == 35 * 4 and no_ckpt.end.tolist() == [145, 45]


def test_priority_does_not_preempt_equal_priority() -> None:
    tr = Trace(ready=[0, 1], runtime=[10, 10], gpus=[2, 2], priority=[5, 5])
    out = simulate(tr, 2, "priority")
    assert out.preemptions == 0 and out.start.tolist() == [0, 10]


def test_unplaceable_jobs_and_stats() -> None:
    tr = Trace(ready=[0, 0, 5], runtime=[10, 10, 10], gpus=[2, 16, 2])
    out = simulate(tr, 2, "fifo")
    assert math.isnan(out.start[1])
    stats = pool_stats(
        tr, out, 2, "fifo", span_s=20.0, slo_mask=np.array([True, True, True]), slo_threshold_s=4.0
    )
    assert stats.jobs == 2 and stats.jobs_unplaceable == 1
    assert stats.wait_max_s == 5.0  # third job waits from 5 s to 10 s
    assert stats.slo_violation_share == 0.5
    assert stats.utilisation == (2 * 10 + 2 * 10) / (2 * 20)


def test_smallest_pool_and_zero_wait_peak() -> None:
    tr = Trace(ready=[0, 0, 0, 0], runtime=[10, 10, 10, 10], gpus=[1, 1, 1, 1])
    assert zero_wait_peak(tr) == 4

    def meets(n: int) -> bool:
        out = simulate(tr, n, "fifo")
        return bool(((out.start - tr.ready) <= 10).mean() >= 1.0)

    assert smallest_pool(tr, meets) == 2  # two rounds of 10 s: the last waits exactly 10 s


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(1, 30), st.integers(1, 6)),
        min_size=1,
        max_size=25,
    ),
    st.integers(1, 8),
)
def test_fifo_matches_reference(jobs: list[tuple[int, int, int]], pool: int) -> None:
    ready = [float(r) for r, _, _ in jobs]
    runtime = [float(d) for _, d, _ in jobs]
    gpus = [g for _, _, g in jobs]
    got = simulate(Trace(ready=ready, runtime=runtime, gpus=gpus), pool, "fifo").start
    want = reference_fifo(ready, runtime, gpus, pool)
    assert np.array_equal(got, np.array(want), equal_nan=True)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(1, 30), st.integers(1, 4), st.integers(0, 20)),
        min_size=1,
        max_size=20,
    ),
    st.integers(1, 6),
)
def test_backfill_never_delays_and_never_overfills(
    jobs: list[tuple[int, int, int, int]], pool: int
) -> None:
    """Properties of EASY backfill: capacity holds at every instant, no job starts before it
    is ready, every job that fits the pool runs."""
    ready = np.array([r for r, _, _, _ in jobs], float)
    runtime = np.array([d for _, d, _, _ in jobs], float)
    gpus = np.array([g for _, _, g, _ in jobs])
    tr = Trace(ready=ready, runtime=runtime, gpus=gpus, limit=runtime)
    out = simulate(tr, pool, "backfill")
    ok = ~np.isnan(out.start)
    assert (out.start[ok] >= ready[ok]).all()
    for t in np.unique(out.start[ok]):
        running = ok & (out.start <= t) & (out.end > t)
        assert gpus[running].sum() <= pool
    assert (ok == (gpus <= pool)).all()


@pytest.mark.parametrize("policy", ["fifo", "backfill", "priority"])
def test_capacity_is_never_exceeded(policy: str) -> None:
    rng = np.random.default_rng(3)
    n = 300
    tr = Trace(
        ready=np.sort(rng.uniform(0, 5000, n)),
        runtime=rng.uniform(10, 600, n),
        gpus=rng.integers(1, 5, n),
        limit=rng.uniform(600, 900, n),
        priority=rng.integers(0, 3, n),
    )
    out = simulate(tr, 8, policy)  # type: ignore[arg-type]
    assert not np.isnan(out.start).any()
    events = sorted({*out.start.tolist()})
    for t in events:
        if policy == "priority":
            break  # preempted runs are not intervals of (first start, final end)
        live = (out.start <= t) & (out.end > t)
        assert tr.gpus[live].sum() <= 8
