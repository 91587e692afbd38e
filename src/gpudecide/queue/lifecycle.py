"""Job lifecycle phases from the canonical attempts (SPEC Q1, Q2).

Phases of one job: submit -> eligible (holds, dependencies, begin time over) -> start (node
assigned) -> prep start -> first training step -> last checkpoint -> end. The queue wait is
measured from *eligible*, the true ready time, summed over every attempt of a requeued or
preempted job; a job cancelled while pending waited too (until its cancel time), and a job
still pending has waited until the end of the log (marked `still_waiting`). A timestamp the
source does not give is unmeasured, never guessed: the phase it bounds is null.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa

from gpudecide.jobs import sql

__all__ = [
    "MARKED_PHASES",
    "PHASES",
    "REASON_CATEGORIES",
    "ambiguity",
    "job_lifecycles",
    "phase_summary",
    "phases_by_kind",
    "reason_category",
    "unmeasured_by_kind",
    "wait_by_category",
    "wait_reasons",
]

# Wait-reason categories. A quota does not reserve a GPU (Q2): waits for quota/limits are
# reported apart from waits for capacity, and both apart from waits the team chose (holds,
# dependencies, begin times).
REASON_CATEGORIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "quota",
        re.compile(
            r"^(QOS|Assoc)\w*(Limit|Max|Grp)|QOSMax|AssocGrp|AssocMax|QOSGrp|exceeded quota"
            r"|ResourceQuota|PartitionTimeLimit|MaxGRESPerAccount",
            re.I,
        ),
    ),
    ("dependency", re.compile(r"^Dependency", re.I)),
    ("hold", re.compile(r"Held|JobHold", re.I)),
    ("begin_time", re.compile(r"^BeginTime$", re.I)),
    ("array_limit", re.compile(r"JobArrayTaskLimit", re.I)),
    (
        "constraints",
        re.compile(
            r"ReqNodeNotAvail|didn't match|node affinity|untolerated taint|topology|Insufficient "
            r"(memory|cpu|ephemeral)|Constraints|BadConstraints",
            re.I,
        ),
    ),
    (
        "capacity",
        re.compile(
            r"^(Resources|Priority|Nodes?Down|NodeNotAvail)$|Insufficient nvidia.com/gpu|"
            r"nodes are available|Launching requested ML instances|Preparing the instances|"
            r"capacity|^queued$",
            re.I,
        ),
    ),
)

PHASES = (
    ("not_eligible", "submit -> eligible (holds, dependencies, begin time)"),
    ("queue_wait", "eligible -> start, all attempts"),
    ("prep", "start -> prep start (node assigned to preparation)"),
    ("startup", "start -> first training step"),
    ("run", "start -> end of the last attempt"),
    ("since_checkpoint", "last checkpoint -> end"),
    ("end_to_end", "submit -> end"),
)


# The phases only the training code can bound (a scheduler prints none of their times):
# each phase and the column of `job_lifecycles` that holds it.
MARKED_PHASES: tuple[tuple[str, str], ...] = (
    ("prep", "prep_s"),
    ("startup", "startup_s"),
    ("since_checkpoint", "since_checkpoint_s"),
)


def reason_category(reason: str | None) -> str | None:
    """Category of a scheduler's wait reason (None when there is no reason)."""
    if reason is None or not reason.strip():
        return None
    for name, pattern in REASON_CATEGORIES:
        if pattern.search(reason):
            return name
    return "other"


def job_lifecycles(attempts: pa.Table, jobs: pa.Table, as_of: datetime) -> pa.Table:
    """One row per job (every job, never-started ones included) with its phase durations."""
    con = sql.connect(attempts=attempts, jobs=jobs)
    as_of_sql = f"TIMESTAMPTZ '{as_of.isoformat()}'"
    table = con.sql(
        f"""
        WITH a AS (
          SELECT *,
            CASE
              WHEN start IS NOT NULL THEN start
              WHEN state = 'pending' THEN {as_of_sql}
              ELSE "end"  -- cancelled (or failed) while still pending: it waited until then
            END AS wait_until
          FROM attempts
        ),
        w AS (
          SELECT *, epoch(wait_until) - epoch(eligible) AS wait_s FROM a
        ),
        per_job AS (
          SELECT job_id,
            CAST(count(*) AS INTEGER) AS attempts,
            arg_min(submit, attempt) AS submit,
            arg_min(eligible, attempt) AS eligible,
            min(start) AS first_start,
            arg_max(start, attempt) AS last_start,
            arg_max(prep_start, attempt) AS prep_start,
            arg_max(first_step, attempt) AS first_step,
            arg_max(last_checkpoint, attempt) AS last_checkpoint,
            arg_max("end", attempt) AS "end",
            arg_max(state, attempt) AS state,
            arg_max(state_detail, attempt) AS state_detail,
            -- the reason of the attempt that waited longest names the wait
            arg_max(wait_reason, coalesce(wait_s, -1)) AS wait_reason,
            CASE WHEN count(wait_s) = count(*) THEN sum(wait_s) END AS queue_wait_s,
            bool_or(state = 'pending' AND start IS NULL) AS still_waiting,
            -- a pending array range `123_[5-9%2]` is five jobs
            CAST(max(coalesce(pending_tasks, 1)) AS INTEGER) AS tasks,
            max(coalesce(gpu_count, req_gpus)) AS gpus,
            max(gpu_type) AS gpu_type,
            max(priority) AS priority,
            max(priority_class) AS priority_class,
            max(site) AS site,
            count(*) FILTER (WHERE state IN ('preempted', 'requeued')) AS preemptions,
            -- GPU time really used, over all attempts: what a replay has to fit in
            sum(elapsed_s) FILTER (WHERE start IS NOT NULL) AS work_s,
            max(time_limit_s) AS time_limit_s
          FROM w GROUP BY job_id
        )
        SELECT p.job_id, j.name, j.kind, j.chain_id, j."user", p.attempts, p.state,
          p.state_detail, p.wait_reason, p.gpus, p.gpu_type, p.priority, p.priority_class,
          p.site, p.submit, p.eligible, p.first_start AS start, p.prep_start, p.first_step,
          p.last_checkpoint, p."end", p.still_waiting, p.tasks, p.preemptions, p.work_s,
          p.time_limit_s,
          p.queue_wait_s,
          epoch(p.first_start) - epoch(p.submit) AS submit_to_start_s,
          epoch(p.first_step) - epoch(p.submit) AS submit_to_first_step_s,
          epoch(p.first_start) - epoch(p.eligible) AS eligible_to_start_s,
          epoch(p.first_step) - epoch(p.eligible) AS eligible_to_first_step_s,
          epoch(p.eligible) - epoch(p.submit) AS dependency_wait_s,
          epoch(p.prep_start) - epoch(p.last_start) AS prep_s,
          epoch(p.first_step) - epoch(p.last_start) AS startup_s,
          epoch(p."end") - epoch(p.last_start) AS run_s,
          epoch(p."end") - epoch(p.last_checkpoint) AS since_checkpoint_s,
          epoch(p."end") - epoch(p.submit) AS end_to_end_s
        FROM per_job p LEFT JOIN jobs j USING (job_id)
        """
    ).to_arrow_table()
    con.close()
    return table


def _quantiles(values: np.ndarray) -> dict[str, float | None]:
    if values.size == 0:
        return {"n": 0, "p50": None, "p90": None, "p99": None, "max": None}
    return {
        "n": int(values.size),
        "p50": round(float(np.percentile(values, 50)), 1),
        "p90": round(float(np.percentile(values, 90)), 1),
        "p99": round(float(np.percentile(values, 99)), 1),
        "max": round(float(values.max()), 1),
    }


def _column(table: pa.Table, name: str) -> np.ndarray:
    arr = table.column(name).to_numpy(zero_copy_only=False)
    return np.asarray(arr, dtype=float)


def phase_summary(lc: pa.Table) -> dict[str, Any]:
    """p50/p90/p99/max of each phase (seconds) over the jobs where it was measured."""
    columns = {
        "not_eligible": "dependency_wait_s",
        "queue_wait": "queue_wait_s",
        "prep": "prep_s",
        "startup": "startup_s",
        "run": "run_s",
        "since_checkpoint": "since_checkpoint_s",
        "end_to_end": "end_to_end_s",
    }
    out: dict[str, Any] = {}
    for phase, meaning in PHASES:
        values = _column(lc, columns[phase])
        measured = values[~np.isnan(values)]
        out[phase] = {
            "meaning": meaning,
            **_quantiles(measured),
            "unmeasured": int(np.isnan(values).sum()),
        }
    return out


def ambiguity(lc: pa.Table) -> dict[str, Any]:
    """Q1: jobs whose phases cannot be told apart, and why."""
    rows = lc.select(["state", "eligible", "start", "first_step", "end", "run_s"]).to_pylist()
    no_eligible = sum(1 for r in rows if r["eligible"] is None)
    no_first_step = sum(1 for r in rows if r["start"] is not None and r["first_step"] is None)
    # A failed job without a first-step time: was it a 10-minute crash during preparation or
    # a failure of training proper? The log cannot say.
    failed_unclear = sum(
        1
        for r in rows
        if r["state"] in ("failed", "node_fail", "timeout", "preempted")
        and r["start"] is not None
        and r["first_step"] is None
    )
    return {
        "jobs": len(rows),
        "without_eligible_time": no_eligible,
        "without_first_step_time": no_first_step,
        "failures_before_or_after_first_step_unknown": failed_unclear,
        "phases_indistinct": sum(
            1
            for r in rows
            if r["eligible"] is None or (r["start"] is not None and r["first_step"] is None)
        ),
    }


def wait_reasons(lc: pa.Table) -> list[dict[str, Any]]:
    """Wait reasons ranked by total queue wait, with their category (Q2)."""
    totals: dict[str, dict[str, Any]] = {}
    for r in lc.select(["wait_reason", "queue_wait_s"]).to_pylist():
        wait = r["queue_wait_s"]
        if wait is None or wait <= 0:
            continue
        reason = r["wait_reason"] or "(none given)"
        entry = totals.setdefault(
            reason,
            {
                "reason": reason,
                "category": reason_category(r["wait_reason"]) or "unknown",
                "jobs": 0,
                "total_wait_s": 0.0,
            },
        )
        entry["jobs"] += 1
        entry["total_wait_s"] += float(wait)
    ranked = sorted(totals.values(), key=lambda e: -e["total_wait_s"])
    for e in ranked:
        e["total_wait_s"] = round(e["total_wait_s"], 1)
    return ranked


def wait_by_category(reasons: list[dict[str, Any]]) -> dict[str, float]:
    """Total wait (s) per category: quota waits apart from capacity waits (Q2)."""
    out: dict[str, float] = {}
    for r in reasons:
        out[r["category"]] = round(out.get(r["category"], 0.0) + r["total_wait_s"], 1)
    return out


def phases_by_kind(lc: pa.Table) -> dict[str, dict[str, float | None]]:
    """Median of each phase per job kind (seconds): the stacked bars of the report."""
    cols = {
        "not_eligible": "dependency_wait_s",
        "queue_wait": "queue_wait_s",
        "startup": "startup_s",
        "run": "run_s",
    }
    kinds = lc.column("kind").to_pylist()
    out: dict[str, dict[str, float | None]] = {}
    for kind in sorted({k for k in kinds if k}):
        mask = np.array([k == kind for k in kinds], dtype=bool)
        row: dict[str, float | None] = {}
        for phase, col in cols.items():
            values = _column(lc, col)[mask]
            values = values[~np.isnan(values)]
            row[phase] = round(float(np.median(values)), 1) if values.size else None
        row["jobs"] = float(mask.sum())
        out[kind] = row
    return out


def unmeasured_by_kind(lc: pa.Table) -> dict[str, dict[str, int]]:
    """Per job kind, the started jobs and how many of them lack each phase that only the
    training code can bound (preparation, start-up, time since the last checkpoint): what
    is still unmeasured once the log and the marks are read (Q1)."""
    rows = lc.select(["kind", "start", *(col for _p, col in MARKED_PHASES)]).to_pylist()
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        if r["start"] is None:
            continue
        entry = out.setdefault(
            r["kind"] or "other", {"started": 0, **{p: 0 for p, _c in MARKED_PHASES}}
        )
        entry["started"] += 1
        for phase, col in MARKED_PHASES:
            if r[col] is None:
                entry[phase] += 1
    return {kind: out[kind] for kind in sorted(out)}
