"""The figures of a "profile" evidence record as a typed model (`ProfileFigures`), for
readers in any package (SPEC F1-F3, C2).

    figures_of(record)                              ProfileRecordFigures
    figures_of(record).predictability.verdict       "unpredictable"
    figures_of(record).jobs_by_kind["eval"]         16

`gpudecide.jobs.profile` builds the figures and validates them against these models; the
record keeps `ProfileRecordFigures.model_dump(mode="json")`, key for key. Every text a
person reads is there in English and as a message (`messages`, `skipped[].message`), said
in the reader's language with `gpudecide.message.render`; the shape, verdict and meaning
words are English ids said by `gpudecide.jobs.words`.
"""

from __future__ import annotations

from typing import ClassVar

from gpudecide import evidence as ev
from gpudecide.figure_model import FigureModel, StoredMessage
from gpudecide.marks.join import JoinReport

__all__ = [
    "Burstiness",
    "BurstinessThresholds",
    "Concentration",
    "Concurrency",
    "DurationBucket",
    "Durations",
    "Predictability",
    "PredictabilityThresholds",
    "ProfileContour",
    "ProfileFigures",
    "ProfileRecordFigures",
    "Reconciliation",
    "RecordMessages",
    "Series",
    "SkippedRow",
    "Week",
    "Window",
    "figures_of",
]


class _Figures(FigureModel):
    """A part of a profile record's figures; the keys it writes only when they have a value
    are each model's `OMIT_NONE`."""


class ProfileContour(_Figures):
    """`figures["contour"]` of a profile that names an option: the platform its logs were
    printed by (the executor: slurm, k8s, vendor; None for the team's own CSV/JSONL) and,
    for a Slurm log of one cluster, that cluster (sacct's Cluster), in the shape every
    record states its contour (`gpudecide.decision.contour`)."""

    executor: str | None
    cluster: str = ""
    context: str = ""
    host: str = ""
    storage: str = ""
    artifacts: str | None = None


class Window(_Figures):
    """Whole weeks ending at the log's last event (or `--until`), in UTC (F2)."""

    start: str
    end: str
    weeks: int
    # weeks the log covers when it starts after the window does (None: all of them)
    weeks_covered_by_log: float | None


class Reconciliation(_Figures):
    """Every job of the log in exactly one group, counted in tasks (F1, Q1)."""

    gpu_jobs: int
    cpu_only: int
    no_gpu_information: int
    never_started: int
    pending: int
    total: int


class DurationBucket(_Figures):
    """Attempts whose duration falls in one bucket of the histogram."""

    bucket: str
    attempts: int


class Durations(_Figures):
    """Attempt durations in hours; None where no GPU attempt ran."""

    p10: float | None
    p50: float | None
    p90: float | None
    max: float | None
    mean: float | None
    histogram: list[DurationBucket]


class Week(_Figures):
    """One week of the window: its GPU jobs by kind and GPU-hours."""

    week: int
    start: str
    end: str
    jobs: int
    jobs_by_kind: dict[str, int]
    gpu_hours: float


class BurstinessThresholds(_Figures):
    """Where the profile calls a workload bursty (F2)."""

    bursty_cv_min: float
    bursty_busiest_to_mean_min: float


class Burstiness(_Figures):
    """How the load comes and goes in time (F2): week to week (CV, the peak week against
    the mean one) and within the window (the GPUs in use during its busiest
    `busiest_share` of the time against the mean in use); `shape` is an English id of
    `jobs.profile.SHAPES`."""

    weekly_gpu_hours_cv: float | None
    peak_week_to_mean: float | None
    mean_gpus_in_use: float
    busiest_share: float
    busiest_gpus_in_use: int
    busiest_to_mean: float | None
    shape: str
    thresholds: BurstinessThresholds


class Concentration(_Figures):
    """How the GPU-hours are spread over jobs (F2): the share the largest `top_jobs_fraction`
    of the jobs holds, and the largest job's. Big trainings beside many small evals make it
    high in a steady pipeline: it says nothing about bursts."""

    top_jobs_fraction: float
    top_jobs_gpu_hours_share: float | None
    largest_job_gpu_hours_share: float | None


class PredictabilityThresholds(_Figures):
    """The WAPE bands of the predictability verdict (F3)."""

    predictable_wape_max: float
    partly_predictable_wape_max: float


class Predictability(_Figures):
    """How well last week's demand predicts next week's (F3); `verdict` is an English id of
    `jobs.profile.VERDICTS`, `meaning` its English sentence."""

    method: str
    wape: float | None
    lag1_autocorrelation: float | None
    thresholds: PredictabilityThresholds
    verdict: str
    meaning: str
    lead_time_share: float | None
    lead_time_hours: float


class SkippedRow(_Figures):
    """A row the log command skipped (--skip-bad-rows): where, and why in English and as a
    message of the `errors` catalogue."""

    path: str
    line: int | None
    field: str | None
    reason: str
    message: StoredMessage


class RecordMessages(_Figures):
    """The record's summary and notes as messages (one per note, in the record's order)."""

    summary: StoredMessage
    notes: list[StoredMessage]


class ProfileFigures(_Figures):
    """What `build_profile` computes (SPEC F1-F3, C2). `option` names the option whose
    platform the logs come from (left out: the team's workload) and `contour` what they
    exercised; `marks` is how the lifecycle marks were joined to the jobs (left out: no
    marks were read)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"option", "contour", "marks"})

    option: str | None = None
    contour: ProfileContour | None = None
    marks: JoinReport | None = None
    window: Window
    jobs_total: int
    attempts_total: int
    jobs_by_kind: dict[str, int]
    kind_sources: dict[str, int]
    trainings_successful: int
    related_jobs: int
    restarts: int
    restart_jobs: int
    requeue_attempts: int
    never_started: int
    pending: int
    non_gpu_jobs: int
    final_states: dict[str, int]
    unsuccessful_share: float | None
    reconciliation: Reconciliation
    gpu_count_sources: dict[str, int]
    gpu_hours_total: float
    gpu_hours_by_kind: dict[str, float]
    gpu_hours_lost_share: float | None
    useful_gpu_hours: float
    peak_concurrent_gpus: int
    gpus_per_attempt_mean: float | None
    peak_at: str | None
    jobs_per_week_mean: float
    duration_hours: Durations
    weeks: list[Week]
    burstiness: Burstiness
    concentration: Concentration
    predictability: Predictability
    pool_gpus: int | None
    available_gpu_hours: float | None
    busy_share: float | None
    occupied_share: float | None
    peak_exceeds_pool: bool | None
    skipped_rows: int
    skipped: list[SkippedRow]
    duplicate_rows_dropped: int
    # the notes on the figures in English (the record adds the skipped rows to them)
    notes: list[str]
    messages: RecordMessages


class Concurrency(_Figures):
    """GPUs in use: the most in each time bucket, for the chart."""

    t: list[str]
    gpus: list[int]


class Series(_Figures):
    """What the report's charts draw: GPU-hours per day, GPUs in use over time."""

    day_starts: list[str]
    daily_gpu_hours: list[float]
    concurrency: Concurrency


class ProfileRecordFigures(ProfileFigures):
    """The figures a "profile" record holds: the profile's, and the series of its charts."""

    series: Series


def figures_of(record: ev.Evidence) -> ProfileRecordFigures:
    """A "profile" record's figures as their model.

    A record of another kind is a LookupError; figures of another shape (an edited or older
    record) are pydantic's ValidationError (a ValueError), naming the field.
    """
    if record.kind != "profile":
        raise LookupError(f"{record.kind!r} is not a profile record")
    return ProfileRecordFigures.model_validate(record.figures)
