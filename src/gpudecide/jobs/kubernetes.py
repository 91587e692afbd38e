"""Kubernetes: `kubectl get pods -o json` plus `kubectl get events -o json` (SPEC Q1, Q2, Q4).

Each pod is one attempt; pods of one Job (label `batch.kubernetes.io/job-name`, older
`job-name`, or the owning Job) are the attempts of one job, in creation order.

Where each lifecycle time comes from:
- submit = eligible: `metadata.creationTimestamp` (Kubernetes has no separate ready time);
- start (node assigned): the `Scheduled` event, else the `PodScheduled` condition;
- prep start: `status.startTime` (the kubelet took the pod; image pull and init follow);
- first step / last checkpoint: annotations `gpudecide.io/first-step-at` and
  `gpudecide.io/last-checkpoint-at` when the training code writes them, else unmeasured;
- end: the latest `finishedAt` of the terminated containers;
- wait reason: the last `FailedScheduling` message, else the `PodScheduled` condition's;
- preempted: the `DisruptionTarget` condition (PreemptionByScheduler, eviction, ...).
Events expire (one hour by default): pods without any event are counted and said so.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpudecide.errors import InputError, excerpt
from gpudecide.jobs import bounds
from gpudecide.jobs.sacct import ParseResult
from gpudecide.jobs.schema import KINDS, attempts_table
from gpudecide.jsonio import get, parse_time, read_json, seconds_between
from gpudecide.message import Message, message, nmessage

__all__ = [
    "ANNOTATION_CHAIN",
    "ANNOTATION_CHECKPOINT",
    "ANNOTATION_FIRST_STEP",
    "ANNOTATION_KIND",
    "EVICTION_REASONS",
    "GPU_RESOURCES",
    "PREEMPTION_REASONS",
    "index_events",
    "list_kind",
    "read_kubernetes",
]

ANNOTATION_KIND = "gpudecide.io/kind"
ANNOTATION_CHAIN = "gpudecide.io/chain"
ANNOTATION_FIRST_STEP = "gpudecide.io/first-step-at"
ANNOTATION_CHECKPOINT = "gpudecide.io/last-checkpoint-at"
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
PREEMPTION_REASONS = ("PreemptionByScheduler", "PreemptionByKubeScheduler")
EVICTION_REASONS = (
    "EvictionByEvictionAPI",
    "DeletionByTaintManager",
    "TerminationByKubelet",
    "DeletionByPodGC",
)


def list_kind(doc: Any) -> str | None:
    """`pods`, `events` or None for a kubectl/API list document."""
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        return None
    if doc.get("kind") == "PodList":
        return "pods"
    if doc.get("kind") == "EventList":
        return "events"
    if doc.get("kind") == "List":
        kinds = {i.get("kind") for i in doc["items"] if isinstance(i, dict)}
        if kinds == {"Pod"}:
            return "pods"
        if kinds <= {"Event"} and kinds:
            return "events"
    return None


def _event_time(ev: dict[str, Any], path: Path, where: str) -> Any:
    # Scheduler events carry eventTime (microseconds) and no first/lastTimestamp; kubelet and
    # controller events the reverse: read whichever the event has.
    for key in ("eventTime", "lastTimestamp", "firstTimestamp"):
        if ev.get(key):
            return parse_time(ev[key], path, f"{where}.{key}")
    return None


def _index_event(
    ev: dict[str, Any], path: Path, where: str, by_pod: dict[str, list[dict[str, Any]]]
) -> None:
    obj = ev.get("involvedObject") or ev.get("regarding") or {}
    if obj.get("kind") != "Pod":
        return
    first = parse_time(
        ev.get("eventTime") or ev.get("firstTimestamp"), path, f"{where}.firstTimestamp"
    )
    entry = {
        "reason": ev.get("reason"),
        "message": str(ev.get("message") or "")[: bounds.MAX_TEXT_CHARS],
        "time": _event_time(ev, path, where),
        "first": first,
    }
    if entry["time"] is None and first is None:
        return  # an event without any time cannot be placed on the pod's timeline
    for key in (obj.get("uid"), f"{obj.get('namespace')}/{obj.get('name')}"):
        if key:
            by_pod.setdefault(str(key), []).append(entry)


def index_events(path: Path, doc: Any = None) -> dict[str, list[dict[str, Any]]]:
    """Events of an events list by involved pod (uid, else namespace/name), oldest first
    (`doc`: the file already parsed, if it was)."""
    doc = read_json(path) if doc is None else doc
    if list_kind(doc) != "events":
        raise InputError(
            "not a list of Kubernetes events",
            path=path,
            field="items",
            hint="save it with `kubectl get events -o json`",
        )
    by_pod: dict[str, list[dict[str, Any]]] = {}
    for i, ev in enumerate(doc["items"]):
        with bounds.shape(path, f"items[{i}]"):
            _index_event(ev, path, f"items[{i}]", by_pod)
    for events in by_pod.values():
        events.sort(key=lambda e: e["time"] or e["first"])
    return by_pod


def _gpus(spec: dict[str, Any], path: Path, where: str) -> int:
    total = 0
    for c, container in enumerate(spec.get("containers") or []):
        resources = container.get("resources") or {}
        for section in ("limits", "requests"):
            values = resources.get(section) or {}
            found = [values[r] for r in GPU_RESOURCES if r in values]
            if found:
                for value in found:
                    text = str(value)
                    if not text.isascii() or not text.isdigit() or len(text) > 9:
                        raise InputError(
                            "GPU count {excerpt} is not a whole number of GPUs",
                            path=path,
                            field=f"{where}.spec.containers[{c}].resources.{section}",
                            excerpt=excerpt(text),
                        )
                    total += int(text)
                break
    if total > bounds.MAX_GPU_COUNT:
        raise InputError(
            "asks for {total} GPUs, more than {most} (one job cannot have more)",
            path=path,
            field=f"{where}.spec.containers",
            total=total,
            most=bounds.MAX_GPU_COUNT,
        )
    return total


def _condition(status: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for cond in status.get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def _job_name(meta: dict[str, Any], labels: dict[str, Any]) -> Any:
    owner = next(
        (o.get("name") for o in meta.get("ownerReferences") or [] if o.get("kind") == "Job"), None
    )
    return labels.get("batch.kubernetes.io/job-name") or labels.get("job-name") or owner


def _events_of(
    meta: dict[str, Any], name: str, events: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    # Events name their pod by uid when the export kept it, else by namespace/name.
    return events.get(meta.get("uid") or "", []) or events.get(
        f"{meta.get('namespace')}/{name}", []
    )


def _scheduling(
    status: dict[str, Any], pod_events: list[dict[str, Any]], path: Path, where: str
) -> tuple[datetime | None, Any]:
    """When the pod was scheduled, and the last reason it waited."""
    scheduled = next((e["time"] for e in pod_events if e["reason"] == "Scheduled"), None)
    cond = _condition(status, "PodScheduled")
    if scheduled is None and cond and cond.get("status") == "True":
        scheduled = parse_time(
            cond.get("lastTransitionTime"), path, f"{where}.status.conditions[PodScheduled]"
        )
    waits = [e["message"] for e in pod_events if e["reason"] == "FailedScheduling"]
    reason = (
        waits[-1]
        if waits
        else (
            (cond.get("message") or cond.get("reason"))
            if cond and cond.get("status") != "True"
            else None
        )
    )
    return scheduled, reason


def _termination(
    status: dict[str, Any], path: Path, where: str
) -> tuple[datetime | None, Any, Any]:
    """The last container end, and the exit code and reason of the last terminated container."""
    ends, exit_code, term_reason = [], None, None
    for c, cs in enumerate(status.get("containerStatuses") or []):
        term = get(cs, "state", "terminated")
        if term:
            ends.append(
                parse_time(
                    term.get("finishedAt"),
                    path,
                    f"{where}.status.containerStatuses[{c}].state.terminated",
                )
            )
            exit_code = term.get("exitCode", exit_code)
            term_reason = term.get("reason", term_reason)
    end = max((e for e in ends if e is not None), default=None)
    return end, exit_code, term_reason


def _pod_state(
    status: dict[str, Any],
    pod_events: list[dict[str, Any]],
    scheduled: datetime | None,
    term_reason: Any,
) -> tuple[str, str]:
    phase = status.get("phase")
    disruption = _condition(status, "DisruptionTarget")
    if (
        disruption
        and disruption.get("status") == "True"
        and (
            disruption.get("reason") in PREEMPTION_REASONS + EVICTION_REASONS
            or any(e["reason"] == "Preempted" for e in pod_events)
        )
    ):
        return "preempted", f"{phase}: {disruption.get('reason')}"
    if phase == "Succeeded":
        return "completed", term_reason or "Completed"
    if phase == "Failed":
        state = "timeout" if status.get("reason") == "DeadlineExceeded" else "failed"
        return state, f"Failed: {term_reason or status.get('reason') or 'Error'}"
    if phase == "Running" or (phase == "Pending" and scheduled is not None):
        return "running", phase
    if phase == "Pending":
        return "pending", "Pending"
    return "failed", str(phase)


def _kind_label(notes_: dict[str, Any], labels: dict[str, Any], path: Path, where: str) -> Any:
    kind = notes_.get(ANNOTATION_KIND) or labels.get(ANNOTATION_KIND)
    if kind is not None and kind not in KINDS:
        raise InputError(
            "kind {excerpt} is not one of {choices}",
            path=path,
            field=f"{where}.metadata.annotations.{ANNOTATION_KIND}",
            excerpt=excerpt(kind),
            choices=", ".join(KINDS),
        )
    return kind


def _restarts(status: dict[str, Any]) -> int:
    return sum(int(cs.get("restartCount") or 0) for cs in status.get("containerStatuses") or [])


def _pod_row(
    pod: dict[str, Any], events: dict[str, list[dict[str, Any]]], path: Path, where: str
) -> tuple[dict[str, Any], bool]:
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    name = meta.get("name")
    if not name:
        raise InputError("pod without metadata.name", path=path, field=f"{where}.metadata")
    labels = meta.get("labels") or {}
    notes_ = meta.get("annotations") or {}
    job = _job_name(meta, labels)
    pod_events = _events_of(meta, name, events)
    created = parse_time(meta.get("creationTimestamp"), path, f"{where}.metadata.creationTimestamp")
    scheduled, reason = _scheduling(status, pod_events, path, where)
    end, exit_code, term_reason = _termination(status, path, where)
    gpus = _gpus(spec, path, where)
    state, detail = _pod_state(status, pod_events, scheduled, term_reason)
    if end is None and state in ("failed", "preempted", "completed"):
        end = parse_time(meta.get("deletionTimestamp"), path, f"{where}.metadata") or end
    kind = _kind_label(notes_, labels, path, where)
    start = scheduled
    row = {
        "job_id": job or name,
        "name": job or name,
        "pod": name,
        "created": created,
        "chain_id": notes_.get(ANNOTATION_CHAIN) or labels.get(ANNOTATION_CHAIN),
        "kind_label": kind,
        "team": meta.get("namespace"),
        "gpu_count": gpus if start is not None else None,
        "req_gpus": gpus,
        "gpu_type": get(spec, "nodeSelector", "nvidia.com/gpu.product"),
        "priority": spec.get("priority"),
        "priority_class": spec.get("priorityClassName"),
        "state": state,
        "state_detail": detail,
        "exit_code": None if exit_code is None else str(exit_code),
        "wait_reason": reason,
        "submit": created,
        "eligible": created,
        "start": start,
        "prep_start": parse_time(status.get("startTime"), path, f"{where}.status.startTime"),
        "first_step": parse_time(
            notes_.get(ANNOTATION_FIRST_STEP),
            path,
            f"{where}.metadata.annotations.{ANNOTATION_FIRST_STEP}",
        ),
        "last_checkpoint": parse_time(
            notes_.get(ANNOTATION_CHECKPOINT),
            path,
            f"{where}.metadata.annotations.{ANNOTATION_CHECKPOINT}",
        ),
        "end": end,
        "elapsed_s": seconds_between(start, end),
        "time_limit_s": spec.get("activeDeadlineSeconds"),
        "extras": json.dumps(
            {"pod": name, "node": spec.get("nodeName"), "restarts": _restarts(status)}
        ),
    }
    return row, bool(pod_events)


def read_kubernetes(
    path: Path, events: dict[str, list[dict[str, Any]]], doc: Any = None
) -> ParseResult:
    """Pods of a `kubectl get pods -o json` list, with their events, as canonical attempts
    (`doc`: the file already parsed, if it was)."""
    doc = read_json(path) if doc is None else doc
    if list_kind(doc) != "pods":
        raise InputError(
            "not a list of Kubernetes pods",
            path=path,
            field="items",
            hint="save it with `kubectl get pods -o json`",
        )
    rows = []
    without_events = 0
    for i, pod in enumerate(doc["items"]):
        with bounds.shape(path, f"items[{i}]"):
            row, had_events = _pod_row(pod, events, path, f"items[{i}]")
        bounds.check_rows([row], path, f"items[{i}]")
        rows.append(row)
        without_events += not had_events
    far = datetime.max.replace(tzinfo=UTC)
    rows.sort(key=lambda r: (str(r["job_id"]), r["created"] or r["start"] or far, str(r["pod"])))
    attempt: dict[str, int] = {}
    for row in rows:
        attempt[row["job_id"]] = attempt.get(row["job_id"], 0) + 1
        row["attempt"] = attempt[row["job_id"]]
    notes: list[Message] = []
    if without_events:
        # English keeps "pod(s)" in both forms: the wording records have always had.
        notes.append(
            nmessage(
                "jobs",
                "{file}: {n:num} of {total:num} pod(s) have no events (expired? Kubernetes keeps "
                "events about an hour by default): their node-assignment time comes from the "
                "PodScheduled condition (seconds) and their wait reason is unknown",
                "{file}: {n:num} of {total:num} pod(s) have no events (expired? Kubernetes keeps "
                "events about an hour by default): their node-assignment time comes from the "
                "PodScheduled condition (seconds) and their wait reason is unknown",
                n=without_events,
                total=len(rows),
                file=path.name,
            )
        )
    if not events:
        notes.append(
            message(
                "jobs",
                "{file}: no events file given: wait reasons come only from pods still pending "
                "(pass `kubectl get events -o json` output too)",
                file=path.name,
            )
        )
    return ParseResult(
        table=attempts_table(rows, str(path)), data_lines=len(rows), note_messages=notes
    )
