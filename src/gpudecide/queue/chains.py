"""Chains: train -> evaluate -> merge -> quantize -> export, measured end to end (SPEC Q5).

A job belongs to a chain by an explicit chain id (CSV/JSONL `chain_id`, `chain=` in a Slurm
comment, a Kubernetes label) or, when the workspace gives one, by a naming rule: a regular
expression whose named group `chain` is taken from the job name. The chain's time runs from
its first submission to the end of the last completed job of its last stage; each stage's
share is split into waiting (not yet eligible + queued) and running, and the time when no job
of the chain existed at all is the hand-off between people.
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa

from gpudecide.jsonio import utc_iso

__all__ = [
    "STAGE_OF_KIND",
    "STAGE_ORDER",
    "chain_of",
    "chains",
]

STAGE_OF_KIND = {
    "smoke": "prepare",
    "train": "train",
    "restart": "train",
    "eval": "evaluate",
    "merge": "merge",
    "quantize": "quantize",
    "export": "export",
    "other": "other",
}
STAGE_ORDER = ("prepare", "train", "evaluate", "merge", "quantize", "export", "other")


def _union_seconds(intervals: list[tuple[float, float]]) -> float:
    total = 0.0
    cur_s = cur_e = None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None and cur_s is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None and cur_s is not None:
        total += cur_e - cur_s
    return total


def chain_of(name: str | None, chain_id: str | None, pattern: re.Pattern[str] | None) -> str | None:
    """The chain a job belongs to: explicit id first, then the naming rule."""
    if chain_id:
        return chain_id
    if pattern is not None and name:
        match = pattern.search(name)
        if match and match.groupdict().get("chain"):
            return match.group("chain")
    return None


def _group_by_chain(
    lc: pa.Table, pattern: re.Pattern[str] | None
) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in lc.to_pylist():
        key = chain_of(row["name"], row["chain_id"], pattern)
        if key is not None:
            groups.setdefault(key, []).append(row)
    return groups


def _stages(jobs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per stage: jobs, waiting and running seconds, and the end of its last completed job."""
    stages: dict[str, dict[str, Any]] = {}
    for j in jobs:
        stage = STAGE_OF_KIND.get(j["kind"] or "other", "other")
        st = stages.setdefault(
            stage,
            {
                "stage": stage,
                "jobs": 0,
                "waiting_s": 0.0,
                "running_s": 0.0,
                "unmeasured_jobs": 0,
                "completed": False,
                "last_end": None,
            },
        )
        st["jobs"] += 1
        wait = (j["dependency_wait_s"] or 0.0) + (j["queue_wait_s"] or 0.0)
        if j["queue_wait_s"] is None and j["start"] is not None:
            st["unmeasured_jobs"] += 1
        st["waiting_s"] += wait
        st["running_s"] += j["run_s"] or 0.0
        if j["state"] == "completed":
            st["completed"] = True
            if j["end"] is not None and (st["last_end"] is None or j["end"] > st["last_end"]):
                st["last_end"] = j["end"]
    return stages


def _covered_seconds(jobs: list[dict[str, Any]], span_end: Any) -> float:
    """Seconds during which at least one job of the chain existed (submitted, not yet ended)."""
    intervals = [
        (j["submit"].timestamp(), stop.timestamp())
        for j in jobs
        if j["submit"] is not None and (stop := j["end"] or span_end) is not None
    ]
    return _union_seconds(intervals)


def _stage_rows(stages: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {k: (round(v, 1) if isinstance(v, float) else v) for k, v in s.items() if k != "last_end"}
        for s in [stages[n] for n in STAGE_ORDER if n in stages]
    ]


def _timeline(jobs: list[dict[str, Any]], first: Any) -> list[dict[str, Any]]:
    return [
        {
            "job_id": j["job_id"],
            "kind": j["kind"],
            "submit": utc_iso(j["submit"]),
            "start": utc_iso(j["start"]),
            "end": utc_iso(j["end"]),
            "state": j["state"],
        }
        for j in sorted(jobs, key=lambda j: j["submit"] or first)
    ]


def _chain(key: str, jobs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One chain's summary; None when none of its jobs has a submission time."""
    submitted = [j["submit"] for j in jobs if j["submit"] is not None]
    if not submitted:
        return None
    first = min(submitted)
    stages = _stages(jobs)
    ordered = [stages[s] for s in STAGE_ORDER if s in stages and s != "other"]
    last = ordered[-1] if ordered else None
    finished_at = last["last_end"] if last and last["completed"] else None
    ends = [j["end"] for j in jobs if j["end"] is not None]
    span_end = finished_at or (max(ends) if ends else None)
    e2e = (finished_at - first).total_seconds() if finished_at else None
    covered = _covered_seconds(jobs, span_end)
    worst = max(ordered, key=lambda s: s["waiting_s"]) if ordered else None
    return {
        "chain": key,
        "jobs": len(jobs),
        "first_submit": utc_iso(first),
        "finished_at": utc_iso(finished_at),
        "finished": finished_at is not None,
        "last_stage": last["stage"] if last else None,
        "end_to_end_s": None if e2e is None else round(e2e, 1),
        "handoff_idle_s": None if e2e is None else round(max(e2e - covered, 0.0), 1),
        "stages": _stage_rows(stages),
        "longest_waiting_stage": worst["stage"] if worst and worst["waiting_s"] > 0 else None,
        "timeline": _timeline(jobs, first),
    }


def chains(lc: pa.Table, name_pattern: str | None = None) -> list[dict[str, Any]]:
    """Every chain with its end-to-end time, per-stage waiting/running and the worst stage."""
    pattern = re.compile(name_pattern) if name_pattern else None
    out = []
    for key, jobs in _group_by_chain(lc, pattern).items():
        chain = _chain(key, jobs)
        if chain is not None:
            out.append(chain)
    return sorted(out, key=lambda c: c["first_submit"] or "")
