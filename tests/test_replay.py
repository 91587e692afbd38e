"""Pool replay against hand-computed traces and a slow, obviously-correct FIFO reference."""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import event, given, settings, target
from hypothesis import strategies as st

from gpudecide.queue.replay import (
    POLICIES,
    Outcome,
    Trace,
    longest_queue,
    parse_sizes,
    pool_stats,
    simulate,
    smallest_pool,
    zero_wait_peak,
)

from .conftest import MUTATION, examples
from .logs import job, write_csv


def reference_fifo(
    ready: list[float], runtime: list[float], gpus: list[int], pool: int
) -> list[float]:
    """Strict FIFO by brute force: each job, in arrival order, starts at the first moment at or
    after both its arrival and the previous start when the jobs already placed leave room.
    Jobs ready together arrive smallest first (GPUs, then run time), as the module promises."""
    order = sorted(range(len(ready)), key=lambda i: (ready[i], gpus[i], runtime[i], i))
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


@settings(max_examples=examples(150), deadline=None)
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


@settings(max_examples=examples(80), deadline=None)
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


def _runs(tr: Trace, out: Outcome) -> list[tuple[int, float, float]]:
    """Every interval a job held its GPUs: the recorded runs under priority, else start-end."""
    if out.runs:
        return out.runs
    return [
        (j, float(out.start[j]), float(out.end[j]))
        for j in range(len(tr))
        if not math.isnan(out.start[j])
    ]


def _peak_use(tr: Trace, runs: list[tuple[int, float, float]]) -> int:
    """Most GPUs held at any instant (an interval holds [start, end); ends free first)."""
    peak = 0
    for t in {s for _, s, _ in runs}:
        peak = max(peak, sum(int(tr.gpus[j]) for j, s, e in runs if s <= t < e))
    return peak


@pytest.mark.parametrize("policy", POLICIES)
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
    out = simulate(tr, 8, policy, checkpoint_s=120)  # type: ignore[arg-type]
    assert not np.isnan(out.start).any() and not np.isnan(out.end).any()
    runs = _runs(tr, out)
    # The load is high enough that the pool is full at some moment: the check has teeth.
    assert _peak_use(tr, runs) == 8
    if policy == "priority":
        assert out.preemptions > 0 and len(runs) == n + out.preemptions
    # No run starts before its job is ready.
    assert all(s >= tr.ready[j] for j, s, _ in runs)


@settings(max_examples=examples(120), deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 40), st.integers(1, 30), st.integers(1, 4), st.integers(0, 3)),
        min_size=2,
        max_size=18,
    ),
    st.integers(1, 6),
    st.sampled_from([None, 7.0]),
)
def test_priority_never_overfills_and_accounts_for_lost_work(
    jobs: list[tuple[int, int, int, int]], pool: int, checkpoint: float | None
) -> None:
    """Priority with preemption: capacity holds over every run, each job's runs add up to its
    run time plus the work it lost, and the lost GPU-seconds are exactly those."""
    tr = Trace(
        ready=[r for r, _, _, _ in jobs],
        runtime=[d for _, d, _, _ in jobs],
        gpus=[g for _, _, g, _ in jobs],
        priority=[p for _, _, _, p in jobs],
    )
    out = simulate(tr, pool, "priority", checkpoint_s=checkpoint)
    event(f"preemptions>0: {out.preemptions > 0}")
    target(float(out.preemptions), label="preemptions")
    assert _peak_use(tr, out.runs) <= pool
    fits = tr.gpus <= pool
    assert (np.isnan(out.start) == ~fits).all()
    held = np.zeros(len(tr))
    for j, s, e in out.runs:
        assert e > s >= tr.ready[j]
        held[j] += e - s
    # GPU-seconds held = useful work + work thrown away at preemptions.
    useful = float((tr.gpus[fits] * tr.runtime[fits]).sum())
    assert math.isclose(float((tr.gpus * held).sum()), useful + out.lost_gpu_s, abs_tol=1e-6)
    assert out.preemptions == len(out.runs) - int(fits.sum())


def _head_reservation(tr: Trace, out: Outcome, head: int, t: float, pool: int) -> float:
    """Earliest moment >= t at which the jobs running at t (ending at their limits, here their
    run times) leave room for `head`: the reservation EASY backfill promises the head."""
    running = [
        (out.end[j], int(tr.gpus[j])) for j in range(len(tr)) if out.start[j] <= t < out.end[j]
    ]
    free = pool - sum(g for _, g in running)
    for when in [t, *sorted(e for e, _ in running)]:
        free_then = pool - sum(g for e, g in running if e > when)
        if free_then >= tr.gpus[head]:
            return float(when)
    raise AssertionError(f"no reservation for {head} (free {free})")


@settings(max_examples=examples(120), deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(1, 30), st.integers(1, 4)),
        min_size=2,
        max_size=16,
    ),
    st.integers(2, 6),
)
def test_backfill_never_delays_the_head_job(jobs: list[tuple[int, int, int]], pool: int) -> None:
    """With exact time limits, whenever a job is at the head of the queue it starts no later
    than the reservation it holds at that moment: backfilled jobs never push it back."""
    ready = np.array([r for r, _, _ in jobs], float)
    runtime = np.array([d for _, d, _ in jobs], float)
    gpus = np.array([g for _, _, g in jobs])
    tr = Trace(ready=ready, runtime=runtime, gpus=gpus, limit=runtime)
    out = simulate(tr, pool, "backfill")
    fifo = simulate(tr, pool, "fifo")
    order = [int(i) for i in tr.arrival_order if gpus[i] <= pool]
    moments = sorted({*ready.tolist(), *out.start[~np.isnan(out.start)].tolist()})
    heads = 0
    for t in moments:
        waiting = [j for j in order if ready[j] <= t and out.start[j] > t]
        if not waiting:
            continue
        head = waiting[0]
        heads += 1
        assert out.start[head] <= _head_reservation(tr, out, head, t, pool), (head, t)
    backfilled = int(((out.start < fifo.start) & ~np.isnan(fifo.start)).sum())
    event(f"heads checked: {min(heads, 3)}+; backfilled jobs: {min(backfilled, 2)}+")
    target(float(backfilled), label="jobs started before their FIFO start")


def test_backfill_head_reservation_blocks_a_long_candidate() -> None:
    # pool 4: A (0 s, 3 GPUs, 10 s) runs; B (1 s, 4 GPUs) is the head, reserved for 10 s
    # with no GPU to spare then; one GPU is free now.
    tr = Trace(ready=[0, 1, 2, 3], runtime=[10, 5, 20, 3], gpus=[3, 4, 1, 1], limit=[10, 5, 20, 3])
    out = simulate(tr, 4, "backfill")
    # C (20 s) would run past B's reservation at 10 s on B's GPUs: it waits until B is done.
    # D (3 s) ends at 6 s, before the reservation: it runs at once on the free GPU.
    assert out.start.tolist() == [0, 10, 15, 3]


def test_backfill_boundary_candidate_ending_exactly_at_the_reservation() -> None:
    # B is reserved for 10 s; C's limit ends exactly at 10 s (2 + 8): allowed (<=).
    tr = Trace(ready=[0, 1, 2], runtime=[10, 5, 8], gpus=[3, 4, 1], limit=[10, 5, 8])
    assert simulate(tr, 4, "backfill").start.tolist() == [0, 10, 2]
    # One second longer crosses the reservation with no spare GPU: it waits for B.
    tr2 = Trace(ready=[0, 1, 2], runtime=[10, 5, 9], gpus=[3, 4, 1], limit=[10, 5, 9])
    assert simulate(tr2, 4, "backfill").start.tolist() == [0, 10, 15]


def test_backfill_missing_limits_are_noted_and_replaced_by_run_times() -> None:
    tr = Trace(ready=[0, 1, 2], runtime=[10, 5, 8], gpus=[3, 4, 1], limit=[10, np.nan, np.nan])
    out = simulate(tr, 4, "backfill")
    assert out.notes == ["2 job(s) without a time limit: their actual run time was used"]
    assert out.start.tolist() == [0, 10, 2]
    # A limit shorter than the run time cannot be what the scheduler honoured: run time wins.
    short = Trace(ready=[0, 1, 2], runtime=[10, 5, 9], gpus=[3, 4, 1], limit=[10, 5, 1])
    assert simulate(short, 4, "backfill").start.tolist() == [0, 10, 15]


def _shuffled(tr: Trace, perm: np.ndarray) -> Trace:
    return Trace(
        ready=tr.ready[perm],
        runtime=tr.runtime[perm],
        gpus=tr.gpus[perm],
        limit=None if tr.limit is None else tr.limit[perm],
        priority=None if tr.priority is None else tr.priority[perm],
    )


def _per_job(tr: Trace, out: Outcome) -> list[tuple[float, ...]]:
    """Each job's inputs with its start and end, as a sorted multiset (row order removed)."""
    lim = tr.limit if tr.limit is not None else np.full(len(tr), -1.0)
    pri = tr.priority if tr.priority is not None else np.zeros(len(tr))
    rows = zip(tr.ready, tr.runtime, tr.gpus, lim, pri, out.start, out.end, strict=True)
    return sorted(tuple(float(x) for x in row) for row in rows)


@pytest.mark.parametrize("policy", POLICIES)
def test_same_jobs_in_any_row_order_give_the_same_figures(policy: str) -> None:
    """Q3 determinism: many ties in ready time (whole minutes, bursts of submissions); the
    rows are shuffled 40 times, as a database may return them; every figure stays the same."""
    rng = np.random.default_rng(7)
    n = 120
    tr = Trace(
        ready=rng.integers(0, 30, n) * 60.0,
        runtime=rng.integers(1, 40, n) * 60.0,
        gpus=rng.integers(1, 5, n),
        limit=rng.integers(40, 80, n) * 60.0,
        priority=rng.integers(0, 3, n),
    )
    base = simulate(tr, 6, policy, checkpoint_s=300)  # type: ignore[arg-type]
    want_jobs = _per_job(tr, base)
    want = pool_stats(tr, base, 6, policy, span_s=1e5).as_dict()  # type: ignore[arg-type]
    assert want["wait_p95_s"] and want["wait_p95_s"] > 0  # jobs really queue
    for _ in range(5 if MUTATION else 40):
        perm = rng.permutation(n)
        other = _shuffled(tr, perm)
        out = simulate(other, 6, policy, checkpoint_s=300)  # type: ignore[arg-type]
        assert _per_job(other, out) == want_jobs
        got = pool_stats(other, out, 6, policy, span_s=1e5).as_dict()  # type: ignore[arg-type]
        assert got == want


def test_ties_follow_the_tiebreak_key_then_the_job_itself() -> None:
    # Two jobs ready at 0 on a 1-GPU pool: which runs first decides both waits.
    small_first = Trace(ready=[0, 0], runtime=[50, 10], gpus=[1, 1])
    assert simulate(small_first, 1, "fifo").start.tolist() == [10, 0]
    # With a tiebreak (e.g. job ids) that key decides, whatever the other fields say.
    keyed = Trace(ready=[0, 0], runtime=[50, 10], gpus=[1, 1], tiebreak=["1001", "1002"])
    for policy in POLICIES:
        assert simulate(keyed, 1, policy).start.tolist() == [0, 50], policy
    swapped = Trace(ready=[0, 0], runtime=[10, 50], gpus=[1, 1], tiebreak=["1002", "1001"])
    assert simulate(swapped, 1, "fifo").start.tolist() == [50, 0]
    with pytest.raises(ValueError, match="tiebreak"):
        Trace(ready=[0, 0], runtime=[1, 1], gpus=[1, 1], tiebreak=["a"])


def test_priority_victims_lowest_priority_then_newest_first() -> None:
    # pool 3: L0 (prio 0, from 0 s), L1 (prio 1, from 1 s), L0b (prio 0, from 2 s) each hold
    # one GPU; H (prio 5, 1 GPU) arrives at 3 s: the newest lowest-priority run (L0b) goes.
    tr = Trace(
        ready=[0, 1, 2, 3], runtime=[100, 100, 100, 10], gpus=[1, 1, 1, 1], priority=[0, 1, 0, 5]
    )
    out = simulate(tr, 3, "priority")
    assert out.preemptions == 1
    assert (2, 2.0, 3.0) in out.runs
    # L0b restarts from zero when H ends at 13 s (no checkpoint).
    assert out.end.tolist() == [100, 101, 113, 13]
    assert out.lost_gpu_s == 1.0


def test_priority_does_not_preempt_when_victims_cannot_free_enough() -> None:
    # H needs 3 GPUs; only one lower-priority job (1 GPU) runs beside an equal-priority one.
    tr = Trace(ready=[0, 0, 1], runtime=[20, 30, 5], gpus=[1, 2, 3], priority=[0, 5, 5])
    out = simulate(tr, 3, "priority")
    assert out.preemptions == 0 and out.start.tolist() == [0, 0, 30]


def test_priority_checkpoint_boundary_keeps_whole_intervals_only() -> None:
    # Preempted at exactly 60 s with a 30 s checkpoint: both checkpoints kept, nothing lost.
    tr = Trace(ready=[0, 60], runtime=[100, 10], gpus=[2, 2], priority=[0, 1])
    out = simulate(tr, 2, "priority", checkpoint_s=30)
    assert out.lost_gpu_s == 0 and out.end.tolist() == [110, 70]
    # One second earlier the work since the 30 s checkpoint (29 s x 2 GPUs) is lost.
    tr2 = Trace(ready=[0, 59], runtime=[100, 10], gpus=[2, 2], priority=[0, 1])
    out2 = simulate(tr2, 2, "priority", checkpoint_s=30)
    assert out2.lost_gpu_s == 58 and out2.end.tolist() == [139, 69]


def test_slo_share_boundary_and_quantiles() -> None:
    # Waits 0, 10, 20, 30 s; threshold 10 s: a wait equal to the threshold is no violation.
    tr = Trace(ready=[0, 0, 0, 0], runtime=[10, 10, 10, 10], gpus=[1, 1, 1, 1])
    out = simulate(tr, 1, "fifo")
    stats = pool_stats(
        tr, out, 1, "fifo", span_s=40.0, slo_mask=np.array([1, 1, 1, 0], bool), slo_threshold_s=10
    )
    assert stats.slo_violation_share == pytest.approx(1 / 3)
    assert stats.wait_p50_s == 15.0 and stats.wait_max_s == 30.0 and stats.wait_mean_s == 15.0
    assert stats.wait_p95_s == pytest.approx(28.5) and stats.wait_p99_s == pytest.approx(29.7)
    assert stats.utilisation == 1.0 and stats.longest_queue == 3
    none_selected = pool_stats(
        tr, out, 1, "fifo", span_s=0.0, slo_mask=np.zeros(4, bool), slo_threshold_s=10
    )
    assert none_selected.slo_violation_share is None and none_selected.utilisation is None
    empty = pool_stats(
        tr, Outcome(start=np.full(4, np.nan), end=np.full(4, np.nan)), 1, "fifo", span_s=1.0
    )
    assert empty.wait_p50_s is None and empty.wait_max_s is None and empty.wait_mean_s is None
    assert empty.jobs == 0 and empty.jobs_unplaceable == 4 and empty.longest_queue == 0


def test_longest_queue_and_zero_wait_peak_boundaries() -> None:
    # A starts at 5 s exactly when B becomes ready: a start leaves the queue before an arrival
    # joins it, so at most one job waits.
    ready = np.array([0.0, 5.0, 5.0])
    start = np.array([5.0, 9.0, 5.0])
    assert longest_queue(ready, start) == 1
    # A job ending at 10 s frees its GPUs for one starting at 10 s: peak 3, not 5.
    tr = Trace(ready=[0, 10, 0], runtime=[10, 5, 30], gpus=[2, 2, 1])
    assert zero_wait_peak(tr) == 3
    assert zero_wait_peak(Trace(ready=[], runtime=[], gpus=[])) == 0


def test_smallest_pool_bisection_edges() -> None:
    tr = Trace(ready=[0, 0, 0], runtime=[10, 10, 10], gpus=[2, 1, 1])
    tried: list[int] = []

    def at_least(k: int) -> object:
        def meets(n: int) -> bool:
            tried.append(n)
            return n >= k

        return meets

    assert smallest_pool(tr, at_least(7), lo=1, hi=20) == 7  # type: ignore[arg-type]
    assert smallest_pool(tr, at_least(1), lo=1, hi=20) == 1  # type: ignore[arg-type]
    assert smallest_pool(tr, at_least(20), lo=1, hi=20) == 20  # type: ignore[arg-type]
    assert smallest_pool(tr, at_least(21), lo=1, hi=20) is None  # type: ignore[arg-type]
    # Defaults: from the largest job (2) to the zero-wait peak (4).
    tried.clear()
    assert smallest_pool(tr, at_least(3)) == 3  # type: ignore[arg-type]
    assert min(tried) >= 2 and max(tried) == 4
    with pytest.raises(ValueError, match="at least 1"):
        simulate(tr, 0)
    with pytest.raises(ValueError, match="unknown policy"):
        simulate(tr, 2, "lottery")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same length"):
        Trace(ready=[0, 1], runtime=[1], gpus=[1, 1])


def test_parse_sizes() -> None:
    assert parse_sizes(" 16, 8,16 ") == [8, 16]
    assert parse_sizes(" AUTO ") == "auto"
    assert parse_sizes("1") == [1]
    for bad in ("0", "-2", "eight", "8,", "1.5"):
        with pytest.raises(ValueError, match="positive whole number"):
            parse_sizes(bad)


def _tied_log(path: Path) -> Path:
    """30 jobs submitted in bursts (five per minute), mixed sizes and kinds."""
    rows = []
    for i in range(30):
        minute = i // 5
        gpus = 1 + (i * 7) % 4
        run_min = 3 + (i * 5) % 11
        start = datetime(2026, 3, 2, 9, minute, tzinfo=UTC) + timedelta(minutes=i % 3)
        rows.append(
            job(
                f"{500 + i}",
                "train-x" if i % 2 else "eval-y",
                gpus,
                start.isoformat(),
                (start + timedelta(minutes=run_min)).isoformat(),
                submit=datetime(2026, 3, 2, 9, minute, tzinfo=UTC).isoformat(),
                time_limit_s=3600,
                priority=i % 3,
            )
        )
    return write_csv(path, rows)


@pytest.mark.parametrize("policy", POLICIES)
def test_replay_record_is_the_same_whatever_the_row_order(policy: str, tmp_path: Path) -> None:
    """Issue: ties in ready time followed the database's row order. The log's rows are
    shuffled 15 times, as DuckDB may return them: same figures and same record id."""
    from gpudecide import evidence as ev
    from gpudecide.jobs.classify import ClassifyConfig
    from gpudecide.jobs.load import load_logs
    from gpudecide.queue.analysis import replay_evidence, replay_input, run_replay
    from gpudecide.queue.slo import SLO

    log = load_logs([_tied_log(tmp_path / "log.csv")])
    slo = ("normal", SLO(threshold_minutes=4, allowed_violation_share=0.2))
    rng = np.random.default_rng(5)
    seen: set[str] = set()
    p95: set[object] = set()
    for _ in range(2 if MUTATION else 15):
        perm = pa.array(rng.permutation(log.attempts.num_rows))
        shuffled = dataclasses.replace(log, attempts=log.attempts.take(perm))
        data = replay_input(shuffled, ClassifyConfig(), "full")
        figures = run_replay(data, [3, 5], policy, slo, 120.0)  # type: ignore[arg-type]
        p95.add(figures["pools"][0]["wait_p95_s"])
        seen.add(ev.seal(replay_evidence(figures, [])).id)
    assert len(seen) == 1 and len(p95) == 1
    assert next(iter(p95)) not in (None, 0)  # the 3-GPU pool really makes jobs wait


def test_defaults_and_messages_are_exact() -> None:
    tr = Trace(ready=[0, 0, 1], runtime=[10, 10, 1], gpus=[2, 1, 1])
    assert simulate(tr, 2).start.tolist() == simulate(tr, 2, "fifo").start.tolist() == [10, 0, 20]
    with pytest.raises(ValueError, match=r"^pool_gpus must be at least 1$"):
        simulate(tr, 0)
    with pytest.raises(ValueError, match=r"^ready, runtime and gpus must have the same length$"):
        Trace(ready=[0, 1], runtime=[1], gpus=[1, 1])
    with pytest.raises(ValueError, match=r"^tiebreak must have one value per job$"):
        Trace(ready=[0, 0], runtime=[1, 1], gpus=[1, 1], tiebreak=["a"])
    out = simulate(Trace(ready=[0], runtime=[1], gpus=[1]), 1, "backfill")
    assert out.notes == [
        "no requested time limits in the log: backfill used actual run times (optimistic)"
    ]


def test_backfill_candidate_using_exactly_the_spare_gpus() -> None:
    # pool 4: A (3 GPUs) runs to 10 s; B (3 GPUs) is reserved for 10 s, when 4 are free: one
    # to spare. C (1 GPU, limit 20 s) runs past the reservation on exactly that spare GPU.
    tr = Trace(ready=[0, 1, 2], runtime=[10, 5, 1], gpus=[3, 3, 1], limit=[10, 5, 20])
    assert simulate(tr, 4, "backfill").start.tolist() == [0, 10, 2]


def test_backfill_job_ending_at_the_reservation_leaves_the_spare_gpus_alone() -> None:
    # pool 7: A (4 GPUs) to 10 s; B (5 GPUs) reserved for 10 s with 2 to spare. At 2 s C
    # (1 GPU) ends exactly at 10 s: it does not use the spare GPUs, so D (2 GPUs, long) may.
    tr = Trace(
        ready=[0, 1, 2, 2],
        runtime=[10, 5, 8, 50],
        gpus=[4, 5, 1, 2],
        limit=[10, 5, 8, 50],
    )
    assert simulate(tr, 7, "backfill").start.tolist() == [0, 10, 2, 2]


def test_priority_job_preempted_twice_ends_once() -> None:
    # pool 1: L (prio 0, 100 s) is preempted at 10 s by H1 and at 30 s by H2 (10 s each);
    # without checkpoints it restarts from zero at 40 s and ends at 140 s.
    tr = Trace(ready=[0, 10, 30], runtime=[100, 10, 10], gpus=[1, 1, 1], priority=[0, 5, 5])
    out = simulate(tr, 1, "priority")
    assert out.preemptions == 2
    assert out.end.tolist() == [140, 20, 40]
    assert sorted(out.runs) == [
        (0, 0.0, 10.0),
        (0, 20.0, 30.0),
        (0, 40.0, 140.0),
        (1, 10.0, 20.0),
        (2, 30.0, 40.0),
    ]
    assert out.lost_gpu_s == 20


def test_priority_frees_every_run_ending_now_past_a_stale_entry() -> None:
    # pool 4, no checkpoints. Rows: A (prio 1, 10 s from 0 s), V (prio 0, 100 s from 0.5 s),
    # S (prio 0, 9 s from 1 s), B (prio 1, 8 s from 2 s): all four end at 10 s except V.
    # P (prio 2, 5 s) preempts S, the newest of the lowest priority; S restarts at 7 s when
    # P ends and runs 9 s more, to 16 s. Its first run's heap entry (10 s, rank 2) stays, stale,
    # between A's (10 s, rank 0) and B's (10 s, rank 3). At 10 s J (prio 3, 2 GPUs) arrives:
    # A and B both end then, so J takes their 2 GPUs and nobody else is preempted. Stopping at
    # the stale entry would leave B's GPU unfreed and make J preempt S a second time.
    tr = Trace(
        ready=[0, 0.5, 1, 2, 5, 10],
        runtime=[10, 100, 9, 8, 2, 5],
        gpus=[1, 1, 1, 1, 1, 2],
        priority=[1, 0, 0, 1, 2, 3],
    )
    out = simulate(tr, 4, "priority")
    assert out.preemptions == 1
    assert out.start.tolist() == [0, 0.5, 1, 2, 5, 10]
    assert out.end.tolist() == [10, 100.5, 16, 10, 7, 15]
    assert out.lost_gpu_s == 4  # S ran 1 s to 5 s on 1 GPU
    assert sorted(out.runs) == [
        (0, 0.0, 10.0),
        (1, 0.5, 100.5),
        (2, 1.0, 5.0),
        (2, 7.0, 16.0),
        (3, 2.0, 10.0),
        (4, 5.0, 7.0),
        (5, 10.0, 15.0),
    ]


def test_priority_victims_started_together_go_newest_arrival_first() -> None:
    # L-short and L-long both start at 0 (same priority): L-long arrived later in the fixed
    # tie order (same GPUs, longer run), so it is the one H preempts.
    tr = Trace(ready=[0, 0, 5], runtime=[100, 50, 10], gpus=[1, 1, 1], priority=[0, 0, 9])
    out = simulate(tr, 2, "priority")
    assert out.preemptions == 1 and (0, 0.0, 5.0) in out.runs
    assert out.end.tolist() == [115, 50, 15]


def test_pool_stats_every_field() -> None:
    # Ready at 100 s: a sum instead of a difference of start and ready would show.
    tr = Trace(ready=[100, 100, 100], runtime=[30, 30, 30], gpus=[1, 1, 1])
    out = Outcome(
        start=np.array([100.0, 130.0, 160.0]),
        end=np.array([130.0, 160.0, 190.0]),
        preemptions=2,
        lost_gpu_s=7200.0,
    )
    stats = pool_stats(
        tr, out, 1, "priority", span_s=0.5, slo_mask=np.ones(3, bool), slo_threshold_s=29
    )
    assert (stats.gpus, stats.policy, stats.jobs, stats.preemptions) == (1, "priority", 3, 2)
    assert stats.lost_gpu_hours == 2.0
    assert stats.wait_p90_s == pytest.approx(54.0) and stats.wait_p50_s == 30.0
    assert stats.slo_violation_share == pytest.approx(2 / 3)
    assert stats.utilisation == 90 / 0.5  # a span under a second still divides
    d = stats.as_dict()
    assert d["slo_violation_share"] == 0.6667 and d["wait_p90_s"] == 54.0 and d["gpus"] == 1
    # A mask without a threshold (or the reverse) measures no SLO.
    only_mask = pool_stats(tr, out, 1, "fifo", span_s=1.0, slo_mask=np.ones(3, bool))
    assert only_mask.slo_violation_share is None
    only_threshold = pool_stats(tr, out, 1, "fifo", span_s=1.0, slo_threshold_s=1.0)
    assert only_threshold.slo_violation_share is None


def test_smallest_pool_defaults_start_at_the_largest_job() -> None:
    ones = Trace(ready=[0, 0], runtime=[5, 5], gpus=[1, 1])
    assert smallest_pool(ones, lambda n: True) == 1
    twos = Trace(ready=[0, 0], runtime=[5, 5], gpus=[2, 1])
    assert smallest_pool(twos, lambda n: True) == 2
    empty = Trace(ready=[], runtime=[], gpus=[])
    assert smallest_pool(empty, lambda n: True) == 1


@pytest.mark.parametrize(
    ("window", "with_slo", "policy"),
    [("full", False, "backfill"), ("peak", True, "fifo"), ("full", True, "priority")],
)
def test_replay_figures_model_is_the_record_key_for_key(
    tmp_path: Path, window: str, with_slo: bool, policy: str
) -> None:
    """ReplayFigures reads a replay record and dumps it back key for key (the peak window's
    size only when it is the peak), and the sealed id does not move."""
    import json

    from gpudecide import evidence as ev
    from gpudecide.jobs.classify import ClassifyConfig
    from gpudecide.jobs.load import load_logs
    from gpudecide.queue.analysis import ReplayFigures, replay_evidence, replay_input, run_replay
    from gpudecide.queue.figures import figures_of
    from gpudecide.queue.slo import SLO

    log = load_logs([_tied_log(tmp_path / "log.csv")])
    slo = ("normal", SLO(threshold_minutes=4, allowed_violation_share=0.2)) if with_slo else None
    data = replay_input(log, ClassifyConfig(), window)  # type: ignore[arg-type]
    figures = run_replay(data, [3, 5], policy, slo, 120.0)  # type: ignore[arg-type]
    assert ("days" in figures["window"]) is (window == "peak")
    record = ev.load(ev.write(replay_evidence(figures, []), tmp_path / "evidence"))
    model = figures_of(record)
    assert isinstance(model, ReplayFigures)
    dumped = model.model_dump(mode="json")
    assert json.dumps(dumped, sort_keys=True) == json.dumps(record.figures, sort_keys=True)
    assert ev.seal(record.model_copy(update={"figures": dumped})).id == record.id
