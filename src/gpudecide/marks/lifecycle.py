"""A job's lifecycle as its own marks tell it (SPEC Q1, Q4, G1): the figures the export test
and the drills record for the jobs they ran.

    lifecycles(folder, prefix="run-7-")      [JobLifecycle(job="train", startup_seconds=...)]

Each job writes its marks through `gpudecide.marks` as a team's training script would:
preparation start, the first training step, each checkpoint once complete on disk, the end
and how it ended. Read back with the marks package's own reader, they give per job those
moments (UTC) and the two spans a scheduler cannot tell apart: startup (preparation start
to first step) and the work after the last checkpoint (to the end, or to the moment a drill
killed the job): what a loss at that point costs.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from pydantic import Field

from gpudecide.figure_model import FigureModel

__all__ = ["CheckpointMark", "JobLifecycle", "lifecycles"]


class CheckpointMark(FigureModel):
    """A checkpoint a job marked once it was complete on disk."""

    step: int | None = None
    at: str | None = None
    path: str | None = None


class JobLifecycle(FigureModel):
    """One job's lifecycle from the marks it wrote, UTC; None: not marked (a killed job has
    no end). `since_checkpoint_seconds` is the work after the last checkpoint."""

    job: str
    job_id: str
    slurm_job_id: str | None = None
    host: str | None = None
    prep_start: str | None = None
    first_step: str | None = None
    first_step_number: int | None = None
    checkpoints: list[CheckpointMark] = Field(default_factory=list)
    end: str | None = None
    end_status: str | None = None
    startup_seconds: float | None = None
    since_checkpoint_seconds: float | None = None


def _iso(at: datetime | None) -> str | None:
    # The writer's own form (`marks.writer`), so a figure reads as the line it came from.
    return None if at is None else at.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _seconds(a: datetime | None, b: datetime | None) -> float | None:
    return None if a is None or b is None else round((b - a).total_seconds(), 3)


def lifecycles(
    folder: Path, prefix: str, stopped_at: Mapping[str, datetime] | None = None
) -> list[JobLifecycle]:
    """The jobs whose marks are in `folder`, earliest first; a job is named by its job id
    without `prefix` (the run's own part). `stopped_at`: when a job was killed, by job name
    (its work since the last checkpoint runs to then)."""
    if not folder.is_dir():
        return []
    # Imported here: the reader knows every marks format (TensorBoard, MLflow, ...), and the
    # modules that declare these figures are imported by commands that never read marks.
    from gpudecide.marks.read import read_marks

    found = read_marks([folder])
    out: list[tuple[datetime | None, JobLifecycle]] = []
    for run in found.runs:
        job_id = run.identity.job_id
        if run.source != "marks" or not job_id:
            continue
        prep, step, end = run.first("prep_start"), run.first("first_step"), run.last("end")
        marked = sorted((m for m in run.marks if m.kind == "checkpoint"), key=lambda m: m.at)
        job = job_id.removeprefix(prefix)
        last = marked[-1].at if marked else None
        until = end.at if end is not None else (stopped_at or {}).get(job)
        lifecycle = JobLifecycle(
            job=job,
            job_id=job_id,
            slurm_job_id=run.identity.slurm_job_id,
            host=run.identity.host,
            prep_start=_iso(prep.at if prep else None),
            first_step=_iso(step.at if step else None),
            first_step_number=step.step if step else None,
            checkpoints=[CheckpointMark(step=m.step, at=_iso(m.at), path=m.path) for m in marked],
            end=_iso(end.at if end else None),
            end_status=end.status if end else None,
            startup_seconds=_seconds(prep.at if prep else None, step.at if step else None),
            since_checkpoint_seconds=_seconds(last, until),
        )
        out.append((run.anchor(), lifecycle))
    out.sort(key=lambda pair: (pair[0] is None, pair[0] or datetime.min, pair[1].job))
    return [job for _at, job in out]
