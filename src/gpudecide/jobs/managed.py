"""Managed fine-tuning endpoints as job logs (SPEC Q1, C5): SageMaker and OpenAI-style jobs.

SageMaker `DescribeTrainingJob` (raw API JSON with epoch numbers, or `aws sagemaker
describe-training-job` output with ISO times):
- submit = eligible: CreationTime; the capacity wait is each `Starting` transition;
- start: the end of a `Starting` (instances assigned), prep start: `Downloading`;
- the first training step is not observable (the `Training` status only says the container
  runs): unmeasured;
- managed spot training restarts inside one job: every `Interrupted` transition ends an
  attempt (state preempted) and the next attempt waits in `Starting` again;
- GPUs: instance count times the GPUs of the instance type (table below).

OpenAI-style fine-tuning jobs (`fine_tuning.job`, with the job's events list saved next to
it as `<job id>.events.json`):
- submit: created_at; eligible: "Files validated, moving job to queued state";
- start: "Fine-tuning job started"; first step: the first `metrics` event; end: finished_at;
- GPUs are not exposed by the API: unknown.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from gpudecide.errors import InputError, excerpt
from gpudecide.jobs import bounds
from gpudecide.jobs.sacct import ParseResult
from gpudecide.jobs.schema import KINDS, attempts_table
from gpudecide.jsonio import get, parse_time, read_json, seconds_between
from gpudecide.message import Message, message, nmessage

__all__ = [
    "INSTANCE_GPUS",
    "OPENAI_STATES",
    "SAGEMAKER_FINAL",
    "is_openai_events",
    "is_sagemaker",
    "openai_jobs",
    "read_openai",
    "read_sagemaker",
]

# GPUs per SageMaker instance type (AWS instance documentation) and their class.
INSTANCE_GPUS: dict[str, tuple[int, str]] = {
    "ml.p3.2xlarge": (1, "v100"),
    "ml.p3.8xlarge": (4, "v100"),
    "ml.p3.16xlarge": (8, "v100"),
    "ml.p3dn.24xlarge": (8, "v100"),
    "ml.p4d.24xlarge": (8, "a100"),
    "ml.p4de.24xlarge": (8, "a100"),
    "ml.p5.48xlarge": (8, "h100"),
    "ml.p5e.48xlarge": (8, "h200"),
    "ml.p5en.48xlarge": (8, "h200"),
    "ml.g4dn.xlarge": (1, "t4"),
    "ml.g4dn.2xlarge": (1, "t4"),
    "ml.g4dn.4xlarge": (1, "t4"),
    "ml.g4dn.8xlarge": (1, "t4"),
    "ml.g4dn.12xlarge": (4, "t4"),
    "ml.g4dn.16xlarge": (1, "t4"),
    "ml.g5.xlarge": (1, "a10g"),
    "ml.g5.2xlarge": (1, "a10g"),
    "ml.g5.4xlarge": (1, "a10g"),
    "ml.g5.8xlarge": (1, "a10g"),
    "ml.g5.16xlarge": (1, "a10g"),
    "ml.g5.12xlarge": (4, "a10g"),
    "ml.g5.24xlarge": (4, "a10g"),
    "ml.g5.48xlarge": (8, "a10g"),
    "ml.g6.xlarge": (1, "l4"),
    "ml.g6.2xlarge": (1, "l4"),
    "ml.g6.4xlarge": (1, "l4"),
    "ml.g6.8xlarge": (1, "l4"),
    "ml.g6.16xlarge": (1, "l4"),
    "ml.g6.12xlarge": (4, "l4"),
    "ml.g6.24xlarge": (4, "l4"),
    "ml.g6.48xlarge": (8, "l4"),
    "ml.g6e.xlarge": (1, "l40s"),
    "ml.g6e.2xlarge": (1, "l40s"),
    "ml.g6e.12xlarge": (4, "l40s"),
    "ml.g6e.48xlarge": (8, "l40s"),
}

SAGEMAKER_FINAL = {
    "Completed": "completed",
    "Failed": "failed",
    "Stopped": "cancelled",
    "MaxRuntimeExceeded": "timeout",
    "MaxWaitTimeExceeded": "timeout",
}
OPENAI_STATES = {
    "succeeded": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
    "running": "running",
    "queued": "pending",
    "validating_files": "pending",
    "pending": "pending",
}


def is_sagemaker(doc: Any) -> bool:
    """A DescribeTrainingJob response (or a list of them)."""
    items = doc if isinstance(doc, list) else [doc]
    return bool(items) and all(isinstance(d, dict) and "TrainingJobName" in d for d in items)


def openai_jobs(doc: Any) -> list[dict[str, Any]] | None:
    """The fine_tuning.job objects of a document (single, list page, or array), else None."""
    if isinstance(doc, dict) and doc.get("object") == "fine_tuning.job":
        return [doc]
    items = doc.get("data") if isinstance(doc, dict) and doc.get("object") == "list" else doc
    if (
        isinstance(items, list)
        and items
        and all(isinstance(d, dict) and d.get("object") == "fine_tuning.job" for d in items)
    ):
        return items
    return None


def is_openai_events(doc: Any) -> bool:
    """A list page of fine_tuning.job.event objects."""
    data = doc.get("data") if isinstance(doc, dict) else None
    return isinstance(data, list) and all(
        isinstance(e, dict) and e.get("object") == "fine_tuning.job.event" for e in data
    )


def _sagemaker_gpus(
    groups: list[dict[str, Any]], path: Path, where: str
) -> tuple[int | None, str | None]:
    """GPUs over all instance groups and their type; None when an instance type is unknown."""
    gpus: int | None = 0
    gpu_type = None
    for g in groups:
        known = INSTANCE_GPUS.get(str(g.get("InstanceType")))
        if known is None or gpus is None:
            gpus = None
            continue
        count = g.get("InstanceCount") or 1
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InputError(
                "is not a whole number of instances", path=path, field=f"{where}.InstanceCount"
            )
        gpus += known[0] * count
        if gpus > bounds.MAX_GPU_COUNT:
            raise InputError(
                "gives more than {most} GPUs for one job",
                path=path,
                field=f"{where}.ResourceConfig.InstanceCount",
                most=bounds.MAX_GPU_COUNT,
            )
        gpu_type = known[1]
    return gpus, gpu_type


def _transitions(job: dict[str, Any], path: Path, where: str) -> list[tuple[Any, ...]]:
    """(status, start, end, message) of each secondary status transition."""
    return [
        (
            t.get("Status"),
            parse_time(
                t.get("StartTime"), path, f"{where}.SecondaryStatusTransitions[{i}].StartTime"
            ),
            parse_time(t.get("EndTime"), path, f"{where}.SecondaryStatusTransitions[{i}].EndTime"),
            t.get("StatusMessage"),
        )
        for i, t in enumerate(job.get("SecondaryStatusTransitions") or [])
    ]


def _new_attempt(since: datetime | None) -> dict[str, Any]:
    return {
        "eligible": since,
        "submit": since,
        "start": None,
        "prep_start": None,
        "end": None,
        "wait_reason": None,
    }


def _split_at_interruptions(
    steps: list[tuple[Any, ...]], created: datetime | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The attempts ended by a spot interruption, and the attempt still open after the last."""
    attempts: list[dict[str, Any]] = []
    cur = _new_attempt(created)
    for status, start, end, status_message in steps:
        if status == "Starting":
            # Instances are only known to be assigned once the next phase begins: a job
            # that fails in Starting never got any.
            cur["wait_reason"] = status_message or cur["wait_reason"]
        elif status == "Downloading":
            if cur["start"] is None:
                cur["start"] = start
            cur["prep_start"] = cur["prep_start"] or start
        elif status == "Training":
            if cur["start"] is None:
                cur["start"] = start
            cur["end"] = end
        elif status == "Interrupted":
            cur.update(state="preempted", detail="Interrupted (spot capacity reclaimed)", end=start)
            attempts.append(cur)
            cur = _new_attempt(end or start)
    return attempts, cur


def _finish_last_attempt(
    cur: dict[str, Any], job: dict[str, Any], steps: list[tuple[Any, ...]], path: Path, where: str
) -> None:
    final = job.get("SecondaryStatus") or job.get("TrainingJobStatus")
    # The last attempt ends with the job: TrainingEndTime, else (a failed job has none) the
    # start of the last transition.
    cur["end"] = parse_time(job.get("TrainingEndTime"), path, f"{where}.TrainingEndTime") or (
        steps[-1][1] if steps else cur["end"]
    )
    job_status = job.get("TrainingJobStatus")
    if job_status == "InProgress":
        cur["state"] = "running" if cur["start"] else "pending"
        cur["end"] = None
    else:
        cur["state"] = SAGEMAKER_FINAL.get(
            str(final), SAGEMAKER_FINAL.get(str(job_status), "failed")
        )
    cur["detail"] = f"{job_status}/{final}" + (
        f": {job['FailureReason']}" if job.get("FailureReason") else ""
    )
    if cur["state"] == "failed" and job.get("FailureReason") and cur["start"] is None:
        cur["wait_reason"] = cur["wait_reason"] or job["FailureReason"]


def _sagemaker_attempts(job: dict[str, Any], path: Path, where: str) -> list[dict[str, Any]]:
    name = job.get("TrainingJobName")
    created = parse_time(job.get("CreationTime"), path, f"{where}.CreationTime")
    config = job.get("ResourceConfig") or {}
    groups = config.get("InstanceGroups") or [
        {"InstanceType": config.get("InstanceType"), "InstanceCount": config.get("InstanceCount")}
    ]
    gpus, gpu_type = _sagemaker_gpus(groups, path, where)
    steps = _transitions(job, path, where)
    attempts, cur = _split_at_interruptions(steps, created)
    _finish_last_attempt(cur, job, steps, path, where)
    attempts.append(cur)
    limit = get(job, "StoppingCondition", "MaxRuntimeInSeconds")
    site = (job.get("TrainingJobArn") or "::::").split(":")[3] or None
    extras = json.dumps(
        {
            "billable_s": job.get("BillableTimeInSeconds"),
            "training_s": job.get("TrainingTimeInSeconds"),
            "spot": bool(job.get("EnableManagedSpotTraining")),
            "instance_types": [g.get("InstanceType") for g in groups],
        }
    )
    return [
        {
            "job_id": name,
            "attempt": n,
            "name": name,
            "gpu_count": gpus if a["start"] is not None else None,
            "req_gpus": gpus,
            "gpu_type": gpu_type,
            "state": a["state"],
            "state_detail": a.get("detail"),
            "wait_reason": a["wait_reason"],
            "submit": a["submit"],
            "eligible": a["eligible"],
            "start": a["start"],
            "prep_start": a["prep_start"],
            "end": a["end"],
            "elapsed_s": seconds_between(a["start"], a["end"]),
            "time_limit_s": limit,
            "site": site,
            "extras": extras,
        }
        for n, a in enumerate(attempts, start=1)
    ]


def read_sagemaker(path: Path, doc: Any = None) -> ParseResult:
    """One or more DescribeTrainingJob responses as canonical attempts (`doc`: the file
    already parsed, if it was)."""
    doc = read_json(path) if doc is None else doc
    if not is_sagemaker(doc):
        raise InputError(
            "not a SageMaker DescribeTrainingJob response", path=path, field="TrainingJobName"
        )
    rows: list[dict[str, Any]] = []
    jobs = doc if isinstance(doc, list) else [doc]
    unknown = set()
    for i, job in enumerate(jobs):
        where = f"[{i}]" if isinstance(doc, list) else "$"
        with bounds.shape(path, where):
            attempts = _sagemaker_attempts(job, path, where)
            config = job.get("ResourceConfig") or {}
            for g in config.get("InstanceGroups") or [config]:
                if str(g.get("InstanceType")) not in INSTANCE_GPUS:
                    unknown.add(excerpt(g.get("InstanceType"), 40).strip("'"))
        bounds.check_rows(attempts, path, where)
        rows += attempts
    notes: list[Message] = []
    if unknown:
        notes.append(
            nmessage(
                "jobs",
                "{file}: GPU count unknown for instance type {types}",
                "{file}: GPU count unknown for instance types {types}",
                n=len(unknown),
                file=path.name,
                types=", ".join(sorted(unknown)),
            )
        )
    notes.append(
        message(
            "jobs",
            "{file}: SageMaker does not expose the first training step: startup after the node "
            "is assigned is unmeasured",
            file=path.name,
        )
    )
    return ParseResult(
        table=attempts_table(rows, str(path)), data_lines=len(jobs), note_messages=notes
    )


def _openai_row(
    job: dict[str, Any], events: list[dict[str, Any]] | None, path: Path, where: str
) -> dict[str, Any]:
    def t(value: Any, field: str) -> datetime | None:
        return parse_time(value, path, f"{where}.{field}")

    eligible = start = first_step = None
    if events is not None:
        ordered = sorted(reversed(events), key=lambda e: e.get("created_at") or 0)
        for e in ordered:
            msg = str(e.get("message") or "")
            when = t(e.get("created_at"), "events.created_at")
            if eligible is None and msg.startswith("Files validated"):
                eligible = when
            elif start is None and msg.startswith("Fine-tuning job started"):
                start = when
            elif first_step is None and e.get("type") == "metrics":
                first_step = when
    status = str(job.get("status"))
    if status not in OPENAI_STATES:
        raise InputError(
            "status {excerpt} is not a fine-tuning job status",
            path=path,
            field=f"{where}.status",
            excerpt=excerpt(status),
        )
    meta = job.get("metadata") or {}
    kind = meta.get("gpudecide_kind")
    if kind is not None and kind not in KINDS:
        raise InputError(
            "kind {excerpt} is not one of {choices}",
            path=path,
            field=f"{where}.metadata.gpudecide_kind",
            excerpt=excerpt(kind),
            choices=", ".join(KINDS),
        )
    error = job.get("error") or {}
    end = t(job.get("finished_at"), "finished_at")
    return {
        "job_id": job.get("id"),
        "attempt": 1,
        "name": job.get("user_provided_suffix") or job.get("id"),
        "kind_label": kind,
        "chain_id": meta.get("gpudecide_chain"),
        "state": OPENAI_STATES[status],
        "state_detail": status + (f": {error.get('code')}" if error.get("code") else ""),
        "wait_reason": "queued" if start is None and status == "queued" else None,
        "submit": t(job.get("created_at"), "created_at"),
        "eligible": eligible,
        "start": start,
        "first_step": first_step,
        "end": end,
        "elapsed_s": seconds_between(start, end),
        "extras": json.dumps(
            {
                "model": job.get("model"),
                "trained_tokens": job.get("trained_tokens"),
                "events": events is not None,
            }
        ),
    }


def read_openai(
    path: Path, events_by_job: dict[str, list[dict[str, Any]]], doc: Any = None
) -> ParseResult:
    """Fine-tuning job objects (events from `<id>.events.json` beside them) as attempts
    (`doc`: the file already parsed, if it was)."""
    doc = read_json(path) if doc is None else doc
    jobs = openai_jobs(doc)
    if jobs is None:
        raise InputError(
            "not an OpenAI-style fine-tuning job (object: fine_tuning.job)",
            path=path,
            field="object",
        )
    rows = []
    missing = []
    for i, job in enumerate(jobs):
        job_id = job.get("id") if isinstance(job.get("id"), str) else ""
        if not job_id:
            raise InputError("job without an id", path=path, field=f"[{i}].id")
        events = events_by_job.get(job_id)
        # The id names a file beside the log: only a plain name may (never a path).
        plain = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,200}", job_id) is not None
        sibling = path.with_name(f"{job_id}.events.json") if plain else path
        if events is None and plain and sibling.exists():
            page = read_json(sibling)
            if not is_openai_events(page):
                raise InputError("not a fine-tuning events list", path=sibling, field="data")
            events = page["data"]
        if events is None:
            missing.append(job_id)
        with bounds.shape(path, f"[{i}]"):
            row = _openai_row(job, events, path, f"[{i}]")
        bounds.check_rows([row], path, f"[{i}]")
        rows.append(row)
    notes = [
        message(
            "jobs", "{file}: GPUs are not exposed by the API: GPU-hours unknown", file=path.name
        )
    ]
    if missing:
        notes.append(
            nmessage(
                "jobs",
                "{file}: no events for {n:num} job ({ids}): eligible, start and first step "
                "unmeasured",
                "{file}: no events for {n:num} jobs ({ids}): eligible, start and first step "
                "unmeasured",
                n=len(missing),
                file=path.name,
                ids=", ".join(missing[:5]),
            )
        )
    return ParseResult(
        table=attempts_table(rows, str(path)), data_lines=len(jobs), note_messages=notes
    )
