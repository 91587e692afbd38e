"""The figures of a `drill` record as a typed model (SPEC G1, G4), for readers in any package.

    figures_of(record) -> DrillFigures

`runner.to_evidence` and `drill_run.run_drills` write them: the drill's answer to the three
G4 questions (the `drill --json` object), where it ran (option, executor, storage, and the
contour it exercised: executor, Slurm cluster, host, the storage its checkpoints went to), the
record's messages, the whole game day so far (`game_day`) and the restarts found in the
team's own job logs (`log_restarts`, the queue's figures). Each drill adds details of its
own (`disk`, `rejected`, `attempts`, ...), present only in its records. This module imports
no torch: the report and the decision read drill records without training anything.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from gpudecide import evidence as ev
from gpudecide.drills.contour import Contour
from gpudecide.drills.figures import Figure, RecordMessages
from gpudecide.marks.lifecycle import JobLifecycle
from gpudecide.queue.restarts import RestartsFigures

__all__ = [
    "DiskFacts",
    "DrillFigures",
    "DrillVerdict",
    "GameDayRow",
    "StaleMount",
    "StepReason",
    "figures_of",
]

DrillVerdict = Literal["pass", "fail"]


class StepReason(Figure):
    """A checkpoint and why it failed its check (`hash_mismatch`, `missing_file`, ...)."""

    step: int
    reason: str


class DiskFacts(Figure):
    """What the disk-full drill found on the full disk (`disk`)."""

    naive_copy_error: str | None = None
    published: list[int] = Field(default_factory=list)
    verified: list[int] = Field(default_factory=list)
    looks_whole_but_broken: list[StepReason] = Field(default_factory=list)
    leftovers: list[str] = Field(default_factory=list)
    free_bytes: int | None = None


class StaleMount(Figure):
    """A small filesystem an earlier, killed disk-full drill had left mounted."""

    path: str
    removed: bool
    problem: str | None = None


class GameDayRow(Figure):
    """One drill of the game day, as every record of the run carries it (`game_day`)."""

    drill: str
    verdict: DrillVerdict
    noticed: bool
    data_kept: bool
    explained: bool
    resumed_from_step: int | None = None
    lost_steps: int | None = None
    lost_seconds: float | None = None
    status: str = ""
    # The status as a message; records written before messages hold the English only.
    status_message: dict[str, Any] | None = None
    restarted_from_zero: bool | None = None


class DrillFigures(Figure):
    """A `drill` record's figures."""

    drill: str
    verdict: DrillVerdict
    noticed: bool
    data_kept: bool
    explained: bool
    resumed_from_step: int | None = None
    lost_steps: int | None = None
    lost_seconds: float | None = None
    status: str = ""
    # A record that stands for its drill alone (no game day) may carry the status as a
    # message beside the English, as a game-day row does; the drills write it in the rows.
    status_message: dict[str, Any] | None = None
    journal: str = ""
    option: str | None = None
    executor: Literal["local", "slurm"] = "local"
    storage: str = ""
    # What the drill exercised (the decision grades it against the option's contour);
    # records written before it was stated hold none.
    contour: Contour | None = None
    messages: RecordMessages | None = None
    game_day: list[GameDayRow] = Field(default_factory=list)
    # The drills the run set out to do, in order (the record whose game day holds them all
    # closes the game day); records written before it was kept hold none.
    game_day_drills: list[str] = Field(default_factory=list)
    # The drill's own jobs, from the lifecycle marks they wrote (gpudecide.marks).
    lifecycle: list[JobLifecycle] = Field(default_factory=list)
    log_restarts: RestartsFigures | None = None
    # checkpoint-corrupt
    rejected: list[StepReason] = Field(default_factory=list)
    corrupted_steps: list[int] = Field(default_factory=list)
    # disk-full
    disk: DiskFacts | None = None
    stale_mounts: list[StaleMount] = Field(default_factory=list)
    # gpu-delay
    queue_wait_s: float | None = None
    wait_reason: str | None = None
    samples_while_waiting: int | None = None
    # node-loss
    restarted_from_zero: bool | None = None
    would_restart_from_zero_on_local_disk: bool | None = None
    local_checkpoints_lost: list[str] = Field(default_factory=list)
    external_storage: str | None = None
    # storage-revoked
    retried_with_backoff: bool | None = None
    attempts: int | None = None
    storage_kind: str | None = None

    def own_row(self) -> GameDayRow:
        """This record's own drill, as a row of its game day (what the record stands for)."""
        own = self.model_dump(include=set(GameDayRow.model_fields) & self.model_fields_set)
        if self.status_message is None:
            # The drills write the status message in the game day's rows, not beside it.
            mine = next((r for r in reversed(self.game_day) if r.drill == self.drill), None)
            if mine is not None and mine.status_message is not None:
                own["status_message"] = mine.status_message
        return GameDayRow.model_validate(own)

    def rows(self) -> list[GameDayRow]:
        """The game day in the record; a record of a single drill without one: its own row."""
        if self.game_day:
            return self.game_day
        own = self.model_dump(include=set(GameDayRow.model_fields) & self.model_fields_set)
        return [GameDayRow.model_validate(own)]


def figures_of(record: ev.Evidence) -> DrillFigures:
    """The record's figures as `DrillFigures`.

    A record of another kind is a LookupError; figures of another shape (an edited record)
    are pydantic's ValidationError (a ValueError), naming the field.
    """
    if record.kind != "drill":
        raise LookupError(f"{record.kind!r} is not a drill record")
    return DrillFigures.model_validate(record.figures)
