"""Replay a job log through a simulated dedicated pool of N identical GPUs (SPEC C8, D3, Q3).

Each job arrives at its ready time (eligible, else submit), asks for its GPUs and runs for the
time it really ran. Three policies:

- ``fifo``: strict first-come first-served; a job that does not fit blocks the ones behind it.
- ``backfill``: EASY backfill. The head of the queue gets a reservation at the earliest time
  enough GPUs will be free, judged by the running jobs' requested time limits; a later job may
  start now if it fits the free GPUs and either ends (by its own limit) before that time or
  only uses GPUs the head will not need. Without time limits in the log the actual run times
  stand in for them (an optimistic oracle), and the result says so.
- ``priority``: highest priority first; a job that does not fit preempts running jobs of lower
  priority (newest first). A preempted job goes back to the queue and loses the work done
  since its last checkpoint (``checkpoint_s``; none means it restarts from zero).

FIFO is a single pass over the jobs with a heap of running jobs (O(n log n)): it is the one
used for large logs and sweeps. The event-driven policies scan the queue at every event.

Same jobs, same figures, whatever order the rows came in (SPEC Q3): jobs ready at the same
moment are taken in one fixed order, by the caller's ``tiebreak`` key (the job id) when given,
then by GPUs, run time, limit and priority. Only jobs equal in all of these keep their row
order, and swapping two of those changes no figure of the pool.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np

from gpudecide.message import Message, english, message, nmessage
from gpudecide.queue.figures import Policy

__all__ = [
    "POLICIES",
    "Outcome",
    "PoolSizeError",
    "PoolStats",
    "Trace",
    "longest_queue",
    "parse_sizes",
    "pool_stats",
    "simulate",
    "smallest_pool",
    "zero_wait_peak",
]

POLICIES: tuple[Policy, ...] = ("fifo", "backfill", "priority")


@dataclass
class Trace:
    """Jobs to replay, as arrays of equal length (seconds since any epoch).

    `tiebreak` orders jobs ready at the same moment (any sortable values, e.g. job ids);
    without it they are ordered by their other fields (see the module docstring).
    """

    ready: np.ndarray
    runtime: np.ndarray
    gpus: np.ndarray
    limit: np.ndarray | None = None
    priority: np.ndarray | None = None
    tiebreak: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.ready = np.asarray(self.ready, dtype=float)
        self.runtime = np.asarray(self.runtime, dtype=float)
        self.gpus = np.asarray(self.gpus, dtype=np.int64)
        n = self.ready.size
        if self.runtime.size != n or self.gpus.size != n:
            raise ValueError("ready, runtime and gpus must have the same length")
        if self.limit is not None:
            self.limit = np.asarray(self.limit, dtype=float)
        if self.priority is not None:
            self.priority = np.asarray(self.priority, dtype=float)
        if self.tiebreak is not None:
            self.tiebreak = np.asarray(self.tiebreak)
            if self.tiebreak.size != n:
                raise ValueError("tiebreak must have one value per job")

    def __len__(self) -> int:
        return int(self.ready.size)

    @cached_property
    def arrival_order(self) -> np.ndarray:
        """Job indices in the order they arrive, independent of the row order (Q3).

        Computed once per trace: a sweep over pool sizes replays the same trace many times.
        """
        n = len(self)
        if n < 2 or bool((self.ready[1:] > self.ready[:-1]).all()):
            return np.arange(n)  # no ties: the rows are already the arrival order
        # np.lexsort sorts by the last key first.
        keys: list[np.ndarray] = []
        for extra in (self.priority, self.limit):
            if extra is not None:
                keys.append(np.nan_to_num(extra, nan=np.inf))
        keys += [self.runtime, self.gpus]
        if self.tiebreak is not None:
            keys.append(np.unique(self.tiebreak, return_inverse=True)[1].reshape(-1))
        keys.append(self.ready)
        return np.lexsort(keys)

    @cached_property
    def arrival_rank(self) -> list[int]:
        """Position of each job in `arrival_order`: the tie-breaker inside the policies."""
        rank = np.empty(len(self), dtype=np.int64)
        rank[self.arrival_order] = np.arange(len(self))
        return [int(r) for r in rank.tolist()]


@dataclass
class Outcome:
    """Start time per job (NaN when the job needs more GPUs than the pool has).

    `runs` lists every run of the priority policy as (job, start, end): a preempted job runs
    more than once, so its first start and final end do not bound the GPUs it held.
    `messages` says what a reader of the replay must know about how it was made.
    """

    start: np.ndarray
    end: np.ndarray
    preemptions: int = 0
    lost_gpu_s: float = 0.0
    messages: list[Message] = field(default_factory=list)
    runs: list[tuple[int, float, float]] = field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """The messages in English."""
        return [english(m) for m in self.messages]


def simulate(
    trace: Trace, pool_gpus: int, policy: Policy = "fifo", *, checkpoint_s: float | None = None
) -> Outcome:
    """Replay `trace` on `pool_gpus` GPUs under `policy`."""
    if pool_gpus < 1:
        raise ValueError("pool_gpus must be at least 1")
    if policy == "fifo":
        return _fifo(trace, pool_gpus)
    if policy == "backfill":
        return _backfill(trace, pool_gpus)
    if policy == "priority":
        return _priority(trace, pool_gpus, checkpoint_s)
    raise ValueError(f"unknown policy {policy!r}")


def _fifo(trace: Trace, pool: int) -> Outcome:
    # The hot loop of large replays and sweeps: it walks the jobs in arrival order over plain
    # Python floats, and the heap holds bare end times (float comparisons are much cheaper
    # than tuple ones) with the GPUs each end time frees kept in a dict. Jobs that cannot fit
    # the pool are dropped before the loop so it has no branch for them.
    fits = trace.gpus <= pool
    order = trace.arrival_order
    in_order = order.size < 2 or bool((order[1:] > order[:-1]).all())
    idx: np.ndarray | None = None  # None: every job, already in arrival order
    if not (in_order and bool(fits.all())):
        idx = order[fits[order]]
    ready = (trace.ready if idx is None else trace.ready[idx]).tolist()
    runtime = (trace.runtime if idx is None else trace.runtime[idx]).tolist()
    gpus = (trace.gpus if idx is None else trace.gpus[idx]).tolist()
    starts: list[float] = []
    append = starts.append
    # An infinite end time stays at the bottom of the heap, so `ends[0]` needs no emptiness
    # check; it is never popped, because a job that waits always has finite ends ahead of it.
    ends: list[float] = [float("inf")]
    frees: dict[float, int] = {}
    take = frees.pop
    free = pool
    t = float("-inf")  # start of the previous job: FIFO never starts one earlier
    push, pop = heapq.heappush, heapq.heappop
    for r, d, g in zip(ready, runtime, gpus, strict=True):
        if r > t:
            t = r
        while ends[0] <= t:
            free += take(pop(ends))
        while free < g:
            e = pop(ends)
            free += take(e)
            if e > t:
                t = e
        append(t)
        free -= g
        e = t + d
        if e in frees:
            frees[e] += g
        else:
            frees[e] = g
            push(ends, e)
    if idx is None:
        s = np.array(starts)
    else:
        s = np.full(len(trace), np.nan)
        s[idx] = starts
    return Outcome(start=s, end=s + trace.runtime)


def _limits(trace: Trace) -> tuple[list[float], list[Message]]:
    if trace.limit is None:
        return trace.runtime.tolist(), [
            message(
                "queue",
                "no requested time limits in the log: backfill used actual run times (optimistic)",
            )
        ]
    lim = np.where(np.isnan(trace.limit), trace.runtime, np.maximum(trace.limit, trace.runtime))
    notes = []
    missing = int(np.isnan(trace.limit).sum())
    if missing:
        notes.append(
            nmessage(
                "queue",
                "{n} job(s) without a time limit: their actual run time was used",
                "{n} job(s) without a time limit: their actual run time was used",
                n=missing,
            )
        )
    return lim.tolist(), notes


def _backfill(trace: Trace, pool: int) -> Outcome:
    """EASY backfill, event driven: arrivals and completions."""
    n = len(trace)
    limits, notes = _limits(trace)
    ready = trace.ready.tolist()
    runtime = trace.runtime.tolist()
    gpus = trace.gpus.tolist()
    order = [i for i in trace.arrival_order.tolist() if gpus[i] <= pool]
    start = [float("nan")] * n
    queue: list[int] = []
    running: list[tuple[float, int]] = []  # (actual end, job)
    free = pool
    k = 0
    while k < len(order) or queue:
        # next event: an arrival or a completion
        t_arr = ready[order[k]] if k < len(order) else float("inf")
        t_end = running[0][0] if running else float("inf")
        t = min(t_arr, t_end)
        while running and running[0][0] <= t:
            free += gpus[heapq.heappop(running)[1]]
        while k < len(order) and ready[order[k]] <= t:
            queue.append(order[k])
            k += 1
        # start the head while it fits
        while queue and gpus[queue[0]] <= free:
            j = queue.pop(0)
            start[j] = t
            free -= gpus[j]
            heapq.heappush(running, (t + runtime[j], j))
        if not queue:
            continue
        head = queue[0]
        # shadow time: when the head could start if running jobs end at their limits
        avail = free
        shadow, extra = float("inf"), 0
        for est_end, g in sorted((start[j] + limits[j], gpus[j]) for _, j in running):
            avail += g
            if avail >= gpus[head]:
                shadow, extra = est_end, avail - gpus[head]
                break
        kept = [head]
        for j in queue[1:]:
            g = gpus[j]
            if g <= free and (t + limits[j] <= shadow or g <= extra):
                start[j] = t
                free -= g
                if t + limits[j] > shadow:
                    extra -= g
                heapq.heappush(running, (t + runtime[j], j))
            else:
                kept.append(j)
        queue = kept
    s = np.array(start)
    return Outcome(start=s, end=s + trace.runtime, messages=notes)


def _priority(trace: Trace, pool: int, checkpoint_s: float | None) -> Outcome:
    """Priority order with preemption of lower-priority running jobs."""
    n = len(trace)
    prio = (trace.priority if trace.priority is not None else np.zeros(n)).tolist()
    ready = trace.ready.tolist()
    gpus = trace.gpus.tolist()
    remaining = trace.runtime.tolist()
    order = [i for i in trace.arrival_order.tolist() if gpus[i] <= pool]
    rank = trace.arrival_rank
    first_start = [float("nan")] * n
    final_end = [float("nan")] * n
    run_start = [0.0] * n
    epoch = [0] * n  # invalidates heap entries of preempted runs
    # Heap keys end in the arrival rank, not the row index, so ties never follow row order.
    waiting: list[tuple[float, float, int, int]] = []  # (-priority, ready, rank, job) heap
    running: list[tuple[float, int, int, int]] = []  # (end, rank, job, epoch) heap
    active: dict[int, int] = {}  # running job -> epoch
    runs: list[tuple[int, float, float]] = []
    free = pool
    preemptions = 0
    lost = 0.0
    k = 0
    while k < len(order) or waiting or active:
        t_arr = ready[order[k]] if k < len(order) else float("inf")
        while running and running[0][3] != active.get(running[0][2], -1):
            heapq.heappop(running)  # stale entry of a preempted run
        t_end = running[0][0] if running else float("inf")
        t = min(t_arr, t_end)
        if t == float("inf"):
            break
        while running and running[0][0] <= t:
            end, _, j, ep = heapq.heappop(running)
            if active.get(j) != ep:
                continue
            del active[j]
            free += gpus[j]
            final_end[j] = end
            runs.append((j, run_start[j], end))
        while k < len(order) and ready[order[k]] <= t:
            j = order[k]
            heapq.heappush(waiting, (-prio[j], ready[j], rank[j], j))
            k += 1
        while waiting:
            j = waiting[0][3]
            if gpus[j] > free:
                victims = sorted(
                    (i for i in active if prio[i] < prio[j]),
                    key=lambda i: (prio[i], -run_start[i], -rank[i]),
                )
                reclaim = free + sum(gpus[i] for i in victims)
                if reclaim < gpus[j]:
                    break  # strict priority: nothing behind it jumps the queue
                for v in victims:
                    if free >= gpus[j]:
                        break
                    done = t - run_start[v]
                    kept = (done // checkpoint_s) * checkpoint_s if checkpoint_s else 0.0
                    lost += gpus[v] * (done - kept)
                    remaining[v] -= kept
                    free += gpus[v]
                    runs.append((v, run_start[v], t))
                    del active[v]
                    epoch[v] += 1
                    preemptions += 1
                    heapq.heappush(waiting, (-prio[v], ready[v], rank[v], v))
            heapq.heappop(waiting)
            if first_start[j] != first_start[j]:  # NaN: first time it starts
                first_start[j] = t
            run_start[j] = t
            free -= gpus[j]
            active[j] = epoch[j]
            heapq.heappush(running, (t + remaining[j], rank[j], j, epoch[j]))
    return Outcome(
        start=np.array(first_start),
        end=np.array(final_end),
        preemptions=preemptions,
        lost_gpu_s=lost,
        runs=runs,
    )


@dataclass
class PoolStats:
    """What a pool of one size did to the log (SPEC Q3 waits, C2 utilisation)."""

    gpus: int
    policy: Policy
    jobs: int
    jobs_unplaceable: int
    wait_p50_s: float | None
    wait_p90_s: float | None
    wait_p95_s: float | None
    wait_p99_s: float | None
    wait_max_s: float | None
    wait_mean_s: float | None
    slo_violation_share: float | None
    utilisation: float | None
    longest_queue: int
    preemptions: int
    lost_gpu_hours: float

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (rounded)."""
        out: dict[str, object] = {}
        for key, value in self.__dict__.items():
            out[key] = round(value, 4) if isinstance(value, float) else value
        return out


def _quantile(waits: np.ndarray, q: float) -> float | None:
    return float(np.percentile(waits, q)) if waits.size else None


def longest_queue(ready: np.ndarray, start: np.ndarray) -> int:
    """Most jobs waiting at once: +1 at ready, -1 at start (starts first on ties)."""
    ok = ~np.isnan(start)
    waited = ok & (start > ready)
    if not waited.any():
        return 0
    times = np.concatenate([ready[waited], start[waited]])
    deltas = np.concatenate([np.ones(int(waited.sum())), -np.ones(int(waited.sum()))])
    order = np.lexsort((deltas, times))
    return int(np.cumsum(deltas[order]).max())


def pool_stats(
    trace: Trace,
    outcome: Outcome,
    pool_gpus: int,
    policy: Policy,
    *,
    span_s: float,
    slo_mask: np.ndarray | None = None,
    slo_threshold_s: float | None = None,
) -> PoolStats:
    """Wait quantiles, SLO violation share, utilisation and longest queue of one replay."""
    placed = ~np.isnan(outcome.start)
    waits = (outcome.start - trace.ready)[placed]
    share = None
    if slo_mask is not None and slo_threshold_s is not None:
        sel = placed & slo_mask
        if sel.any():
            share = float(((outcome.start - trace.ready)[sel] > slo_threshold_s).mean())
    used = float((trace.gpus[placed] * trace.runtime[placed]).sum())
    return PoolStats(
        gpus=pool_gpus,
        policy=policy,
        jobs=int(placed.sum()),
        jobs_unplaceable=int((~placed).sum()),
        wait_p50_s=_quantile(waits, 50),
        wait_p90_s=_quantile(waits, 90),
        wait_p95_s=_quantile(waits, 95),
        wait_p99_s=_quantile(waits, 99),
        wait_max_s=float(waits.max()) if waits.size else None,
        wait_mean_s=float(waits.mean()) if waits.size else None,
        slo_violation_share=share,
        utilisation=used / (pool_gpus * span_s) if span_s > 0 else None,
        longest_queue=longest_queue(trace.ready, outcome.start),
        preemptions=outcome.preemptions,
        lost_gpu_hours=outcome.lost_gpu_s / 3600.0,
    )


def zero_wait_peak(trace: Trace) -> int:
    """Peak GPUs in use if every job started when it was ready: no pool above it waits (FIFO)."""
    if not len(trace):
        return 0
    times = np.concatenate([trace.ready + trace.runtime, trace.ready])
    deltas = np.concatenate([-trace.gpus, trace.gpus])
    order = np.lexsort((deltas, times))
    return int(np.cumsum(deltas[order]).max())


def smallest_pool(
    trace: Trace, meets: Callable[[int], bool], *, lo: int | None = None, hi: int | None = None
) -> int | None:
    """Smallest pool size for which `meets(n)` holds, by bisection (None if even `hi` fails).

    Assumes more GPUs never make the SLO worse, which holds for FIFO in practice but is not a
    theorem (scheduling anomalies exist); callers report the sizes they evaluated.
    """
    low = lo if lo is not None else max(1, int(trace.gpus.max()) if len(trace) else 1)
    high = hi if hi is not None else max(low, zero_wait_peak(trace))
    if not meets(high):
        return None
    while low < high:
        mid = (low + high) // 2
        if meets(mid):
            high = mid
        else:
            low = mid + 1
    return low


class PoolSizeError(ValueError):
    """A pool size that is not a positive whole number of GPUs (`part`, as written)."""

    def __init__(self, part: str) -> None:
        super().__init__(f"{part!r} is not a positive whole number of GPUs")
        self.part = part


def parse_sizes(text: str) -> list[int] | Literal["auto"]:
    """`8,16,32` -> [8, 16, 32]; `auto` -> "auto". Raises PoolSizeError naming the bad part."""
    if text.strip().lower() == "auto":
        return "auto"
    sizes: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise PoolSizeError(part)
        sizes.append(int(part))
    return sorted(set(sizes))
