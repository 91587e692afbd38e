"""The workload profile: how often, how much, what shape, how predictable (SPEC F1-F3, C2).

All figures are computed from the team's own log over a window of whole weeks ending at the
last event in the log (or `until`). Thresholds that turn a number into a word are constants
here and are printed next to the verdict, so a reader can disagree with them openly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pyarrow as pa

from gpudecide import evidence as ev
from gpudecide.jobs import sql
from gpudecide.jobs.classify import ClassifyConfig, jobs_table
from gpudecide.jobs.columns import KINDS
from gpudecide.jobs.figures import reconciliation
from gpudecide.jobs.figures import rounded as _r
from gpudecide.jobs.load import JobLog, log_span
from gpudecide.jobs.profile_figures import ProfileContour, ProfileFigures, ProfileRecordFigures
from gpudecide.jobs.words import MEANINGS, SHAPES, VERDICTS
from gpudecide.jsonio import utc_iso
from gpudecide.marks.join import JoinReport
from gpudecide.message import Message, english, message, nmessage, record_texts

__all__ = [
    "BURSTY_CV",
    "BURSTY_PEAK_TO_MEAN",
    "BUSIEST_SHARE",
    "DURATION_BUCKETS",
    "LEAD_TIME_HOURS",
    "MAX_WEEKS",
    "MEANINGS",
    "PARTLY_PREDICTABLE_WAPE",
    "PREDICTABLE_WAPE",
    "SHAPES",
    "TOP_JOBS_FRACTION",
    "VERDICTS",
    "ProfileOptions",
    "ProfileResult",
    "build_profile",
    "skipped_figures",
    "summary_line",
    "summary_message",
    "to_evidence",
]

# F2: a workload is "bursty" when its load comes and goes in time: weekly GPU-hours vary
# this much (CV), or the GPUs in use in its busiest moments are this many times the mean in
# use (a pool sized for those moments would stand idle seven eighths of the time). How the
# GPU-hours are spread over jobs (a few big trainings beside many small evals) is no burst:
# it is the concentration, a figure of its own.
BURSTY_CV = 0.75
BURSTY_PEAK_TO_MEAN = 8.0
# The busiest moments: the GPUs in use reached or exceeded during this share of the window
# (time-weighted), so that two jobs overlapping for a minute make no peak.
BUSIEST_SHARE = 0.01
TOP_JOBS_FRACTION = 0.10
# F3: naive forecast "next week = this week"; weighted absolute percentage error bands.
PREDICTABLE_WAPE = 0.30
PARTLY_PREDICTABLE_WAPE = 0.60
# F3: a job counts as planned ahead when it was made eligible this long after submission.
LEAD_TIME_HOURS = 24.0

DURATION_BUCKETS = (
    ("< 10 min", 0.0, 10 / 60),
    ("10 min - 1 h", 10 / 60, 1.0),
    ("1 - 4 h", 1.0, 4.0),
    ("4 - 12 h", 4.0, 12.0),
    ("12 - 24 h", 12.0, 24.0),
    ("1 - 3 days", 24.0, 72.0),
    ("> 3 days", 72.0, math.inf),
)


@dataclass
class ProfileOptions:
    """What window to look at and what pool to compare against; which option the logs come
    from (None: the team's workload), the contour they exercised, how lifecycle marks were
    joined to the jobs, and notes the run adds."""

    weeks: int = 8
    pool_gpus: int | None = None
    until: datetime | None = None
    classify: ClassifyConfig = field(default_factory=ClassifyConfig)
    option: str | None = None
    contour: ProfileContour | None = None
    marks: JoinReport | None = None
    notes: list[Message] = field(default_factory=list)


@dataclass
class ProfileResult:
    """The JSON-ready figures and their model, the tables the report draws from, and the
    notes on the figures as messages (the record adds the skipped rows to them)."""

    figures: dict[str, Any]
    model: ProfileFigures
    jobs: pa.Table
    series: dict[str, Any]
    notes: list[Message] = field(default_factory=list)


def _step_function(
    starts: np.ndarray, ends: np.ndarray, gpus: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Times (s) and the number of GPUs in use right after each (ends before starts on ties)."""
    times = np.concatenate([ends, starts])
    deltas = np.concatenate([-gpus, gpus])
    # One integer sort key instead of a two-key lexsort: microseconds * 2, +1 for a start
    # (computed in place: each temporary of two million events costs its page faults).
    micros = np.multiply(times, 1e6)
    np.round(micros, out=micros)
    key = micros.astype(np.int64)
    key *= 2
    key += deltas > 0
    order = np.argsort(key, kind="stable")
    return times[order], np.cumsum(deltas[order])


def _integrate(times: np.ndarray, levels: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """GPU-seconds of the step function in each [edges[i], edges[i+1])."""
    if times.size == 0:
        return np.zeros(edges.size - 1)
    seg = np.diff(times) * levels[:-1]
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    idx = np.searchsorted(times, edges, side="right") - 1
    level_at = np.where(idx >= 0, levels[np.clip(idx, 0, None)], 0.0)
    base = np.where(idx >= 0, cum[np.clip(idx, 0, None)], 0.0)
    value = base + level_at * (edges - times[np.clip(idx, 0, None)]) * (idx >= 0)
    return np.diff(value)


def _predictability(weekly: np.ndarray, lead_share: float | None) -> dict[str, Any]:
    """F3: how well last week's demand predicts next week's."""
    prev, nxt = weekly[:-1], weekly[1:]
    denominator = float(nxt.sum())
    wape = float(np.abs(nxt - prev).sum() / denominator) if denominator > 0 else None
    autocorr = None
    if weekly.size >= 3 and np.std(prev) > 0 and np.std(nxt) > 0:
        autocorr = float(np.corrcoef(prev, nxt)[0, 1])
    if wape is None:
        verdict = "not measurable"
    elif wape <= PREDICTABLE_WAPE:
        verdict = "predictable"
    elif wape <= PARTLY_PREDICTABLE_WAPE:
        verdict = "partly predictable"
    else:
        verdict = "unpredictable"
    meaning = MEANINGS[verdict].format(share=f"{PREDICTABLE_WAPE:.0%}")
    return {
        "method": "naive forecast: next week's GPU-hours = this week's",
        "wape": _r(wape),
        "lag1_autocorrelation": _r(autocorr),
        "thresholds": {
            "predictable_wape_max": PREDICTABLE_WAPE,
            "partly_predictable_wape_max": PARTLY_PREDICTABLE_WAPE,
        },
        "verdict": verdict,
        "meaning": meaning,
        "lead_time_share": _r(lead_share),
        "lead_time_hours": LEAD_TIME_HOURS,
    }


def _busiest_level(
    times: np.ndarray, levels: np.ndarray, start: float, end: float, share: float
) -> float:
    """GPUs in use reached or exceeded during `share` of [start, end] (time-weighted; the
    time before the first event and after the last counts at the level it has)."""
    if end <= start:
        return 0.0
    edges = np.clip(np.concatenate([[start], times, [end]]), start, end)
    held = np.concatenate([[0.0], levels]) if levels.size else np.zeros(1)
    durations = np.diff(edges)
    # The time spent at each level, highest first. Levels are sums of GPU counts, whole
    # numbers: they index a bincount, which needs no sort of every event.
    lowest = held.min()
    time_at = np.bincount((held - lowest).astype(np.int64), weights=durations)[::-1]
    covered = np.cumsum(time_at)
    reached = int(np.searchsorted(covered, share * (end - start), side="left"))
    return float(lowest + time_at.size - 1 - min(reached, time_at.size - 1))


def _burstiness(
    weekly: np.ndarray, times: np.ndarray, levels: np.ndarray, win: _Window
) -> dict[str, Any]:
    """F2: how the load comes and goes in time, over weeks and within them."""
    mean = float(weekly.mean()) if weekly.size else 0.0
    cv = float(weekly.std() / mean) if mean > 0 else None
    peak_to_mean = float(weekly.max() / mean) if mean > 0 else None
    hours = win.weeks * 7 * 24.0
    mean_gpus = float(weekly.sum()) / hours if hours else 0.0
    busiest = _busiest_level(
        times, levels, win.start.timestamp(), win.end.timestamp(), BUSIEST_SHARE
    )
    busiest_to_mean = busiest / mean_gpus if mean_gpus > 0 else None
    if cv is None:
        shape = "no load"
    elif cv >= BURSTY_CV or (
        busiest_to_mean is not None and busiest_to_mean >= BURSTY_PEAK_TO_MEAN
    ):
        shape = "bursty"
    else:
        shape = "steady"
    return {
        "weekly_gpu_hours_cv": _r(cv),
        "peak_week_to_mean": _r(peak_to_mean),
        "mean_gpus_in_use": _r(mean_gpus),
        "busiest_share": BUSIEST_SHARE,
        "busiest_gpus_in_use": int(busiest),
        "busiest_to_mean": _r(busiest_to_mean),
        "shape": shape,
        "thresholds": {
            "bursty_cv_min": BURSTY_CV,
            "bursty_busiest_to_mean_min": BURSTY_PEAK_TO_MEAN,
        },
    }


def _concentration(job_hours: np.ndarray) -> dict[str, Any]:
    """How the GPU-hours are spread over jobs: the share the largest tenth of the jobs
    holds, and the largest job's (F2; a figure of job sizes, not of time)."""
    total = float(job_hours.sum())
    top_n = max(1, math.ceil(TOP_JOBS_FRACTION * job_hours.size)) if job_hours.size else 0
    ranked = np.sort(job_hours)[::-1]
    return {
        "top_jobs_fraction": TOP_JOBS_FRACTION,
        "top_jobs_gpu_hours_share": _r(float(ranked[:top_n].sum() / total) if total > 0 else None),
        "largest_job_gpu_hours_share": _r(float(ranked[0] / total) if total > 0 else None),
    }


# The longest window a profile covers: twenty years of weekly figures.
MAX_WEEKS = 1040
_GPU_JOBS = "ran AND gpus > 0"
_COUNT_NAMES = (
    "jobs_total",
    "never_started",
    "pending",
    "non_gpu",
    "attempts_total",
    "trainings_ok",
    "restart_jobs",
    "requeue_attempts",
    "unsuccessful",
    "running",
)


@dataclass
class _Window:
    log_start: datetime | None
    start: datetime
    end: datetime
    weeks: int


def _window(log: JobLog, opts: ProfileOptions) -> _Window:
    """Whole weeks ending at `until`, else at the log's last event (SPEC F2)."""
    log_start, log_end = log_span(log.attempts)
    end = (opts.until or log_end or datetime.now(UTC)).astimezone(UTC)
    return _Window(log_start, end - timedelta(weeks=opts.weeks), end, opts.weeks)


def _open(log: JobLog, jobs: pa.Table, win: _Window) -> Any:
    """A connection with `wjobs`, the jobs that started (or were submitted) in the window."""
    con = sql.connect(attempts=log.attempts, jobs=jobs)
    # A view, not a copy: each figure below is one more zero-copy scan of the Arrow table.
    con.execute(
        "CREATE TEMP VIEW wjobs AS SELECT *, coalesce(pending_tasks, 1) AS tasks FROM jobs "
        f"WHERE coalesce(first_start, first_submit) >= TIMESTAMPTZ '{win.start.isoformat()}' "
        f"AND coalesce(first_start, first_submit) <= TIMESTAMPTZ '{win.end.isoformat()}'"
    )
    return con


def _counts(con: Any) -> dict[str, int]:
    """F1 counts over the window's jobs (tasks of a pending array range one by one)."""
    row = con.execute(
        f"""SELECT
          count(*) FILTER (WHERE {_GPU_JOBS}),
          coalesce(sum(tasks) FILTER (WHERE NOT ran AND final_state
            NOT IN ('pending', 'requeued')), 0),
          coalesce(sum(tasks) FILTER (WHERE NOT ran AND final_state
            IN ('pending', 'requeued')), 0),
          count(*) FILTER (WHERE ran AND gpus = 0),
          coalesce(sum(ran_attempts) FILTER (WHERE {_GPU_JOBS}), 0),
          count(*) FILTER (WHERE {_GPU_JOBS} AND base_kind = 'train'
            AND final_state = 'completed'),
          count(*) FILTER (WHERE {_GPU_JOBS} AND is_resubmission),
          coalesce(sum(ran_attempts - 1) FILTER (WHERE {_GPU_JOBS}), 0),
          count(*) FILTER (WHERE {_GPU_JOBS} AND final_state <> 'completed'),
          count(*) FILTER (WHERE {_GPU_JOBS} AND final_state = 'running')
        FROM wjobs"""
    ).fetchall()[0]
    return {k: int(v) for k, v in zip(_COUNT_NAMES, row, strict=True)}


def _by_kind(con: Any) -> dict[str, Any]:
    """Jobs and GPU-hours per kind, how each kind was found, final states, GPU count sources."""
    jobs_by_kind = dict.fromkeys(KINDS, 0)
    hours_by_kind = dict.fromkeys(KINDS, 0.0)
    # fsum (compensated): a plain parallel sum of a million hours depends on how the rows
    # fall to threads, and its last digit moved from run to run.
    for kind, n, hours, requeue_hours in con.execute(
        f"""SELECT kind, count(*), fsum(gpu_hours - requeue_gpu_hours), fsum(requeue_gpu_hours)
        FROM wjobs WHERE {_GPU_JOBS} GROUP BY kind"""
    ).fetchall():
        jobs_by_kind[kind] = int(n)
        hours_by_kind[kind] += float(hours or 0.0)
        # Requeue attempts are restart work whatever the job's kind (issue: requeue = restart).
        hours_by_kind["restart"] += float(requeue_hours or 0.0)

    def grouped(query: str) -> dict[str, int]:
        return {str(k): int(v) for k, v in con.execute(query).fetchall()}

    return {
        "jobs_by_kind": jobs_by_kind,
        "hours_by_kind": hours_by_kind,
        "kind_sources": grouped(
            f"SELECT kind_source, count(*) FROM wjobs WHERE {_GPU_JOBS} GROUP BY 1 ORDER BY 1"
        ),
        "final_states": grouped(
            f"SELECT final_state, count(*) FROM wjobs WHERE {_GPU_JOBS} GROUP BY 1 ORDER BY 1"
        ),
        # Where each started attempt's GPU count came from (AllocTRES, ReqTRES, ...).
        "gpu_count_sources": grouped(
            """SELECT CASE WHEN a.gpu_count IS NULL THEN 'none (no GPU information)'
                  ELSE coalesce(a.gpu_source, 'gpu_count column') END, count(*)
            FROM attempts a SEMI JOIN (SELECT job_id FROM wjobs WHERE ran) j USING (job_id)
            WHERE a.start IS NOT NULL AND a.state <> 'pending' GROUP BY 1 ORDER BY 1"""
        ),
    }


@dataclass
class _Attempts:
    """GPU attempts of the window's jobs as arrays: start, end (s), GPUs, completed."""

    s: np.ndarray
    e: np.ndarray
    g: np.ndarray
    ok: np.ndarray

    @property
    def hours(self) -> np.ndarray:
        """Duration of each attempt in hours."""
        hours: np.ndarray = (self.e - self.s) / 3600.0
        return hours


def _attempts(con: Any, win: _Window) -> _Attempts:
    end_sql = f"TIMESTAMPTZ '{utc_iso(win.end)}'"
    table = con.sql(
        f"""SELECT epoch(a.start) AS s, epoch(coalesce(a."end", {end_sql}))
              AS e, a.gpu_count AS g, a.state = 'completed' AS ok
        FROM attempts a SEMI JOIN (SELECT job_id FROM wjobs WHERE {_GPU_JOBS}) j
          USING (job_id)
        WHERE a.start IS NOT NULL AND a.gpu_count > 0 AND a.state <> 'pending'"""
    ).to_arrow_table()

    def col(name: str, kind: type) -> np.ndarray:
        values: np.ndarray = np.asarray(table.column(name).to_numpy(zero_copy_only=False))
        return values.astype(kind)

    return _Attempts(col("s", float), col("e", float), col("g", float), col("ok", bool))


def _job_hours(con: Any) -> np.ndarray:
    return np.asarray(
        con.sql(f"SELECT gpu_hours FROM wjobs WHERE {_GPU_JOBS}")
        .to_arrow_table()
        .column(0)
        .to_numpy(zero_copy_only=False),
        dtype=float,
    )


def _lead(con: Any) -> tuple[float | None, int]:
    """F3: share of GPU-hours made eligible >= LEAD_TIME_HOURS after submission, and how
    many GPU jobs have an eligible time at all."""
    with_eligible, planned, n = con.execute(
        f"""SELECT fsum(gpu_hours) FILTER (WHERE first_eligible IS NOT NULL),
              fsum(gpu_hours) FILTER (WHERE epoch(first_eligible) - epoch(first_submit)
                >= {LEAD_TIME_HOURS * 3600} AND coalesce(first_wait_reason, '')
                NOT ILIKE '%depend%'),
              count(*) FILTER (WHERE first_eligible IS NOT NULL)
            FROM wjobs WHERE {_GPU_JOBS}"""
    ).fetchall()[0]
    share = float(planned or 0.0) / float(with_eligible) if n and with_eligible else None
    return share, int(n)


def _weeks(con: Any, win: _Window, weekly_hours: np.ndarray) -> list[dict[str, Any]]:
    """Jobs per kind and GPU-hours of each week of the window."""
    rows = con.execute(
        f"""SELECT CAST(floor((epoch(first_start) - {win.start.timestamp()}) / 604800)
              AS INTEGER) AS w, kind, count(*)
            FROM wjobs WHERE {_GPU_JOBS} GROUP BY ALL"""
    ).fetchall()
    weeks: list[dict[str, Any]] = []
    for i in range(win.weeks):
        by_kind = dict.fromkeys(KINDS, 0)
        for w, kind, n in rows:
            if w == i or (i == win.weeks - 1 and w == win.weeks):
                by_kind[kind] += int(n)
        weeks.append(
            {
                "week": i + 1,
                "start": utc_iso(win.start + timedelta(weeks=i)),
                "end": utc_iso(win.start + timedelta(weeks=i + 1)),
                "jobs": sum(by_kind.values()),
                "jobs_by_kind": by_kind,
                "gpu_hours": _r(weekly_hours[i]),
            }
        )
    return weeks


def _durations(hours: np.ndarray) -> dict[str, Any]:
    """p10/p50/p90, max, mean and the histogram of attempt durations (hours)."""
    quantiles = (
        {
            f"p{q}": _r(float(v))
            for q, v in zip((10, 50, 90), np.percentile(hours, (10, 50, 90)), strict=True)
        }
        if hours.size
        else {"p10": None, "p50": None, "p90": None}
    )
    return {
        **quantiles,
        "max": _r(float(hours.max())) if hours.size else None,
        "mean": _r(float(hours.mean())) if hours.size else None,
        "histogram": [
            {"bucket": label, "attempts": int(((hours >= lo) & (hours < hi)).sum())}
            for label, lo, hi in DURATION_BUCKETS
        ],
    }


def _pool(opts: ProfileOptions, total: float, useful: float, peak: float) -> dict[str, Any]:
    """C2: busy share of the given pool; whether the log ever used more GPUs than it has."""
    available = busy = occupied = exceeds = None
    if opts.pool_gpus:
        available = opts.pool_gpus * opts.weeks * 7 * 24.0
        busy, occupied = useful / available, total / available
        exceeds = peak > opts.pool_gpus
    return {
        "pool_gpus": opts.pool_gpus,
        "available_gpu_hours": _r(available),
        "busy_share": _r(busy, 4),
        "occupied_share": _r(occupied, 4),
        "peak_exceeds_pool": exceeds,
    }


def _notes(
    log: JobLog,
    win: _Window,
    counts: dict[str, int],
    lead_n: int,
    peak: float,
    opts: ProfileOptions,
) -> tuple[list[Message], float | None]:
    """What a reader must know to read the figures right; and the weeks the log covers."""
    notes: list[Message] = []
    covered = None
    if win.log_start is not None and win.log_start > win.start:
        covered = (win.end - win.log_start).total_seconds() / 604800.0
        notes.append(
            nmessage(
                "jobs",
                "the log starts {start}: it covers {covered:.1f} of the {weeks} week asked for; "
                "weekly figures before that are zero, not measured",
                "the log starts {start}: it covers {covered:.1f} of the {weeks} weeks asked "
                "for; weekly figures before that are zero, not measured",
                count="weeks",
                start=utc_iso(win.log_start),
                covered=covered,
                weeks=win.weeks,
            )
        )
    if counts["jobs_total"] == 0:
        notes.append(message("jobs", "no job in the window ran on a GPU: GPU figures are empty"))
    elif lead_n == 0:
        notes.append(
            message("jobs", "no GPU job has an eligible time: lead-time share not measurable")
        )
    if counts["running"]:
        notes.append(
            nmessage(
                "jobs",
                "{n:num} job still running: counted up to {time}",
                "{n:num} jobs still running: counted up to {time}",
                n=counts["running"],
                time=utc_iso(win.end),
            )
        )
    pool = opts.pool_gpus
    if pool and peak > pool:
        notes.append(
            nmessage(
                "jobs",
                "the log shows {peak:num} GPU in use at once, more than the {pool}-GPU pool: the "
                "log holds jobs of other pools too, or the pool size is wrong; this peak does "
                "not fit the pool",
                "the log shows {peak:num} GPUs in use at once, more than the {pool}-GPU pool: "
                "the log holds jobs of other pools too, or the pool size is wrong; this peak "
                "does not fit the pool",
                count="peak",
                peak=int(peak),
                pool=pool,
            )
        )
    return notes + log.note_messages + opts.notes, covered


def build_profile(log: JobLog, options: ProfileOptions | None = None) -> ProfileResult:
    """Compute the F1-F3 profile of a job log."""
    opts = options or ProfileOptions()
    jobs = jobs_table(log.attempts, opts.classify)
    win = _window(log, opts)
    con = _open(log, jobs, win)
    try:
        counts = _counts(con)
        kinds = _by_kind(con)
        att = _attempts(con, win)
        job_hours = _job_hours(con)
        lead_share, lead_n = _lead(con)
        times, levels = _step_function(att.s, att.e, att.g)
        weekly_hours = _integrate(times, levels, _edges(win, 604800.0, win.weeks)) / 3600.0
        weeks = _weeks(con, win, weekly_hours)
    finally:
        con.close()
    peak = float(levels.max()) if levels.size else 0.0
    peak_at = (
        datetime.fromtimestamp(float(times[int(levels.argmax())]), UTC) if levels.size else None
    )
    durations = att.hours
    attempt_hours = att.g * durations
    total, useful = float(attempt_hours.sum()), float(attempt_hours[att.ok].sum())
    notes, covered = _notes(log, win, counts, lead_n, peak, opts)
    figures: dict[str, Any] = {
        **_subject(opts),
        "window": {
            "start": utc_iso(win.start),
            "end": utc_iso(win.end),
            "weeks": win.weeks,
            "weeks_covered_by_log": _r(covered, 2),
        },
        **_job_figures(counts, kinds),
        "reconciliation": reconciliation(jobs),
        "gpu_count_sources": kinds["gpu_count_sources"],
        "gpu_hours_total": _r(total),
        "gpu_hours_by_kind": {k: _r(v) for k, v in kinds["hours_by_kind"].items()},
        "gpu_hours_lost_share": _r((total - useful) / total if total else None),
        "useful_gpu_hours": _r(useful),
        "peak_concurrent_gpus": int(peak),
        "gpus_per_attempt_mean": _r(float(att.g.mean())) if att.g.size else None,
        "peak_at": utc_iso(peak_at),
        "jobs_per_week_mean": _r(counts["jobs_total"] / win.weeks),
        "duration_hours": _durations(durations),
        "weeks": weeks,
        "burstiness": _burstiness(weekly_hours, times, levels, win),
        "concentration": _concentration(job_hours),
        "predictability": _predictability(weekly_hours, lead_share),
        **_pool(opts, total, useful, peak),
        **skipped_figures(log),
        "notes": [english(n) for n in notes],
    }
    summary = summary_message(figures)
    if opts.option is not None:
        summary = message("jobs", "option {option}: {summary}", option=opts.option, summary=summary)
    figures["messages"] = record_texts(summary, [*notes, *_skipped_note(figures)]).messages
    day_edges = _edges(win, 86400.0, win.weeks * 7)
    series = {
        "day_starts": [win.start + timedelta(days=i) for i in range(win.weeks * 7)],
        "daily_gpu_hours": (_integrate(times, levels, day_edges) / 3600.0).tolist(),
        "concurrency": _downsample(times, levels, win.start, win.end),
    }
    # The figures have the shape their model declares (a drift fails here, not in a reader).
    model = ProfileFigures.model_validate(figures)
    return ProfileResult(figures=figures, model=model, jobs=jobs, series=series, notes=notes)


def _subject(opts: ProfileOptions) -> dict[str, Any]:
    """The option the logs come from, the contour they exercised and the marks' join, as
    the record states them (each left out while there is none)."""
    out: dict[str, Any] = {}
    if opts.option is not None:
        out["option"] = opts.option
    if opts.contour is not None:
        out["contour"] = opts.contour.model_dump(mode="json")
    if opts.marks is not None:
        out["marks"] = opts.marks.model_dump(mode="json")
    return out


def _edges(win: _Window, step_s: float, n: int) -> np.ndarray:
    return np.array([win.start.timestamp() + i * step_s for i in range(n + 1)])


def _job_figures(counts: dict[str, int], kinds: dict[str, Any]) -> dict[str, Any]:
    """F1: GPU jobs, attempts, kinds, restarts, never started, unsuccessful share."""
    total = counts["jobs_total"]
    return {
        "jobs_total": total,
        "attempts_total": counts["attempts_total"],
        "jobs_by_kind": kinds["jobs_by_kind"],
        "kind_sources": kinds["kind_sources"],
        "trainings_successful": counts["trainings_ok"],
        "related_jobs": total,
        "restarts": counts["restart_jobs"] + counts["requeue_attempts"],
        "restart_jobs": counts["restart_jobs"],
        "requeue_attempts": counts["requeue_attempts"],
        "never_started": counts["never_started"],
        "pending": counts["pending"],
        "non_gpu_jobs": counts["non_gpu"],
        "final_states": kinds["final_states"],
        "unsuccessful_share": _r(counts["unsuccessful"] / total if total else None),
    }


def skipped_figures(log: JobLog) -> dict[str, Any]:
    """The rows a log command skipped (--skip-bad-rows): how many, the first 50 with where
    and why (the English reason, and its message for readers of other languages), and the
    duplicate rows dropped."""
    return {
        "skipped_rows": len(log.bad_rows),
        "skipped": [
            {
                "path": b.path,
                "line": b.line,
                "field": b.field,
                "reason": b.reason,
                "message": b.message,
            }
            for b in log.bad_rows[:50]
        ],
        "duplicate_rows_dropped": log.duplicate_rows,
    }


def _skipped_note(figures: dict[str, Any]) -> list[Message]:
    """The record's note on skipped rows (the command prints them one by one instead)."""
    n = figures["skipped_rows"]
    if not n:
        return []
    return [
        nmessage(
            "jobs",
            "{n:num} malformed row skipped (--skip-bad-rows)",
            "{n:num} malformed rows skipped (--skip-bad-rows)",
            n=n,
        )
    ]


def _downsample(
    times: np.ndarray, levels: np.ndarray, start: datetime, end: datetime, buckets: int = 1500
) -> dict[str, list[Any]]:
    """Max GPUs in use per time bucket: a chart needs shape and peaks, not every event."""
    edges = np.linspace(start.timestamp(), end.timestamp(), buckets + 1)
    if times.size == 0:
        return {"t": [datetime.fromtimestamp(x, UTC) for x in edges[:-1]], "gpus": [0] * buckets}
    idx_at_edge = np.searchsorted(times, edges[:-1], side="right") - 1
    level_at_edge = np.where(idx_at_edge >= 0, levels[np.clip(idx_at_edge, 0, None)], 0)
    bucket_of_event = np.clip(np.searchsorted(edges, times, side="right") - 1, 0, buckets - 1)
    peak = level_at_edge.astype(float)
    np.maximum.at(peak, bucket_of_event, levels.astype(float))
    return {
        "t": [datetime.fromtimestamp(float(x), UTC) for x in edges[:-1]],
        "gpus": peak.astype(int).tolist(),
    }


def _layout(msgid: str, **args: Any) -> Message:
    """A message made of fields and separators only ("11 smoke"): it has no words to
    translate, so no catalogue holds it and every language shows its fields as they are
    formatted for the reader."""
    return {"domain": "jobs", "msgid": msgid, "args": args}


def _listing(parts: list[Message]) -> Message:
    """Messages one after another, separated by commas ("11 smoke, 3 eval")."""
    if len(parts) == 1:
        return parts[0]
    return _layout("{first}, {rest}", first=parts[0], rest=_listing(parts[1:]))


def summary_message(figures: dict[str, Any]) -> Message:
    """F1 in one sentence: trainings next to everything else they took, and the GPU-hours."""
    kinds = [
        _layout("{n:num} {kind}", n=n, kind=k)
        for k, n in figures["jobs_by_kind"].items()
        if n and k != "train"
    ]
    total = figures["jobs_total"]
    jobs = (
        nmessage(
            "jobs",
            "{n:num} GPU job in all ({kinds})",
            "{n:num} GPU jobs in all ({kinds})",
            n=total,
            kinds=_listing(kinds),
        )
        if kinds
        else nmessage("jobs", "{n:num} GPU job in all", "{n:num} GPU jobs in all", n=total)
    )
    return nmessage(
        "jobs",
        "{n:num} successful full training; {jobs}; {hours}",
        "{n:num} successful full trainings; {jobs}; {hours}",
        n=figures["trainings_successful"],
        jobs=jobs,
        hours=nmessage(
            "jobs",
            "{hours:num} GPU-hour",
            "{hours:num} GPU-hours",
            count="hours",
            hours=figures["gpu_hours_total"],
        ),
    )


def summary_line(figures: dict[str, Any]) -> str:
    """The summary sentence in English (what the record keeps and `demo` prints)."""
    return english(summary_message(figures))


def to_evidence(result: ProfileResult, inputs: list[ev.InputRef]) -> ev.Evidence:
    """The profile as an evidence record (SPEC F1-F3, C2)."""
    f = result.figures
    texts = record_texts(f["messages"]["summary"], f["messages"]["notes"])
    verdict: ev.Verdict = (
        "warn" if f["skipped_rows"] or f["window"]["weeks_covered_by_log"] else "info"
    )
    figures = dict(f)
    figures["series"] = {
        "day_starts": [utc_iso(d) for d in result.series["day_starts"]],
        "daily_gpu_hours": [round(h, 4) for h in result.series["daily_gpu_hours"]],
        "concurrency": {
            "t": [utc_iso(x) for x in result.series["concurrency"]["t"]],
            "gpus": result.series["concurrency"]["gpus"],
        },
    }
    ProfileRecordFigures.model_validate(figures)
    return ev.Evidence(
        kind="profile",
        title="Workload profile",
        spec_ids=["F1", "F2", "F3", "C2"],
        verdict=verdict,
        summary=texts.summary,
        figures=figures,
        notes=texts.notes,
        inputs=inputs,
    )
