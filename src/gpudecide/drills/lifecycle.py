"""The lifecycle of a drill's own jobs, from the marks they write (SPEC Q1, Q4, G1).

Every job of a drill writes its marks through `gpudecide.marks` as a team's training script
would (`gpudecide.drills.job`): preparation start, the first training step, each checkpoint
once it is complete, the end and how it ended. `read` reads them back with the marks
package's own reader and gives, per job in the order it ran, those moments and the spans a
scheduler cannot tell apart: startup (preparation start to first step) and the work after
the last checkpoint (to the end, or to the kill a drill injected): what the failure cost.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pydantic import Field

from gpudecide.drills.figures import Figure
from gpudecide.drills.names import MARKS_FOLDER

__all__ = ["CheckpointMark", "JobLifecycle", "read"]


class CheckpointMark(Figure):
    """A checkpoint a job marked once it was complete on the node's disk."""

    step: int | None = None
    at: str | None = None
    path: str | None = None


class JobLifecycle(Figure):
    """One job's lifecycle from its marks (UTC); None: not marked (a killed job has no end)."""

    job: str
    job_id: str
    host: str | None = None
    slurm_job_id: str | None = None
    prep_start: str | None = None
    first_step: str | None = None
    first_step_number: int | None = None
    checkpoints: list[CheckpointMark] = Field(default_factory=list)
    end: str | None = None
    end_status: str | None = None
    startup_seconds: float | None = None
    since_checkpoint_seconds: float | None = None


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat().replace("+00:00", "Z")


def _seconds(a: datetime | None, b: datetime | None) -> float | None:
    return None if a is None or b is None else round((b - a).total_seconds(), 3)


def read(run_dir: Path, stopped_at: dict[str, datetime] | None = None) -> list[JobLifecycle]:
    """The jobs of one drill (its folder) with their marks, earliest first; `stopped_at`:
    when the drill killed a job (its work since the last checkpoint runs to then)."""
    folder = run_dir / MARKS_FOLDER
    if not folder.is_dir():
        return []
    # The marks package's own reader: the format is its, whatever it becomes.
    from gpudecide.marks.read import read_marks

    found = read_marks([folder])
    prefix = f"{run_dir.name}-"
    out: list[tuple[datetime | None, JobLifecycle]] = []
    for run in found.runs:
        job_id = run.identity.job_id
        if run.source != "marks" or not job_id:
            continue
        prep, step, end = run.first("prep_start"), run.first("first_step"), run.last("end")
        marked = sorted((m for m in run.marks if m.kind == "checkpoint"), key=lambda m: m.at)
        job = job_id[len(prefix) :] if job_id.startswith(prefix) else job_id
        last = marked[-1].at if marked else None
        until = end.at if end is not None else (stopped_at or {}).get(job)
        out.append(
            (
                run.anchor(),
                JobLifecycle(
                    job=job,
                    job_id=job_id,
                    host=run.identity.host,
                    slurm_job_id=run.identity.slurm_job_id,
                    prep_start=_iso(prep.at if prep else None),
                    first_step=_iso(step.at if step else None),
                    first_step_number=step.step if step else None,
                    checkpoints=[
                        CheckpointMark(step=m.step, at=_iso(m.at), path=m.path) for m in marked
                    ],
                    end=_iso(end.at if end else None),
                    end_status=end.status if end else None,
                    startup_seconds=_seconds(prep.at if prep else None, step.at if step else None),
                    since_checkpoint_seconds=_seconds(last, until),
                ),
            )
        )
    out.sort(key=lambda pair: (pair[0] is None, pair[0] or datetime.min, pair[1].job))
    return [job for _at, job in out]
