"""The lifecycle of the export test's own jobs, from the marks they write (SPEC Q1, Q4, G1).

Each job of the test (train, resume) writes its marks through `gpudecide.marks` as a team's
training script would (`worker.Lifecycle`): preparation start, the first training step,
each checkpoint once complete, the end. The controller gives every job a marks folder
inside its control folder and its own job id (`<run id>-<job>`), and reads the lines back
when the jobs are over: the record then says, per job, when it began preparing, when it
first trained, when each checkpoint was on disk and when it ended, and the two spans a
scheduler cannot tell apart: startup (preparation start to first step) and the work at risk
at the end (last checkpoint to end).
"""

from __future__ import annotations

from pathlib import Path

from gpudecide.marks.lifecycle import JobLifecycle, lifecycles

__all__ = ["FOLDER", "marks_spec", "read_lifecycle"]

FOLDER = "marks"


def _job_id(run_id: str, job: str) -> str:
    return f"{run_id or 'export-test'}-{job}"


def marks_spec(control: Path, run_id: str, job: str) -> dict[str, str]:
    """The `marks` of a job spec: the folder its marks go to and the job id they carry."""
    return {"folder": str(control.resolve() / FOLDER), "job_id": _job_id(run_id, job)}


def read_lifecycle(folder: Path, run_id: str, jobs: list[str]) -> list[JobLifecycle]:
    """Per job (in the order they ran) its marks and the spans they measure; a job that
    wrote no mark is listed with none (its spans unmeasured)."""
    found = {j.job: j for j in lifecycles(folder, _job_id(run_id, ""))}
    return [found.get(job) or JobLifecycle(job=job, job_id=_job_id(run_id, job)) for job in jobs]
