"""The figures of the queue's records as their typed models, for readers in any package.

    figures_of(record)   queue -> QueueFigures, replay -> ReplayFigures

Each model lives beside the code that produces its figures (`gpudecide.queue.analysis`,
its parts beside `lifecycle`, `slo`, `preemption`, `restarts`, `chains`);
`model_dump(mode="json")` of the model is the record's `figures`, key for key.
"""

from __future__ import annotations

from gpudecide import evidence as ev
from gpudecide.queue.analysis import (
    JobFigures,
    PoolFigures,
    QueueFigures,
    QueueOverview,
    QueueSummaryFigures,
    ReplayFigures,
    ReplaySloFigures,
    ReplayWindowFigures,
    SkippedRowFigures,
)
from gpudecide.queue.chains import ChainFigures, ChainJobFigures, StageFigures
from gpudecide.queue.lifecycle import AmbiguityFigures, PhaseFigures, WaitReasonFigures
from gpudecide.queue.model import RecordMessages
from gpudecide.queue.preemption import (
    CheckpointCounts,
    PreemptionFigures,
    PriorityLevelFigures,
    StopFigures,
)
from gpudecide.queue.restarts import RestartFigures, RestartsFigures
from gpudecide.queue.slo import CausesFigures, SloFigures

__all__ = [
    "FIGURES",
    "AmbiguityFigures",
    "CausesFigures",
    "ChainFigures",
    "ChainJobFigures",
    "CheckpointCounts",
    "JobFigures",
    "PhaseFigures",
    "PoolFigures",
    "PreemptionFigures",
    "PriorityLevelFigures",
    "QueueFigures",
    "QueueOverview",
    "QueueSummaryFigures",
    "RecordMessages",
    "ReplayFigures",
    "ReplaySloFigures",
    "ReplayWindowFigures",
    "RestartFigures",
    "RestartsFigures",
    "SkippedRowFigures",
    "SloFigures",
    "StageFigures",
    "StopFigures",
    "WaitReasonFigures",
    "figures_of",
    "queue_figures",
    "replay_figures",
]

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
