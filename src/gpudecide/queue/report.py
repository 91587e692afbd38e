"""Report sections of the queue analysis (SPEC Q1-Q5) and the pool replay (C8, D3).

Every word through the "queue" catalogue (shared headings through "report"), the schema's
ids by the tables of `gpudecide.queue.words`, numbers by `gpudecide.fmt`, in the reader's
language; the records' summaries and notes are their stored messages.
"""

from __future__ import annotations

from gpudecide.fmt import fmt, hours, not_available, pct
from gpudecide.i18n import translator
from gpudecide.marks.join import FILLED_FIELDS
from gpudecide.message import render
from gpudecide.queue.figures import (
    PoolFigures,
    QueueFigures,
    ReplayFigures,
    SloFigures,
    queue_figures,
    replay_figures,
)
from gpudecide.queue.slo import selector_findings, selector_text
from gpudecide.queue.words import (
    CATEGORIES,
    CAUSES,
    LOST_BY,
    PHASES,
    RECONCILIATION,
    RESTART_VERDICTS,
    VERDICTS,
    cannot_hold,
    reason,
    replay_window,
    word,
    yes_no,
)
from gpudecide.report import charts
from gpudecide.report.i18n import t
from gpudecide.report.model import Chart, Section, Table

__all__ = ["queue_section", "replay_section"]

_ = translator("queue")
_n = _.n


def _verdict(slo: SloFigures) -> str:
    """The verdict; an inconclusive one with its point estimate and the jobs to settle it."""
    if slo.verdict != "inconclusive":
        return word(VERDICTS, slo.verdict)
    more = slo.more_jobs_to_settle
    lean = word(VERDICTS, str(slo.point_estimate))
    if more:
        return _n(
            "inconclusive (leans {verdict}; ~{n} more jobs would settle it)",
            "inconclusive (leans {verdict}; ~{n} more jobs would settle it)",
            more,
        ).format(verdict=lean, n=fmt(more))
    return _("inconclusive (leans {verdict})").format(verdict=lean)


def _causes(slo: SloFigures) -> str:
    causes = slo.violations_by_cause.model_dump()
    return ", ".join(f"{fmt(n)} {word(CAUSES, c)}" for c, n in causes.items() if n) or "-"


def _share_ci(slo: SloFigures) -> str:
    if slo.violation_share is None or slo.ci95 is None:
        return not_available()
    lo, hi = slo.ci95
    return f"{pct(slo.violation_share)} ({pct(lo)}-{pct(hi)})"


def queue_section(section: Section) -> None:
    """Queue phases, SLOs, wait reasons, preemption and chains (SPEC Q1-Q5)."""
    f = queue_figures(section.record)
    section.title = t("queue")
    _queue_charts(section, f)
    section.tables.append(
        Table(
            t("phases"),
            [_("phase"), "n", "p50", "p90", "p99", _("max"), _("unmeasured")],
            [
                [
                    word(PHASES, name),
                    fmt(q.n),
                    hours(q.p50),
                    hours(q.p90),
                    hours(q.p99),
                    hours(q.max),
                    fmt(q.unmeasured),
                ]
                for name, q in f.phases.items()
            ],
        )
    )
    rec = f.summary.reconciliation
    if rec:
        section.tables.append(
            Table(
                _("Jobs in the log (array tasks one by one)"),
                [t("figure"), t("value")],
                [[word(RECONCILIATION, k), fmt(v)] for k, v in rec.items()],
            )
        )
    _unmeasured_table(section, f)
    _marks_tables(section, f)
    _terms_table(section, f)
    _slo_table(section, f)
    _selectors_table(section, f)
    _waits_table(section, f)
    _preemption_table(section, f)
    _restarts_table(section, f)
    _chains_table(section, f)


def _queue_charts(section: Section, f: QueueFigures) -> None:
    """Wait distribution against the SLOs, phases by kind, chains."""
    series = {s.name: s.waits_s for s in f.slo}
    if not any(series.values()):
        waits = [j.eligible_to_start_s for j in f.jobs if j.eligible_to_start_s is not None]
        series = {_("all jobs"): waits}
    thresholds = {s.name: s.threshold_minutes * 60 for s in f.slo}
    title = t("chart_wait_cdf")
    section.charts.append(Chart(title, charts.wait_cdf(series, thresholds, title)))
    if f.phases_by_kind:
        title = t("chart_phases")
        section.charts.append(Chart(title, charts.phase_bars(f.phases_by_kind, title)))
    finished = [c.model_dump(mode="json") for c in f.chains if c.timeline][:8]
    if finished:
        title = t("chart_chains")
        section.charts.append(Chart(title, charts.chain_gantt(finished, title)))


def _unmeasured_table(section: Section, f: QueueFigures) -> None:
    """Per job kind, its started jobs and how many have each phase only the training code
    bounds still unmeasured (Q1)."""
    kinds = f.unmeasured_by_kind
    if not kinds:
        return
    caption = (
        _("Still unmeasured, by job kind: started jobs with no such time in the log")
        if f.marks is None
        else _(
            "Still unmeasured, by job kind: started jobs with no such time in the log or the marks"
        )
    )
    section.tables.append(
        Table(
            caption,
            [
                _("kind"),
                _("started"),
                word(PHASES, "prep"),
                word(PHASES, "startup"),
                word(PHASES, "since_checkpoint"),
            ],
            [
                [kind, fmt(k.started), fmt(k.prep), fmt(k.startup), fmt(k.since_checkpoint)]
                for kind, k in kinds.items()
            ],
            verbatim=frozenset({0}),
        )
    )


def _marks_tables(section: Section, f: QueueFigures) -> None:
    """How the lifecycle marks were joined to the jobs (Q1, Q4): files and runs read, runs
    joined or not, the fields filled from them; then the marks that could not be used, each
    named file:line."""
    m = f.marks
    if m is None:
        return
    filled = [fmt(m.fields[name].filled) for name in FILLED_FIELDS]
    section.tables.append(
        Table(
            _("Lifecycle marks (Q1)"),
            [t("figure"), t("value")],
            [
                [_("marks files / lines read"), f"{fmt(m.files)} / {fmt(m.lines)}"],
                [
                    _("runs joined to their jobs / ambiguous / unmatched"),
                    " / ".join(fmt(n) for n in (m.matched, m.ambiguous, m.unmatched)),
                ],
                [
                    _("attempts given a preparation start / first step / last checkpoint"),
                    " / ".join(filled),
                ],
                [_("marks or files not used"), fmt(m.problems_total)],
            ],
        )
    )
    if m.problems:
        shown = m.problems[:20]
        section.tables.append(
            Table(
                _n(
                    "Marks not used: the first {n}, each named file:line",
                    "Marks not used: the first {n}, each named file:line",
                    len(shown),
                ).format(n=fmt(len(shown))),
                [_("where"), _("why")],
                [[str(p.where), render(p.message)] for p in shown],
                verbatim=frozenset({0}),
            )
        )


def _slo_table(section: Section, f: QueueFigures) -> None:
    """Each SLO: its measure, threshold, violations with CI and verdict (Q3)."""
    if not f.slo:
        return
    section.tables.append(
        Table(
            "SLO (Q3)",
            [
                "SLO",
                _("measure"),
                _("threshold"),
                _("selected"),
                _("measured"),
                _("violations"),
                _("share (95% CI)"),
                _("allowed"),
                _("verdict"),
                _("violations by cause"),
            ],
            [
                [
                    s.name,
                    s.measure,
                    _("{n} min").format(n=fmt(s.threshold_minutes)),
                    fmt(s.selected),
                    fmt(s.measured),
                    fmt(s.violations),
                    _share_ci(s),
                    pct(s.allowed_violation_share),
                    _verdict(s),
                    _causes(s),
                ]
                for s in f.slo
            ],
        )
    )


def _terms_table(section: Section, f: QueueFigures) -> None:
    """The terms the SLO table uses, where it first uses them (issue 22's short glossary)."""
    if not f.slo:
        return
    section.tables.append(
        Table(
            _("Terms used below"),
            [_("term"), _("meaning")],
            [
                [
                    _("95% CI (Wilson interval)"),
                    _(
                        "the range that holds the true share of violations with 95 % "
                        "confidence, given how many jobs were measured; it stays sound for "
                        "small samples and for shares of 0 or 100 %. The verdict is pass or "
                        "fail only when the whole range lies on one side of the allowed share; "
                        "otherwise it is inconclusive"
                    ),
                ]
            ],
        )
    )


def _selectors_table(section: Section, f: QueueFigures) -> None:
    """Each SLO's selector as slo.yaml writes it, the jobs it selected by kind, and what a
    reader must know about them: every kind, any GPU class or site, urgent by kind alone."""
    rows = []
    kinds = list(f.phases_by_kind)
    for s in f.slo:
        if s.selector is None:
            continue
        by_kind = ", ".join(f"{k} {fmt(n)}" for k, n in (s.selected_by_kind or {}).items())
        said = [render(m) for m in selector_findings(s, kinds)]
        text = selector_text(s.selector)
        rows.append([s.name, text, fmt(s.selected), by_kind or "-", "; ".join(said) or "-"])
    if rows:
        section.tables.append(
            Table(
                _("What each SLO selects (Q3)"),
                ["SLO", _("selector as written"), _("selected"), _("by kind"), _("what it means")],
                rows,
                verbatim=frozenset({1}),
            )
        )


def _waits_table(section: Section, f: QueueFigures) -> None:
    """Wait reasons by total wait (Q2)."""
    section.tables.append(
        Table(
            t("wait_reasons"),
            [_("reason"), _("category"), _("jobs"), _("total wait")],
            [
                [
                    reason(r.reason),
                    word(CATEGORIES, r.category),
                    fmt(r.jobs),
                    hours(r.total_wait_s),
                ]
                for r in f.wait_reasons[:12]
            ],
        )
    )


def _preemption_table(section: Section, f: QueueFigures) -> None:
    """Stops, lost work and priority levels (Q4)."""
    p = f.preemption
    ckpt = p.checkpoint_before_stop
    section.tables.append(
        Table(
            _("Preemption (Q4)"),
            [t("figure"), t("value")],
            [
                [
                    _("stops (preempted / requeued)"),
                    f"{fmt(p.stops)} ({fmt(p.preempted)} / {fmt(p.requeued)})",
                ],
                [
                    _("GPU-minutes lost since a measured checkpoint"),
                    fmt(p.gpu_minutes_lost_since_checkpoint),
                ],
                [
                    _("checkpoint before stop: yes / no / unknown"),
                    " / ".join(fmt(n) for n in (ckpt.yes, ckpt.no, ckpt.unknown)),
                ],
                [_("share of jobs at the top priority level"), pct(p.top_priority_share)],
            ],
        )
    )


def _restarts_table(section: Section, f: QueueFigures) -> None:
    """Re-runs after a lost node, preemption or timeout: resumed or restarted from zero (G1)."""
    rows = [
        [
            e.job_id,
            str(e.name),
            word(LOST_BY, e.state),
            word(RESTART_VERDICTS, e.verdict),
            fmt(e.gpu_hours_lost),
            render(yes_no(e.checkpoint_known)),
        ]
        for e in f.restarts_from_zero.restarts
    ]
    if rows:
        section.tables.append(
            Table(
                _("Restarts after a lost run (G1)"),
                [
                    _("job"),
                    _("name"),
                    _("lost by"),
                    _("verdict"),
                    _("GPU-hours lost"),
                    _("checkpoint time known"),
                ],
                rows,
            )
        )


def _chains_table(section: Section, f: QueueFigures) -> None:
    """Chains of jobs from training to export (Q5)."""
    if not f.chains:
        return
    section.tables.append(
        Table(
            t("chains"),
            [
                _("chain"),
                _("jobs"),
                _("end to end"),
                _("last stage"),
                _("longest wait in"),
                _("hand-off idle"),
            ],
            [
                [
                    c.chain,
                    fmt(c.jobs),
                    hours(c.end_to_end_s),
                    str(c.last_stage),
                    str(c.longest_waiting_stage),
                    hours(c.handoff_idle_s),
                ]
                for c in f.chains
            ],
        )
    )


def _counts(p: PoolFigures) -> list[tuple[int, int]] | None:
    return None if p.unplaceable is None else [(u.gpus, u.jobs) for u in p.unplaceable]


def _pools_caption(f: ReplayFigures) -> str:
    """What the pool table's figures are: waits of the jobs a pool holds, the SLO share with
    the jobs it cannot hold as violations, the occupied utilisation over the window."""
    window = render(replay_window(f.window.kind, f.window.start, f.window.end))
    if f.slo is None:
        return _(
            "Pool sizes, {window}: waits are of the jobs each pool holds; occupied utilisation "
            "is the GPU-hours of the jobs a pool ran over its GPUs times the window"
        ).format(window=window)
    return _(
        "Pool sizes, {window}: waits are of the jobs each pool holds; the share of SLO {slo} "
        "violations counts the jobs a pool cannot hold as violations; occupied utilisation "
        "is the GPU-hours of the jobs a pool ran over its GPUs times the window"
    ).format(window=window, slo=f.slo.name)


def replay_section(section: Section) -> None:
    """Pool sizes replayed against the log (SPEC C8, D3)."""
    f = replay_figures(section.record)
    section.title = t("replay")
    if len(f.pools) > 1:
        title = t("chart_pool_curve")
        threshold = None if f.slo is None or f.slo.threshold_s is None else f.slo.threshold_s / 3600
        pools = [p.model_dump(mode="json") for p in f.pools]
        svg = charts.pool_curve(pools, threshold, title)
        section.charts.append(Chart(title, svg))
    section.tables.append(
        Table(
            _pools_caption(f),
            [
                _("GPUs"),
                _("jobs it holds"),
                "p50",
                "p95",
                "p99",
                _("max"),
                _("jobs it cannot hold"),
                _("SLO violations"),
                _("occupied utilisation"),
                _("longest queue"),
            ],
            [
                [
                    fmt(p.gpus),
                    fmt(p.jobs),
                    hours(p.wait_p50_s),
                    hours(p.wait_p95_s),
                    hours(p.wait_p99_s),
                    hours(p.wait_max_s),
                    cannot_hold(p.jobs_unplaceable, _counts(p)),
                    pct(p.slo_violation_share),
                    pct(p.utilisation),
                    fmt(p.longest_queue),
                ]
                for p in f.pools
            ],
        )
    )
