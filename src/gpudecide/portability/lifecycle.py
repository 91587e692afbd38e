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

import json
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["FOLDER", "marks_spec", "read_lifecycle"]

FOLDER = "marks"
_MAX_LINES = 10_000  # a test's job writes a handful; more is not a mark file of ours


def marks_spec(control: Path, run_id: str, job: str) -> dict[str, str]:
    """The `marks` of a job spec: the folder its marks go to and the job id they carry."""
    return {"folder": str(control.resolve() / FOLDER), "job_id": f"{run_id or 'export-test'}-{job}"}


def _moment(text: object) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _seconds(start: object, end: object) -> float | None:
    a, b = _moment(start), _moment(end)
    if a is None or b is None:
        return None
    return round((b - a).total_seconds(), 3)


def _lines(folder: Path) -> list[dict[str, Any]]:
    """Every mark of the folder's JSONL files (lines that are not one are left out)."""
    out: list[dict[str, Any]] = []
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.jsonl")):
        if path.is_symlink() or not path.is_file():
            continue
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines()[:_MAX_LINES]:
            try:
                mark = json.loads(raw)
            except ValueError:
                continue
            if isinstance(mark, dict) and isinstance(mark.get("kind"), str):
                out.append(mark)
    return out


def read_lifecycle(folder: Path, run_id: str, jobs: list[str]) -> list[dict[str, Any]]:
    """Per job (in the order they ran) its marks and the spans they measure; a job that
    wrote no mark is listed with none (its spans unmeasured)."""
    marks = _lines(folder)
    out: list[dict[str, Any]] = []
    for job in jobs:
        job_id = f"{run_id or 'export-test'}-{job}"
        own = sorted(
            (m for m in marks if m.get("job_id") == job_id),
            key=lambda m: (str(m.get("at")), int(m.get("seq") or 0)),
        )

        def first(kind: str, own: list[dict[str, Any]] = own) -> dict[str, Any] | None:
            return next((m for m in own if m["kind"] == kind), None)

        prep, step, end = first("prep_start"), first("first_step"), first("end")
        checkpoints = [
            {"step": m.get("step"), "at": m.get("at"), "path": m.get("path")}
            for m in own
            if m["kind"] == "checkpoint"
        ]
        last = checkpoints[-1]["at"] if checkpoints else None
        out.append(
            {
                "job": job,
                "job_id": job_id,
                "slurm_job_id": next((m["slurm_job_id"] for m in own if "slurm_job_id" in m), None),
                "host": next((m["host"] for m in own if "host" in m), None),
                "prep_start": prep["at"] if prep else None,
                "first_step": step["at"] if step else None,
                "first_step_number": step.get("step") if step else None,
                "checkpoints": checkpoints,
                "end": end["at"] if end else None,
                "end_status": end.get("status") if end else None,
                "startup_seconds": _seconds(prep and prep["at"], step and step["at"]),
                "since_checkpoint_seconds": _seconds(last, end and end["at"]),
            }
        )
    return out
