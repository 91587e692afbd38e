"""The figures of the queue's records as their typed models, for readers in any package.

    figures_of(record)   queue -> QueueFigures, replay -> ReplayFigures

The models of every part of a `queue` or `replay` record live here, apart from the code that
produces them (`gpudecide.queue.analysis` and its parts `lifecycle`, `slo`, `preemption`,
`chains`; `restarts` keeps its own, as light as these), so that a reader of a record (the
decision and cost packages) loads no DuckDB, Arrow or NumPy (issue 25).
`model_dump(mode="json")` of the model is the record's `figures`, key for key.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from gpudecide import evidence as ev
from gpudecide.marks.join import JoinReport
from gpudecide.queue.model import Figure, QueueContour, RecordMessages
from gpudecide.queue.restarts import RestartsFigures

__all__ = [
    "FIGURES",
    "AmbiguityFigures",
    "CausesFigures",
    "ChainFigures",
    "ChainJobFigures",
    "CheckpointCounts",
    "JobFigures",
    "KindUnmeasuredFigures",
    "Measure",
    "PhaseFigures",
    "Policy",
    "PoolFigures",
    "PreemptionFigures",
    "PriorityLevelFigures",
    "QueueFigures",
    "QueueOverview",
    "QueueSummaryFigures",
    "ReplayFigures",
    "ReplaySloFigures",
    "ReplayWindowFigures",
    "SkippedRowFigures",
    "SloFigures",
    "StageFigures",
    "StopFigures",
    "UnplaceableFigures",
    "WaitReasonFigures",
    "figures_of",
    "queue_figures",
    "replay_figures",
]

# The replay's scheduling policies (`gpudecide.queue.replay`) and the clocks an SLO can
# measure (`gpudecide.queue.slo`), as the records write them.
Policy = Literal["fifo", "backfill", "priority"]
Measure = Literal[
    "eligible_to_start", "submit_to_start", "eligible_to_first_step", "submit_to_first_step"
]


class PhaseFigures(Figure):
    """One phase over the jobs where it was measured (`phase_summary`): seconds, n, and the
    jobs where it was not (Q1)."""

    meaning: str
    n: int
    p50: float | None
    p90: float | None
    p99: float | None
    max: float | None
    unmeasured: int


class AmbiguityFigures(Figure):
    """Jobs whose phases cannot be told apart, and why (`ambiguity`, Q1)."""

    jobs: int
    without_eligible_time: int
    without_first_step_time: int
    failures_before_or_after_first_step_unknown: int
    phases_indistinct: int


class KindUnmeasuredFigures(Figure):
    """One job kind: its started jobs, and of them how many have each phase the training
    code bounds unmeasured (no time in the log nor in the marks; `unmeasured_by_kind`)."""

    started: int
    prep: int
    startup: int
    since_checkpoint: int


class WaitReasonFigures(Figure):
    """One wait reason with its category, its jobs and their total queue wait (Q2)."""

    reason: str
    category: str
    jobs: int
    total_wait_s: float


class StageFigures(Figure):
    """One stage of a chain: its jobs, their waiting and running seconds, whether one
    completed."""

    stage: str
    jobs: int
    waiting_s: float
    running_s: float
    unmeasured_jobs: int
    completed: bool


class ChainJobFigures(Figure):
    """A job of a chain on its timeline."""

    job_id: str
    kind: str | None
    submit: str | None
    start: str | None
    end: str | None
    state: str | None


class ChainFigures(Figure):
    """One chain from its first submission to the end of its last stage (Q5)."""

    chain: str
    jobs: int
    first_submit: str | None
    finished_at: str | None
    finished: bool
    last_stage: str | None
    end_to_end_s: float | None
    handoff_idle_s: float | None
    stages: list[StageFigures]
    longest_waiting_stage: str | None
    timeline: list[ChainJobFigures]


class CheckpointCounts(Figure):
    """Stops with a checkpoint within the grace before them, with one long before, and
    without a checkpoint time."""

    yes: int
    no: int
    unknown: int


class PriorityLevelFigures(Figure):
    """A priority level (a named class, else the number) and its started GPU jobs."""

    level: str | None
    jobs: int


class StopFigures(Figure):
    """One preempted or requeued attempt."""

    job_id: str
    attempt: int
    state: str
    detail: str | None
    gpus: int
    checkpoint_before_stop: bool | None


class PreemptionFigures(Figure):
    """Preemption in the log (`preemption_summary`, Q4): stops, GPU-minutes lost, the
    checkpoints before them, the priority mix and what they say (`findings`, in English)."""

    stops: int
    preempted: int
    requeued: int
    gpu_minutes_lost_since_checkpoint: float
    gpu_minutes_lost_upper_bound_unmeasured: float
    checkpoint_before_stop: CheckpointCounts
    checkpoint_grace_s: float
    priority_levels: list[PriorityLevelFigures]
    top_priority_share: float | None
    findings: list[str]
    attempts: list[StopFigures]


class CausesFigures(Figure):
    """An SLO's violations by who can act on them (`CAUSES`, Q2)."""

    capacity: int
    own_limits: int
    team_choice: int
    other: int


class SloFigures(Figure):
    """One SLO evaluated on the log (`evaluate`, Q3): counts in tasks, the share of
    violations with its 95 % interval, the verdict and why, the observed waits (seconds,
    at most CDF_POINTS quantiles)."""

    name: str
    description: str
    measure: Measure
    threshold_minutes: float
    allowed_violation_share: float
    selected: int
    measured: int
    unmeasured: int
    violations: int
    violations_waiting_for_quota: int
    violations_by_cause: CausesFigures
    violation_share: float | None
    ci95: list[float] | None
    waits_s: list[float]
    verdict: Literal["pass", "fail", "inconclusive", "not measurable"]
    conclusive: bool
    point_estimate: Literal["pass", "fail"] | None
    more_jobs_to_settle: int | None
    why: str
    # The selector as slo.yaml writes it (only the conditions given) and the jobs it
    # selected by kind, in tasks; records written before them lack both.
    selector: dict[str, Any] | None = None
    selected_by_kind: dict[str, int] | None = None

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"selector", "selected_by_kind"})


class JobFigures(Figure):
    """One job of the log with its phases in seconds (Q1, Q2); a job still waiting has
    waited until the end of the log."""

    job_id: str
    name: str | None
    kind: str | None
    chain_id: str | None
    attempts: int
    state: str | None
    gpus: int | None
    wait_reason: str | None
    wait_category: str | None
    submit: str | None
    eligible: str | None
    start: str | None
    first_step: str | None
    end: str | None
    queue_wait_s: float | None
    submit_to_start_s: float | None
    submit_to_first_step_s: float | None
    eligible_to_start_s: float | None
    dependency_wait_s: float | None
    prep_s: float | None
    startup_s: float | None
    run_s: float | None
    still_waiting: bool
    tasks: int


class QueueSummaryFigures(Figure):
    """The queue's totals, in tasks (a pending array range is each of its tasks)."""

    as_of: str
    jobs: int
    started: int
    never_started: int
    still_waiting: int
    reconciliation: dict[str, int]
    queue_wait_measured: int
    queue_wait_unmeasured: int
    ambiguity: AmbiguityFigures
    wait_by_category_s: dict[str, float]
    slo_verdicts: dict[str, str]
    source_notes: list[str]


class SkippedRowFigures(Figure):
    """A malformed row skipped (--skip-bad-rows): where, the column, why (English, and as
    a message where the reader wrote one)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"message"})

    path: str
    line: int | None
    field: str | None
    reason: str
    message: dict[str, Any] | None = None


class QueueOverview(Figure):
    """The figures of a `queue` record but the per-job list and the messages: everything a
    summary, a note or a command's line is said from, cheap to read for any log.

    `option` names the option whose platform the log comes from and `contour` what it
    exercised; a record of the team's workload has neither (the keys are left out).
    `marks` is how the lifecycle marks were joined to the jobs (left out: none were read);
    `unmeasured_by_kind` what is still unmeasured per job kind (records written before it
    lack it)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset(
        {"option", "contour", "marks", "unmeasured_by_kind"}
    )

    summary: QueueSummaryFigures
    phases: dict[str, PhaseFigures]
    phases_by_kind: dict[str, dict[str, float | None]]
    wait_reasons: list[WaitReasonFigures]
    slo: list[SloFigures]
    preemption: PreemptionFigures
    restarts_from_zero: RestartsFigures
    chains: list[ChainFigures]
    skipped_rows: int
    skipped: list[SkippedRowFigures]
    duplicate_rows_dropped: int
    option: str | None = None
    contour: QueueContour | None = None
    marks: JoinReport | None = None
    unmeasured_by_kind: dict[str, KindUnmeasuredFigures] | None = None


class QueueFigures(QueueOverview):
    """The figures of a `queue` record (SPEC Q1-Q5)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset(
        {"messages", "option", "contour", "marks", "unmeasured_by_kind"}
    )

    jobs: list[JobFigures]
    messages: RecordMessages | None = None


class ReplayWindowFigures(Figure):
    """The part of the log replayed: all of it, or its busiest weeks (`days` long, with
    their GPU-hours)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"days", "gpu_hours"})

    kind: Literal["full", "peak"]
    days: int | None = None
    gpu_hours: float | None = None
    start: str
    end: str


class ReplaySloFigures(Figure):
    """The SLO a replay must meet, with the clock it stops at (the start of a job).

    An SLO whose clock stops at the first training step is measured to the simulated start
    plus each job's own start-up (start -> first step) where the log or the marks measured
    it: `startup_measured` of the jobs it selects (left out for an SLO that stops at the
    start, and in records written before)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"startup_measured"})

    name: str
    measure: str
    threshold_s: float | None
    allowed_violation_share: float
    startup_measured: int | None = None


class UnplaceableFigures(Figure):
    """Jobs a pool cannot hold, by the GPUs each needs."""

    gpus: int
    jobs: int


class PoolFigures(Figure):
    """What a pool of one size did to the log (`PoolStats`), with the share of the
    SLO's jobs that waited past its threshold.

    The waits are of the jobs the pool holds; the jobs it cannot hold (`unplaceable`, by
    the GPUs they need) never start, so the SLO share counts each as a violation, over the
    `slo_jobs` the SLO selects (`slo_unplaceable` of them beyond the pool). `utilisation`
    is the occupied utilisation: GPU-hours of the jobs it ran over its GPUs times the
    replayed window. Records written before these keys existed lack them.
    """

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"unplaceable", "slo_jobs", "slo_unplaceable"})

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
    unplaceable: list[UnplaceableFigures] | None = None
    slo_jobs: int | None = None
    slo_unplaceable: int | None = None

    @property
    def held(self) -> bool:
        """Whether the pool holds every job of the log."""
        return self.jobs_unplaceable == 0


class ReplayFigures(Figure):
    """The figures of a `replay` record (SPEC C8, D3, Q3); `notes` and `messages` are
    said from the rest."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"messages", "option", "marks"})

    window: ReplayWindowFigures
    policy: Policy
    jobs: int
    slo: ReplaySloFigures | None
    pools: list[PoolFigures]
    recommended_gpus: int | None
    zero_wait_peak_gpus: int
    largest_job_gpus: int
    notes: list[str] = Field(default_factory=list)
    messages: RecordMessages | None = None
    # The option whose platform the replayed logs come from (left out: the team's workload).
    option: str | None = None
    # How the lifecycle marks were joined to the jobs (left out: none were read).
    marks: JoinReport | None = None


FIGURES: dict[str, type[QueueFigures] | type[ReplayFigures]] = {
    "queue": QueueFigures,
    "replay": ReplayFigures,
}


def figures_of(record: ev.Evidence) -> QueueFigures | ReplayFigures:
    """The record's figures as the model of its kind.

    A record of another kind is a LookupError; figures of another shape (an edited or older
    record) are pydantic's ValidationError (a ValueError), naming the field.
    """
    model = FIGURES.get(record.kind)
    if model is None:
        raise LookupError(f"{record.kind!r} is not a queue record ({', '.join(FIGURES)})")
    return model.model_validate(record.figures)


def queue_figures(record: ev.Evidence) -> QueueFigures:
    """A `queue` record's figures (`figures_of`, for a reader that wants that kind)."""
    found = figures_of(record)
    if not isinstance(found, QueueFigures):
        raise LookupError(f"{record.kind!r} is not a queue record")
    return found


def replay_figures(record: ev.Evidence) -> ReplayFigures:
    """A `replay` record's figures (`figures_of`, for a reader that wants that kind)."""
    found = figures_of(record)
    if not isinstance(found, ReplayFigures):
        raise LookupError(f"{record.kind!r} is not a replay record")
    return found
