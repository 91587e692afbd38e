"""`gpudecide queue` and `gpudecide replay`: the figures and evidence records they write."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, cast

import numpy as np
import pyarrow as pa

from gpudecide import evidence as ev
from gpudecide.errors import InputError
from gpudecide.jobs.classify import ClassifyConfig, jobs_table
from gpudecide.jobs.figures import reconciliation, reconciliation_message, rounded
from gpudecide.jobs.load import JobLog, log_span
from gpudecide.jobs.profile import skipped_figures
from gpudecide.jsonio import utc_iso
from gpudecide.marks.join import JoinReport
from gpudecide.message import Message, english, message, nmessage, record_texts, render
from gpudecide.queue import chains as chain_mod
from gpudecide.queue import lifecycle, preemption, replay
from gpudecide.queue.figures import (
    Policy,
    PoolFigures,
    QueueFigures,
    QueueOverview,
    ReplayFigures,
    SloFigures,
)
from gpudecide.queue.model import QueueContour
from gpudecide.queue.restarts import restarts_from_zero
from gpudecide.queue.slo import SLO, SLOFile, evaluate, why_message
from gpudecide.queue.words import (
    PHASES,
    VERDICTS,
    WINDOWS,
    jobs_by_gpus,
    replay_window,
    word_message,
)
from gpudecide.redact import redact_all

__all__ = [
    "EVIDENCE_JOBS_MAX",
    "PEAK_WINDOW_DAYS",
    "QueueOptions",
    "ReplayInput",
    "analyse_queue",
    "overview_of",
    "queue_evidence",
    "queue_summary_line",
    "queue_summary_message",
    "replay_evidence",
    "replay_input",
    "replay_summary_line",
    "replay_summary_message",
    "run_replay",
    "source_notes_of",
    "unmeasured_notes_of",
]

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
    # The option whose platform the log comes from (None: the team's workload) and the
    # contour its logs exercised (`queue.logs.contour_of`), stated in the record.
    option: str | None = None
    contour: QueueContour | None = None
    # What a reader must know about how the logs were chosen (`queue.logs`).
    notes: list[Message] = field(default_factory=list)
    # How the lifecycle marks were joined to the log's jobs (`queue.marked`); None: no
    # marks were read.
    marks: JoinReport | None = None


_NOT_OVERVIEW = ("jobs", "messages")


def overview_of(figures: Mapping[str, Any]) -> QueueOverview:
    """The queue figures but the per-job list and the messages, typed."""
    return QueueOverview.model_validate(
        {k: v for k, v in figures.items() if k not in _NOT_OVERVIEW}
    )


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
    # What the reader must know about the sources: how they were chosen, then the logs' own.
    sources = [_masked(m) for m in [*opts.notes, *log.note_messages]]
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
        "source_notes": [english(m) for m in sources],
    }
    figures: dict[str, Any] = {
        "jobs": per_job,
        "summary": summary,
        "phases": lifecycle.phase_summary(lc),
        "phases_by_kind": lifecycle.phases_by_kind(lc),
        "unmeasured_by_kind": lifecycle.unmeasured_by_kind(lc),
        "wait_reasons": reasons[:50],
        "slo": slos,
        "preemption": preemption.preemption_summary(log.attempts),
        # G1, the Friday-night case: a lost run whose re-run took as long as a full run.
        "restarts_from_zero": restarts_from_zero(
            log.attempts, window_hours=opts.classify.restart_window_hours
        ),
        "chains": chain_mod.chains(lc, opts.chain_pattern),
        **skipped_figures(log),
    }
    if opts.option is not None:
        figures["option"] = opts.option
    if opts.contour is not None:
        figures["contour"] = opts.contour.model_dump(mode="json")
    if opts.marks is not None:
        figures["marks"] = opts.marks.model_dump(mode="json")
    # The edge where the log's own text (job names, wait reasons, chain labels, skipped rows)
    # and slo.yaml's descriptions enter the record: a credential in them is masked here, so
    # that neither the record, --json nor the lines printed hold it (issue 28).
    figures = redact_all(figures)
    overview = overview_of(figures)
    notes = _queue_notes(overview, len(per_job), sources)
    figures["messages"] = record_texts(queue_summary_message(overview), notes).messages
    return figures


def _masked(msg: Message) -> Message:
    """A message with every credential among its values masked (its msgid is ours)."""
    return cast(Message, {**msg, "args": redact_all(msg["args"])})


def _minutes(seconds: float | None) -> Message:
    if seconds is None:
        return message("queue", "n/a")
    return message("queue", "{n:.0f} min", n=seconds / 60)


def _slo_phrase(slo: SloFigures) -> Message:
    """`SLO urgent: inconclusive (3.1%, 95% CI 0.9%-10.4% vs 10% allowed; leans pass)`."""
    verdict = word_message(VERDICTS, slo.verdict)
    if slo.violation_share is None or slo.ci95 is None:
        return message("queue", "SLO {name}: {verdict}", name=slo.name, verdict=verdict)
    lo, hi = slo.ci95
    args = {
        "name": slo.name,
        "verdict": verdict,
        "share": slo.violation_share,
        "lo": lo,
        "hi": hi,
        "allowed": slo.allowed_violation_share,
    }
    if slo.verdict != "inconclusive":
        return message(
            "queue",
            "SLO {name}: {verdict} ({share:.1%}, 95% CI {lo:.1%}-{hi:.1%} vs {allowed:.0%} "
            "allowed)",
            **args,
        )
    lean = word_message(VERDICTS, str(slo.point_estimate))
    if slo.more_jobs_to_settle:
        return nmessage(
            "queue",
            "SLO {name}: {verdict} ({share:.1%}, 95% CI {lo:.1%}-{hi:.1%} vs {allowed:.0%} "
            "allowed; leans {lean}, ~{more} more jobs would settle it)",
            "SLO {name}: {verdict} ({share:.1%}, 95% CI {lo:.1%}-{hi:.1%} vs {allowed:.0%} "
            "allowed; leans {lean}, ~{more} more jobs would settle it)",
            count="more",
            lean=lean,
            more=slo.more_jobs_to_settle,
            **args,
        )
    return message(
        "queue",
        "SLO {name}: {verdict} ({share:.1%}, 95% CI {lo:.1%}-{hi:.1%} vs {allowed:.0%} "
        "allowed; leans {lean})",
        lean=lean,
        **args,
    )


def queue_summary_message(f: QueueOverview) -> Message:
    """The queue record's summary: jobs, queue wait p50/p90, phases that cannot be told
    apart, and each SLO's verdict (Q1-Q3)."""
    s = f.summary
    q = f.phases["queue_wait"]
    said = message(
        "queue",
        "{jobs}; queue wait p50 {p50}, p90 {p90} {measured}; {indistinct}; {slo}",
        jobs=nmessage("queue", "{n} jobs", "{n} jobs", n=s.jobs),
        p50=_minutes(q.p50),
        p90=_minutes(q.p90),
        measured=nmessage(
            "queue", "over {n} measured", "over {n} measured", n=s.queue_wait_measured
        ),
        indistinct=nmessage(
            "queue",
            "{n} with phases that cannot be told apart",
            "{n} with phases that cannot be told apart",
            n=s.ambiguity.phases_indistinct,
        ),
        slo=[_slo_phrase(x) for x in f.slo] or message("queue", "no SLO given"),
    )
    if f.option is None:
        return said
    return message("queue", "option {option}: {summary}", option=f.option, summary=said)


def queue_summary_line(figures: Mapping[str, Any]) -> str:
    """The queue figures' summary in one sentence, in the reader's language."""
    return render(queue_summary_message(overview_of(figures)))


def _queue_notes(f: QueueOverview, job_rows: int, sources: list[Message]) -> list[Message]:
    """What a reader of the queue figures must know: a cut job list, phases that cannot be
    told apart (Q1), the preemption findings (Q4), the reconciliation, skipped rows, why an
    SLO is inconclusive (Q3) and the notes of the log's sources."""
    notes: list[Message] = []
    if job_rows > EVIDENCE_JOBS_MAX:
        notes.append(
            nmessage(
                "queue",
                "per-job list cut to the {n} longest waits of {total} jobs",
                "per-job list cut to the {n} longest waits of {total} jobs",
                n=EVIDENCE_JOBS_MAX,
                total=job_rows,
            )
        )
    amb = f.summary.ambiguity
    if amb.without_first_step_time:
        notes.append(
            nmessage(
                "queue",
                "{n} started job(s) have no first-step time: preparation cannot be told from "
                "training (Q1)",
                "{n} started job(s) have no first-step time: preparation cannot be told from "
                "training (Q1)",
                n=amb.without_first_step_time,
            )
        )
    if amb.without_eligible_time:
        notes.append(
            nmessage(
                "queue",
                "{n} job(s) have no eligible time: their queue wait is unmeasured",
                "{n} job(s) have no eligible time: their queue wait is unmeasured",
                n=amb.without_eligible_time,
            )
        )
    if f.marks is not None:
        notes += [f.marks.summary_message(), *f.marks.note_messages()]
    notes += unmeasured_notes_of(f)
    notes += preemption.findings_of(f.preemption)
    notes.append(reconciliation_message(f.summary.reconciliation))
    if f.skipped_rows:
        notes.append(
            nmessage(
                "queue",
                "{n} malformed row(s) skipped (--skip-bad-rows)",
                "{n} malformed row(s) skipped (--skip-bad-rows)",
                n=f.skipped_rows,
            )
        )
    notes += [why_message(s) for s in f.slo if s.verdict == "inconclusive"]
    return notes + sources


def unmeasured_notes_of(f: QueueOverview) -> list[Message]:
    """What is still unmeasured, per job kind: of its started jobs, how many have no
    preparation start, no first training step, no checkpoint time (in the log nor in the
    marks); and, where no marks were read, how the training code can write them (Q1)."""
    parts: list[Message] = []
    for kind, k in (f.unmeasured_by_kind or {}).items():
        # in the order of the lifecycle: preparation, start-up, since the last checkpoint
        said = [
            message("queue", "{phase} {n}", phase=word_message(PHASES, phase), n=n)
            for phase, _column in lifecycle.MARKED_PHASES
            if (n := getattr(k, phase))
        ]
        if not said:
            continue
        phases = said[0]
        for more in said[1:]:
            phases = message("queue", "{head}, {tail}", head=phases, tail=more)
        parts.append(
            message(
                "queue",
                "{kind} (started: {started}): {phases}",
                kind=kind,
                started=k.started,
                phases=phases,
            )
        )
    if not parts:
        return []
    kinds = parts[0]
    for part in parts[1:]:
        kinds = message("queue", "{head}; {tail}", head=kinds, tail=part)
    if f.marks is None:
        return [
            message(
                "queue",
                "still unmeasured, by job kind (the log has none of these times; the training "
                "code can write them with gpudecide.marks, read with --marks DIR or the "
                "workspace's marks/ folder): {kinds}",
                kinds=kinds,
            )
        ]
    return [
        message(
            "queue",
            "still unmeasured, by job kind (no time in the log nor in the marks): {kinds}",
            kinds=kinds,
        )
    ]


def source_notes_of(f: QueueFigures) -> list[dict[str, Any]]:
    """The notes of the log's sources among the queue record's notes (they come last)."""
    notes = f.messages.notes if f.messages else []
    return notes[len(notes) - len(f.summary.source_notes) :]


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
    if len(figures["jobs"]) > EVIDENCE_JOBS_MAX:
        stored["jobs"] = sorted(figures["jobs"], key=lambda j: -(j["queue_wait_s"] or 0))[
            :EVIDENCE_JOBS_MAX
        ]
    msgs = figures["messages"]
    return ev.Evidence(
        kind="queue",
        title="Queue: lifecycle, SLOs, preemption, chains",
        spec_ids=["Q1", "Q2", "Q3", "Q4", "Q5"],
        verdict=verdict,
        summary=english(msgs["summary"]),
        figures=stored,
        notes=[english(n) for n in msgs["notes"]],
        inputs=inputs,
    )


@dataclass
class ReplayInput:
    """The trace plus what the SLO needs to know about each replayed job."""

    trace: replay.Trace
    submit_offset: np.ndarray  # ready - submit, seconds (added to the simulated wait)
    lc: pa.Table
    window: dict[str, Any]
    # start -> first training step of each job's last attempt, seconds (NaN: unmeasured)
    startup: np.ndarray | None = None


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
    startup = np.array(
        [np.nan if rows[keep[i]]["startup_s"] is None else rows[keep[i]]["startup_s"] for i in idx],
        dtype=float,
    )
    return ReplayInput(
        trace=trace,
        submit_offset=(ready - submit)[idx],
        lc=sub_lc,
        window=win,
        startup=startup,
    )


class _Pools:
    """Replay results per pool size; each size is simulated once."""

    def __init__(
        self,
        data: ReplayInput,
        policy: Policy,
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
        # An SLO that stops at the first training step adds each job's own start-up, where
        # it was measured (a pool's size does not change how long a job takes to start).
        self.startup_measured: int | None = None
        if slo and slo[1].measure.endswith("first_step"):
            startup = data.startup if data.startup is not None else np.full(len(tr), np.nan)
            known = ~np.isnan(startup)
            self.offset = self.offset + np.where(known, np.maximum(startup, 0.0), 0.0)
            selected = self.mask if self.mask is not None else np.ones(len(tr), dtype=bool)
            self.startup_measured = int((known & selected).sum())
        self.evaluated: dict[int, dict[str, Any]] = {}

    def stats(self, n: int) -> dict[str, Any]:
        if n not in self.evaluated:
            tr = self.trace
            out = replay.simulate(tr, n, self.policy, checkpoint_s=self.checkpoint_s)
            st = replay.pool_stats(tr, out, n, self.policy, span_s=self.span).as_dict()
            never = np.isnan(out.start)
            sizes, counts = np.unique(tr.gpus[never], return_counts=True)
            st["unplaceable"] = [
                {"gpus": int(g), "jobs": int(c)} for g, c in zip(sizes, counts, strict=True)
            ]
            if self.mask is not None and self.threshold is not None:
                mask = self.mask
                # a job the pool cannot hold never starts: a violation, not a missing value
                waits = np.where(never, np.inf, out.start - tr.ready + self.offset)
                st["slo_violation_share"] = (
                    round(float((waits[mask] > self.threshold).mean()), 4) if mask.any() else None
                )
                st["slo_jobs"] = int(mask.sum())
                st["slo_unplaceable"] = int((mask & never).sum())
            st["notes"] = out.messages
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


def _slo_notes(slo: tuple[str, SLO] | None, pools: _Pools) -> list[Message]:
    """How an SLO that stops its clock at the first training step is measured in a replay:
    the simulated start plus each job's measured start-up, up to the start where none was
    measured."""
    if not slo or slo[1].measure.endswith("_start"):
        return []
    measured = pools.startup_measured or 0
    if not measured:
        return [
            message(
                "queue",
                "SLO {name} stops its clock at the first training step; the replay knows only "
                "node assignment, so its threshold is applied up to the start",
                name=slo[0],
            )
        ]
    selected = int(pools.mask.sum()) if pools.mask is not None else len(pools.trace)
    return [
        nmessage(
            "queue",
            "SLO {name} stops its clock at the first training step: the replay adds each "
            "job's measured start-up (start -> first step) to its simulated start, for {n} of "
            "the {selected} job it selects; for the rest its threshold is applied up to the "
            "start",
            "SLO {name} stops its clock at the first training step: the replay adds each "
            "job's measured start-up (start -> first step) to its simulated start, for {n} of "
            "the {selected} jobs it selects; for the rest its threshold is applied up to the "
            "start",
            count="selected",
            name=slo[0],
            n=measured,
            selected=selected,
        )
    ]


def run_replay(
    data: ReplayInput,
    sizes: list[int] | Literal["auto"],
    policy: Policy,
    slo: tuple[str, SLO] | None,
    checkpoint_s: float | None = None,
    *,
    option: str | None = None,
    notes: Sequence[Message] = (),
    marks: JoinReport | None = None,
) -> dict[str, Any]:
    """Replay every pool size (or search the smallest meeting the SLO) and summarise; the
    record names the option its logs come from, when they come from one, and how the
    lifecycle marks were joined to its jobs, when marks were read."""
    tr = data.trace
    pools = _Pools(data, policy, slo, checkpoint_s)
    recommended = _recommended(pools, sizes, slo)
    evaluated = pools.evaluated
    # Each note once, in the order of its English text, whatever pool size said it.
    said = {english(m): m for st in evaluated.values() for m in st.pop("notes")}
    made_notes = [said[text] for text in sorted(said)] + _slo_notes(slo, pools)
    figures: dict[str, Any] = {
        "window": data.window,
        "policy": policy,
        "jobs": len(tr),
        "slo": None
        if slo is None
        else {
            "name": slo[0],
            # the clock the replay stopped: the start, unless a start-up was measured
            "measure": slo[1].measure
            if pools.startup_measured
            else slo[1].measure.replace("first_step", "start"),
            "threshold_s": pools.threshold,
            "allowed_violation_share": slo[1].allowed_violation_share,
            **(
                {}
                if pools.startup_measured is None
                else {"startup_measured": pools.startup_measured}
            ),
        },
        "pools": [evaluated[n] for n in sorted(evaluated)],
        "recommended_gpus": recommended,
        "zero_wait_peak_gpus": replay.zero_wait_peak(tr),
        "largest_job_gpus": int(tr.gpus.max()),
    }
    if option is not None:
        figures["option"] = option
    marks_notes: list[Message] = []
    if marks is not None:
        figures["marks"] = redact_all(marks.model_dump(mode="json"))
        marks_notes = [marks.summary_message(), *marks.note_messages()]
    typed = ReplayFigures.model_validate(figures)
    texts = record_texts(
        replay_summary_message(typed),
        [*made_notes, *_pool_notes(typed), *marks_notes, *notes],
    )
    figures["notes"] = texts.notes
    figures["messages"] = texts.messages
    return figures


def _unplaceable(p: PoolFigures) -> list[tuple[int, int]]:
    return [(u.gpus, u.jobs) for u in p.unplaceable or []]


def _pool_phrase(p: PoolFigures) -> Message:
    """One pool in the summary: a pool that cannot hold every job says so first, and its
    waits are said to be of the jobs it holds (it never reads better than it is)."""
    args = {"gpus": p.gpus, "wait": (p.wait_p95_s or 0) / 3600, "share": p.utilisation or 0}
    if p.held:
        return message(
            "queue", "{gpus} GPUs: p95 wait {wait:.1f} h, occupied utilisation {share:.0%}", **args
        )
    never = jobs_by_gpus(_unplaceable(p)) or nmessage(
        "queue", "{n} jobs", "{n} jobs", n=p.jobs_unplaceable
    )
    return nmessage(
        "queue",
        "{gpus} GPUs: cannot hold {never}; p95 wait of the {jobs} job it holds {wait:.1f} h, "
        "occupied utilisation {share:.0%}",
        "{gpus} GPUs: cannot hold {never}; p95 wait of the {jobs} jobs it holds {wait:.1f} h, "
        "occupied utilisation {share:.0%}",
        count="jobs",
        never=never,
        jobs=p.jobs,
        **args,
    )


def _pool_notes(f: ReplayFigures) -> list[Message]:
    """What each pool's utilisation is (its name, window and pool size), and how the pools
    that cannot hold every job are counted."""
    w = f.window
    notes = [
        message(
            "queue",
            "occupied utilisation of each pool, {window}: GPU-hours of the jobs it ran over "
            "its GPUs times the window; the jobs it cannot hold are not in it",
            window=replay_window(w.kind, w.start, w.end),
        )
    ]
    short = [p for p in f.pools if not p.held]
    if not short:
        return notes
    sizes = ", ".join(str(p.gpus) for p in short)
    if f.slo is not None:
        notes.append(
            nmessage(
                "queue",
                "{n} pool size cannot hold every job ({sizes} GPUs): its waits are of the jobs "
                "it holds, and its SLO share counts the jobs it cannot hold as violations",
                "{n} pool sizes cannot hold every job ({sizes} GPUs): their waits are of the "
                "jobs they hold, and their SLO share counts the jobs they cannot hold as "
                "violations",
                n=len(short),
                sizes=sizes,
            )
        )
    else:
        notes.append(
            nmessage(
                "queue",
                "{n} pool size cannot hold every job ({sizes} GPUs): its waits are of the jobs "
                "it holds",
                "{n} pool sizes cannot hold every job ({sizes} GPUs): their waits are of the "
                "jobs they hold",
                n=len(short),
                sizes=sizes,
            )
        )
    return notes


def _listed(items: list[Message]) -> Message | str:
    """Phrases one after the other, separated by commas."""
    if not items:
        return ""
    joined = items[0]
    for item in items[1:]:
        joined = message("queue", "{head}, {tail}", head=joined, tail=item)
    return joined


def replay_summary_message(f: ReplayFigures) -> Message:
    """The replay record's summary: the jobs and window replayed, the smallest pool meeting
    the SLO, and the first pools' p95 wait and utilisation (C8, D3)."""
    replayed = message(
        "queue",
        "{jobs} jobs replayed ({window} window, {policy})",
        jobs=f.jobs,
        window=word_message(WINDOWS, f.window.kind),
        policy=f.policy,
    )
    if f.option is not None:
        replayed = message("queue", "option {option}: {summary}", option=f.option, summary=replayed)
    pools = _listed([_pool_phrase(p) for p in f.pools[:4]])
    slo, rec = f.slo, f.recommended_gpus
    if not slo:
        return message("queue", "{replayed}; {pools}", replayed=replayed, pools=pools)
    verdict = (
        message("queue", "smallest pool meeting SLO {name}: {gpus} GPUs", name=slo.name, gpus=rec)
        if rec
        else message("queue", "no pool tried meets SLO {name}", name=slo.name)
    )
    return message(
        "queue", "{replayed}; {verdict}; {pools}", replayed=replayed, verdict=verdict, pools=pools
    )


def replay_summary_line(figures: Mapping[str, Any]) -> str:
    """The replay figures' summary in one sentence, in the reader's language."""
    return render(replay_summary_message(ReplayFigures.model_validate(figures)))


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
        summary=english(figures["messages"]["summary"]),
        figures=figures,
        notes=list(figures["notes"]),
        inputs=inputs,
    )
