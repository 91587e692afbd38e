"""`gpudecide queue` and `gpudecide replay`: the figures and evidence records they write."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from gpudecide import evidence as ev
from gpudecide.drills.restarts import restarts_from_zero
from gpudecide.errors import InputError
from gpudecide.jobs.classify import ClassifyConfig, jobs_table
from gpudecide.jobs.figures import reconciliation, reconciliation_line, rounded
from gpudecide.jobs.load import JobLog, log_span
from gpudecide.jsonio import utc_iso
from gpudecide.queue import chains as chain_mod
from gpudecide.queue import lifecycle, preemption, replay
from gpudecide.queue.slo import SLO, SLOFile, evaluate

# Evidence keeps every job up to this many; beyond, the longest waits (the CLI prints all).
EVIDENCE_JOBS_MAX = 5000
PEAK_WINDOW_DAYS = 28


def _as_of(attempts: pa.Table) -> datetime:
    return log_span(attempts)[1] or datetime.now(UTC)


@dataclass
class QueueOptions:
    """Inputs of the queue analysis besides the log."""

    slos: SLOFile | None = None
    chain_pattern: str | None = None
    classify: ClassifyConfig = field(default_factory=ClassifyConfig)
    as_of: datetime | None = None


def analyse_queue(log: JobLog, options: QueueOptions | None = None) -> dict[str, Any]:
    """Q1-Q5 from the team's logs: phases, reasons, SLOs, preemption, chains."""
    opts = options or QueueOptions()
    jobs = jobs_table(log.attempts, opts.classify)
    as_of = opts.as_of or _as_of(log.attempts)
    lc = lifecycle.job_lifecycles(log.attempts, jobs, as_of)
    reasons = lifecycle.wait_reasons(lc)
    slos = [
        evaluate(name, slo, lc, as_of)
        for name, slo in (opts.slos.slos.items() if opts.slos else [])
    ]
    per_job = [
        {
            "job_id": r["job_id"],
            "name": r["name"],
            "kind": r["kind"],
            "chain_id": r["chain_id"],
            "attempts": r["attempts"],
            "state": r["state"],
            "gpus": r["gpus"],
            "wait_reason": r["wait_reason"],
            "wait_category": lifecycle.reason_category(r["wait_reason"]),
            "submit": utc_iso(r["submit"]),
            "eligible": utc_iso(r["eligible"]),
            "start": utc_iso(r["start"]),
            "first_step": utc_iso(r["first_step"]),
            "end": utc_iso(r["end"]),
            "queue_wait_s": rounded(r["queue_wait_s"], 1),
            "submit_to_start_s": rounded(r["submit_to_start_s"], 1),
            "submit_to_first_step_s": rounded(r["submit_to_first_step_s"], 1),
            "eligible_to_start_s": rounded(r["eligible_to_start_s"], 1),
            "dependency_wait_s": rounded(r["dependency_wait_s"], 1),
            "prep_s": rounded(r["prep_s"], 1),
            "startup_s": rounded(r["startup_s"], 1),
            "run_s": rounded(r["run_s"], 1),
            "still_waiting": bool(r["still_waiting"]),
            "tasks": r["tasks"],
        }
        for r in lc.to_pylist()
    ]
    per_job.sort(key=lambda j: (j["submit"] or "", j["job_id"]))
    # Counted in tasks: a pending array range is each of its tasks (issue: ranges as one job).
    total = sum(j["tasks"] for j in per_job)
    measured = sum(j["tasks"] for j in per_job if j["queue_wait_s"] is not None)
    summary = {
        "as_of": utc_iso(as_of),
        "jobs": total,
        "started": sum(j["tasks"] for j in per_job if j["start"] is not None),
        "never_started": sum(
            j["tasks"] for j in per_job if j["start"] is None and not j["still_waiting"]
        ),
        "still_waiting": sum(j["tasks"] for j in per_job if j["still_waiting"]),
        "reconciliation": reconciliation(jobs),
        "queue_wait_measured": measured,
        "queue_wait_unmeasured": total - measured,
        "ambiguity": lifecycle.ambiguity(lc),
        "wait_by_category_s": lifecycle.wait_by_category(reasons),
        "slo_verdicts": {s["name"]: s["verdict"] for s in slos},
        "source_notes": list(log.notes),
    }
    return {
        "jobs": per_job,
        "summary": summary,
        "phases": lifecycle.phase_summary(lc),
        "phases_by_kind": lifecycle.phases_by_kind(lc),
        "wait_reasons": reasons[:50],
        "slo": slos,
        "preemption": preemption.preemption_summary(log.attempts),
        # G1, the Friday-night case: a lost run whose re-run took as long as a full run.
        "restarts_from_zero": restarts_from_zero(
            log.attempts, window_hours=opts.classify.restart_window_hours
        ),
        "chains": chain_mod.chains(lc, opts.chain_pattern),
        "skipped_rows": len(log.bad_rows),
        "skipped": [
            {"path": b.path, "line": b.line, "field": b.field, "reason": b.reason}
            for b in log.bad_rows[:50]
        ],
        "duplicate_rows_dropped": log.duplicate_rows,
    }


def _slo_phrase(slo: dict[str, Any]) -> str:
    """`SLO urgent: inconclusive (3.1 %, 95 % CI 0.9-10.4 % vs 10 % allowed; leans pass)`."""
    if slo["violation_share"] is None:
        return f"SLO {slo['name']}: {slo['verdict']}"
    lo, hi = slo["ci95"]
    text = (
        f"SLO {slo['name']}: {slo['verdict']} ({slo['violation_share']:.1%}, 95% CI "
        f"{lo:.1%}-{hi:.1%} vs {slo['allowed_violation_share']:.0%} allowed"
    )
    if slo["verdict"] == "inconclusive":
        more = slo.get("more_jobs_to_settle")
        text += f"; leans {slo['point_estimate']}" + (
            f", ~{more} more jobs would settle it" if more else ""
        )
    return text + ")"


def queue_summary_line(f: dict[str, Any]) -> str:
    """One sentence for people."""
    s = f["summary"]
    q = f["phases"]["queue_wait"]
    slo = "; ".join(_slo_phrase(x) for x in f["slo"]) or "no SLO given"
    p50 = "n/a" if q["p50"] is None else f"{q['p50'] / 60:.0f} min"
    p90 = "n/a" if q["p90"] is None else f"{q['p90'] / 60:.0f} min"
    return (
        f"{s['jobs']} jobs; queue wait p50 {p50}, p90 {p90} over {s['queue_wait_measured']} "
        f"measured; {s['ambiguity']['phases_indistinct']} with phases that cannot be told apart; "
        f"{slo}"
    )


def queue_evidence(figures: dict[str, Any], inputs: list[ev.InputRef]) -> ev.Evidence:
    """Evidence record of the queue analysis (SPEC Q1-Q5)."""
    verdicts = figures["summary"]["slo_verdicts"].values()
    verdict: ev.Verdict = (
        "fail"
        if "fail" in verdicts
        else "warn"
        if (
            "not measurable" in verdicts
            or "inconclusive" in verdicts
            or figures["preemption"]["findings"]
        )
        else "pass"
        if verdicts
        else "info"
    )
    stored = dict(figures)
    notes = []
    if len(figures["jobs"]) > EVIDENCE_JOBS_MAX:
        stored["jobs"] = sorted(figures["jobs"], key=lambda j: -(j["queue_wait_s"] or 0))[
            :EVIDENCE_JOBS_MAX
        ]
        notes.append(
            f"per-job list cut to the {EVIDENCE_JOBS_MAX} longest waits of "
            f"{len(figures['jobs'])} jobs"
        )
    amb = figures["summary"]["ambiguity"]
    if amb["without_first_step_time"]:
        notes.append(
            f"{amb['without_first_step_time']} started job(s) have no first-step time: "
            "preparation cannot be told from training (Q1)"
        )
    if amb["without_eligible_time"]:
        notes.append(
            f"{amb['without_eligible_time']} job(s) have no eligible time: their queue "
            "wait is unmeasured"
        )
    notes += figures["preemption"]["findings"]
    notes.append(reconciliation_line(figures["summary"]["reconciliation"]))
    if figures["skipped_rows"]:
        notes.append(f"{figures['skipped_rows']} malformed row(s) skipped (--skip-bad-rows)")
    notes += [s["why"] for s in figures["slo"] if s["verdict"] == "inconclusive"]
    notes += figures["summary"]["source_notes"]
    return ev.Evidence(
        kind="queue",
        title="Queue: lifecycle, SLOs, preemption, chains",
        spec_ids=["Q1", "Q2", "Q3", "Q4", "Q5"],
        verdict=verdict,
        summary=queue_summary_line(figures),
        figures=stored,
        notes=notes,
        inputs=inputs,
    )


@dataclass
class ReplayInput:
    """The trace plus what the SLO needs to know about each replayed job."""

    trace: replay.Trace
    submit_offset: np.ndarray  # ready - submit, seconds (added to the simulated wait)
    lc: pa.Table
    window: dict[str, Any]


def replay_input(
    log: JobLog, classify: ClassifyConfig, window: Literal["full", "peak"]
) -> ReplayInput:
    """Jobs that used GPUs, as arrivals (eligible, else submit) with their real GPU time."""
    jobs = jobs_table(log.attempts, classify)
    lc = lifecycle.job_lifecycles(log.attempts, jobs, _as_of(log.attempts))
    rows = lc.to_pylist()
    keep = [
        i
        for i, r in enumerate(rows)
        if r["start"] is not None
        and (r["gpus"] or 0) > 0
        and (r["work_s"] or 0) > 0
        and (r["eligible"] or r["submit"]) is not None
    ]
    if not keep:
        raise InputError("no job in the log ran on GPUs: nothing to replay")
    ready = np.array([(rows[i]["eligible"] or rows[i]["submit"]).timestamp() for i in keep])
    submit = np.array([(rows[i]["submit"] or rows[i]["eligible"]).timestamp() for i in keep])
    work = np.array([rows[i]["work_s"] for i in keep], dtype=float)
    gpus = np.array([rows[i]["gpus"] for i in keep], dtype=np.int64)
    limits = np.array(
        [np.nan if rows[i]["time_limit_s"] is None else rows[i]["time_limit_s"] for i in keep],
        dtype=float,
    )
    prio = np.array([rows[i]["priority"] or 0 for i in keep], dtype=float)
    sel = np.ones(len(keep), dtype=bool)
    win: dict[str, Any] = {"kind": window}
    if window == "peak":
        day = np.floor(ready / 86400.0)
        first, last = int(day.min()), int(day.max())
        demand = np.bincount(
            (day - first).astype(int), weights=gpus * work / 3600.0, minlength=last - first + 1
        )
        width = min(PEAK_WINDOW_DAYS, demand.size)
        sums = np.convolve(demand, np.ones(width), mode="valid")
        best = int(np.argmax(sums))
        lo, hi = (first + best) * 86400.0, (first + best + width) * 86400.0
        sel = (ready >= lo) & (ready < hi)
        win.update({"days": width, "gpu_hours": round(float(sums[best]), 1)})
    win["start"] = utc_iso(datetime.fromtimestamp(float(ready[sel].min()), UTC))
    win["end"] = utc_iso(datetime.fromtimestamp(float((ready[sel] + work[sel]).max()), UTC))
    idx = np.flatnonzero(sel)
    trace = replay.Trace(
        ready=ready[idx],
        runtime=work[idx],
        gpus=gpus[idx],
        limit=None if np.isnan(limits).all() else limits[idx],
        priority=prio[idx],
        # Jobs ready at the same moment run in job-id order, whatever the log's row order.
        tiebreak=np.array([str(rows[keep[i]]["job_id"]) for i in idx]),
    )
    sub_lc = lc.take(pa.array([keep[i] for i in idx]))
    return ReplayInput(trace=trace, submit_offset=(ready - submit)[idx], lc=sub_lc, window=win)


class _Pools:
    """Replay results per pool size; each size is simulated once."""

    def __init__(
        self,
        data: ReplayInput,
        policy: replay.Policy,
        slo: tuple[str, SLO] | None,
        checkpoint_s: float | None,
    ) -> None:
        tr = self.trace = data.trace
        self.policy = policy
        self.checkpoint_s = checkpoint_s
        self.span = float((tr.ready + tr.runtime).max() - tr.ready.min())
        self.mask = slo[1].selector.mask(data.lc) if slo else None
        self.threshold = slo[1].threshold_minutes * 60 if slo else None
        # The replay's jobs arrive when eligible; a submit-based SLO adds the time before that.
        self.offset = (
            data.submit_offset if slo and slo[1].measure.startswith("submit") else np.zeros(len(tr))
        )
        self.evaluated: dict[int, dict[str, Any]] = {}

    def stats(self, n: int) -> dict[str, Any]:
        if n not in self.evaluated:
            tr = self.trace
            out = replay.simulate(tr, n, self.policy, checkpoint_s=self.checkpoint_s)
            st = replay.pool_stats(tr, out, n, self.policy, span_s=self.span).as_dict()
            if self.mask is not None and self.threshold is not None:
                mask = self.mask
                # a job the pool cannot hold never starts: a violation, not a missing value
                waits = np.where(np.isnan(out.start), np.inf, out.start - tr.ready + self.offset)
                st["slo_violation_share"] = (
                    round(float((waits[mask] > self.threshold).mean()), 4) if mask.any() else None
                )
            st["notes"] = out.notes
            self.evaluated[n] = st
        return self.evaluated[n]


def _recommended(
    pools: _Pools, sizes: list[int] | Literal["auto"], slo: tuple[str, SLO] | None
) -> int | None:
    """Replay the sizes asked for (or search them) and pick the smallest meeting the SLO."""
    if sizes == "auto":
        if slo is None:
            raise InputError(
                "--gpus auto needs an SLO to meet",
                field="--slo",
                hint="pass --slo slo.yaml (and --slo-name normal|urgent)",
            )
        allowed = slo[1].allowed_violation_share

        def meets(n: int) -> bool:
            share = pools.stats(n)["slo_violation_share"]
            return share is not None and share <= allowed

        return replay.smallest_pool(pools.trace, meets)
    for n in sizes:
        pools.stats(n)
    if slo is None:
        return None
    evaluated = pools.evaluated
    ok = [
        n
        for n in sizes
        if evaluated[n]["jobs_unplaceable"] == 0
        and evaluated[n]["slo_violation_share"] is not None
        and evaluated[n]["slo_violation_share"] <= slo[1].allowed_violation_share
    ]
    return min(ok) if ok else None


def _slo_notes(slo: tuple[str, SLO] | None) -> list[str]:
    if not slo or slo[1].measure.endswith("_start"):
        return []
    return [
        f"SLO {slo[0]} stops its clock at the first training step; the replay knows only "
        "node assignment, so its threshold is applied up to the start"
    ]


def run_replay(
    data: ReplayInput,
    sizes: list[int] | Literal["auto"],
    policy: replay.Policy,
    slo: tuple[str, SLO] | None,
    checkpoint_s: float | None = None,
) -> dict[str, Any]:
    """Replay every pool size (or search the smallest meeting the SLO) and summarise."""
    tr = data.trace
    pools = _Pools(data, policy, slo, checkpoint_s)
    recommended = _recommended(pools, sizes, slo)
    evaluated = pools.evaluated
    notes = sorted({note for st in evaluated.values() for note in st.pop("notes")})
    return {
        "window": data.window,
        "policy": policy,
        "jobs": len(tr),
        "slo": None
        if slo is None
        else {
            "name": slo[0],
            "measure": slo[1].measure.replace("first_step", "start"),
            "threshold_s": pools.threshold,
            "allowed_violation_share": slo[1].allowed_violation_share,
        },
        "pools": [evaluated[n] for n in sorted(evaluated)],
        "recommended_gpus": recommended,
        "zero_wait_peak_gpus": replay.zero_wait_peak(tr),
        "largest_job_gpus": int(tr.gpus.max()),
        "notes": notes + _slo_notes(slo),
    }


def replay_summary_line(f: dict[str, Any]) -> str:
    """One sentence for people."""
    rec = f["recommended_gpus"]
    slo = f["slo"]
    best = ", ".join(
        f"{p['gpus']} GPUs: p95 wait {(p['wait_p95_s'] or 0) / 3600:.1f} h, "
        f"utilisation {(p['utilisation'] or 0):.0%}"
        for p in f["pools"][:4]
    )
    head = f"{f['jobs']} jobs replayed ({f['window']['kind']} window, {f['policy']}); "
    if slo:
        head += (
            f"smallest pool meeting SLO {slo['name']}: {rec} GPUs; "
            if rec
            else f"no pool tried meets SLO {slo['name']}; "
        )
    return head + best


def replay_evidence(figures: dict[str, Any], inputs: list[ev.InputRef]) -> ev.Evidence:
    """Evidence record of a replay (SPEC C8 peak, D3 scale, Q3)."""
    verdict: ev.Verdict = "info"
    if figures["slo"]:
        verdict = "pass" if figures["recommended_gpus"] else "fail"
    return ev.Evidence(
        kind="replay",
        title="Pool replay: how big a dedicated pool must be",
        spec_ids=["Q3", "C8", "D3"],
        verdict=verdict,
        summary=replay_summary_line(figures),
        figures=figures,
        notes=list(figures["notes"]),
        inputs=inputs,
    )
