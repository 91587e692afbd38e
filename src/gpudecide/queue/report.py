"""Report sections of the queue analysis (SPEC Q1-Q5) and the pool replay (C8, D3).

Every word through the "queue" catalogue (shared headings through "report"); the analyses'
own English (summaries, notes, SLO reasons) is translated at render by the catalogue's
patterns. English output is the historic one, unchanged.
"""

from __future__ import annotations

from typing import Any

from gpudecide import evidence as ev
from gpudecide.i18n import translator
from gpudecide.report import charts
from gpudecide.report.fmt import fmt, hours, not_available, pct, pct0
from gpudecide.report.i18n import N_, P_, Language, localize, register_summary, t, verdict_label
from gpudecide.report.model import Chart, Section, Table

_ = translator("queue")

# Lifecycle phases and wait-reason categories as a person reads them.
PHASES = {
    "not_eligible": N_("not eligible"),
    "queue_wait": N_("queue wait"),
    "prep": N_("preparation"),
    "startup": N_("start-up"),
    "run": N_("run"),
    "since_checkpoint": N_("since checkpoint"),
    "end_to_end": N_("end to end"),
}
CATEGORIES = {
    "capacity": N_("capacity"),
    "array_limit": N_("array limit"),
    "quota": N_("quota"),
    "unknown": N_("unknown"),
    "begin_time": N_("begin time"),
    "dependency": N_("dependency"),
    "priority": N_("priority"),
    "held": N_("held"),
    "other": N_("other"),
}
RECONCILIATION = {
    "total": N_("total"),
    "gpu_jobs": N_("gpu jobs"),
    "cpu_only": N_("cpu only"),
    "no_gpu_information": N_("no gpu information"),
    "never_started": N_("never started"),
    "pending": N_("pending"),
}
WINDOWS = {"peak": N_("peak"), "full": N_("full")}
VERDICTS = {
    "inconclusive": N_("inconclusive"),
    "not measurable": N_("not measurable"),
}

# English the queue and replay analyses write into their records (summaries, notes),
# translated by pattern at render; listed so that the catalogues must hold them.
GENERATED = (
    P_(
        "{k} of {n} jobs waited longer than {minutes} min ({share}, 95 % interval {lo}-{hi}) "
        "against {allowed} allowed"
    ),
    P_(
        "{k} of {n} jobs waited longer than {minutes} min ({share}, 95 % interval {lo}-{hi}) "
        "against {allowed} allowed: the interval holds the allowed share, so the sample cannot "
        "tell"
    ),
    P_("the point estimate leans to {point}, about {more} more jobs at this share would settle it"),
    P_("the point estimate leans to {point}"),
    P_("no sample size settles it at this share"),
    P_(
        "{own} of the violations waited on the team's own limits (array task limits, quotas), "
        "{capacity} on capacity"
    ),
    P_("pass"),
    P_("fail"),
    P_("{n} started job(s) have no first-step time: preparation cannot be told from training (Q1)"),
    P_("{n} job(s) have no eligible time: their queue wait is unmeasured"),
    P_("per-job list cut to the {n} longest waits of {total} jobs"),
    P_(
        "every job runs at one priority level ({level}): the scheduler gets no signal about "
        "what matters (Q4)"
    ),
    P_(
        "{share} of jobs run at the top priority ({level}): the scheduler gets little signal, "
        "and preemption protects little (Q4)"
    ),
    P_(
        "{n} stop(s) without a checkpoint time: lost work is unmeasured, at most {minutes} "
        "GPU-minutes (everything since the attempt started)"
    ),
    P_(
        "{total} jobs in the log: {gpu} GPU jobs, {cpu} CPU-only, {unknown} without GPU "
        "information, {never} never started, {pending} pending (array tasks counted one by one)"
    ),
    P_("{n} malformed row(s) skipped (--skip-bad-rows)"),
    P_("{n} job(s) without a time limit: their actual run time was used"),
    P_("none of the {n} selected job(s) has the {measure} timestamps"),
    P_("no job in the log matches the selector"),
    P_("(none given)"),
)


def _minutes(seconds: float | None, lang: str) -> str:
    if seconds is None:
        return not_available(lang)
    return _("{n} min", lang).format(n=fmt(round(seconds / 60), lang))


def _slo_phrase(slo: dict[str, Any], lang: str) -> str:
    """One SLO's verdict with its share, interval and allowance, in `lang`."""
    verdict = _slo_verdict(str(slo["verdict"]), lang)
    if slo["violation_share"] is None:
        return _("SLO {name}: {verdict}", lang).format(name=slo["name"], verdict=verdict)
    lo, hi = slo["ci95"]
    args = {
        "name": slo["name"],
        "verdict": verdict,
        "share": pct(slo["violation_share"], lang),
        "lo": pct(lo, lang),
        "hi": pct(hi, lang),
        "allowed": pct0(slo["allowed_violation_share"], lang),
    }
    if slo["verdict"] != "inconclusive":
        return _(
            "SLO {name}: {verdict} ({share}, 95% CI {lo}-{hi} vs {allowed} allowed)", lang
        ).format(**args)
    lean = _slo_verdict(str(slo["point_estimate"]), lang)
    more = slo.get("more_jobs_to_settle")
    if more:
        return _(
            "SLO {name}: {verdict} ({share}, 95% CI {lo}-{hi} vs {allowed} allowed; leans "
            "{lean}, ~{more} more jobs would settle it)",
            lang,
        ).format(**args, lean=lean, more=more)
    return _(
        "SLO {name}: {verdict} ({share}, 95% CI {lo}-{hi} vs {allowed} allowed; leans {lean})",
        lang,
    ).format(**args, lean=lean)


def queue_summary(record: ev.Evidence, lang: str) -> str:
    """The queue record's summary line in `lang`, from its figures."""
    f = record.figures
    s = f["summary"]
    q = f["phases"]["queue_wait"]
    slo = "; ".join(_slo_phrase(x, lang) for x in f["slo"]) or _("no SLO given", lang)
    return _(
        "{jobs} jobs; queue wait p50 {p50}, p90 {p90} over {measured} measured; {indistinct} "
        "with phases that cannot be told apart; {slo}",
        lang,
    ).format(
        jobs=fmt(s["jobs"], lang),
        p50=_minutes(q["p50"], lang),
        p90=_minutes(q["p90"], lang),
        measured=fmt(s["queue_wait_measured"], lang),
        indistinct=fmt(s["ambiguity"]["phases_indistinct"], lang),
        slo=slo,
    )


def replay_summary(record: ev.Evidence, lang: str) -> str:
    """The replay record's summary line in `lang`, from its figures."""
    f = record.figures
    rec, slo = f["recommended_gpus"], f["slo"]
    best = ", ".join(
        _("{gpus} GPUs: p95 wait {wait} h, utilisation {share}", lang).format(
            gpus=p["gpus"],
            wait=fmt(round((p["wait_p95_s"] or 0) / 3600, 1), lang),
            share=pct0(p["utilisation"] or 0, lang),
        )
        for p in f["pools"][:4]
    )
    parts = [
        _("{jobs} jobs replayed ({window} window, {policy})", lang).format(
            jobs=fmt(f["jobs"], lang),
            window=_word(WINDOWS, f["window"]["kind"], lang),
            policy=f["policy"],
        )
    ]
    if slo:
        parts.append(
            _("smallest pool meeting SLO {name}: {gpus} GPUs", lang).format(
                name=slo["name"], gpus=rec
            )
            if rec
            else _("no pool tried meets SLO {name}", lang).format(name=slo["name"])
        )
    return "; ".join([*parts, best])


register_summary("queue", queue_summary)
register_summary("replay", replay_summary)


def _loc(text: str, lang: Language) -> str:
    return localize(text, lang, ("queue", "jobs", "report"))


def _word(table: dict[str, str], key: str, lang: str) -> str:
    """A known id's name in `lang` (English keeps the id itself, as before)."""
    if lang == "en" or key not in table:
        return key
    return _(table[key], lang)


def _slo_verdict(verdict: str, lang: str) -> str:
    if verdict in VERDICTS:
        return _word(VERDICTS, verdict, lang)
    return verdict if lang == "en" else verdict_label(verdict, lang)


def _verdict(slo: dict[str, Any], lang: Language) -> str:
    """The verdict; an inconclusive one with its point estimate and the jobs to settle it."""
    if slo["verdict"] != "inconclusive":
        return _slo_verdict(str(slo["verdict"]), lang)
    more = slo.get("more_jobs_to_settle")
    lean = _slo_verdict(str(slo["point_estimate"]), lang)
    if more:
        return _("inconclusive (leans {verdict}; ~{n} more jobs would settle it)", lang).format(
            verdict=lean, n=more
        )
    return _("inconclusive (leans {verdict})", lang).format(verdict=lean)


def _causes(slo: dict[str, Any], lang: Language) -> str:
    causes = slo.get("violations_by_cause") or {}
    return (
        ", ".join(
            f"{n} {c.replace('_', ' ') if lang == 'en' else _word(CATEGORIES, c, lang)}"
            for c, n in causes.items()
            if n
        )
        or "-"
    )


def _share_ci(slo: dict[str, Any], lang: Language) -> str:
    if slo["violation_share"] is None:
        return not_available(lang)
    lo, hi = slo["ci95"]
    return f"{pct(slo['violation_share'], lang)} ({pct(lo, lang)}-{pct(hi, lang)})"


def queue_section(section: Section, lang: Language) -> None:
    """Queue phases, SLOs, wait reasons, preemption and chains (SPEC Q1-Q5)."""
    f = section.record.figures
    section.title = t("queue", lang)
    _queue_charts(section, f, lang)
    section.tables.append(
        Table(
            t("phases", lang),
            [
                _("phase", lang),
                "n",
                "p50",
                "p90",
                "p99",
                _("max", lang),
                _("unmeasured", lang),
            ],
            [
                [
                    _word(PHASES, name, lang),
                    fmt(q["n"], lang),
                    hours(q["p50"], lang),
                    hours(q["p90"], lang),
                    hours(q["p99"], lang),
                    hours(q["max"], lang),
                    fmt(q["unmeasured"], lang),
                ]
                for name, q in f["phases"].items()
            ],
        )
    )
    rec = f["summary"].get("reconciliation")
    if rec:
        section.tables.append(
            Table(
                _("Jobs in the log (array tasks one by one)", lang),
                [t("figure", lang), t("value", lang)],
                [
                    [
                        k.replace("_", " ") if lang == "en" else _word(RECONCILIATION, k, lang),
                        fmt(v, lang),
                    ]
                    for k, v in rec.items()
                ],
            )
        )
    _slo_table(section, f, lang)
    _waits_table(section, f, lang)
    _preemption_table(section, f, lang)
    _restarts_table(section, f, lang)
    _chains_table(section, f, lang)


def _queue_charts(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Wait distribution against the SLOs, phases by kind, chains."""
    slos = f.get("slo") or []
    series = {s["name"]: s.get("waits_s") or [] for s in slos}
    if not any(series.values()):
        waits = [
            j["eligible_to_start_s"] for j in f["jobs"] if j.get("eligible_to_start_s") is not None
        ]
        series = {_("all jobs", lang): waits}
    thresholds = {s["name"]: s["threshold_minutes"] * 60 for s in slos}
    section.charts.append(
        Chart(
            t("chart_wait_cdf", lang),
            charts.wait_cdf(series, thresholds, t("chart_wait_cdf", lang), lang),
        )
    )
    if f.get("phases_by_kind"):
        section.charts.append(
            Chart(
                t("chart_phases", lang),
                charts.phase_bars(f["phases_by_kind"], t("chart_phases", lang), lang),
            )
        )
    finished = [c for c in f["chains"] if c["timeline"]][:8]
    if finished:
        section.charts.append(
            Chart(
                t("chart_chains", lang), charts.chain_gantt(finished, t("chart_chains", lang), lang)
            )
        )


def _slo_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Each SLO: its measure, threshold, violations with CI and verdict (Q3)."""
    slos = f.get("slo") or []
    if not slos:
        return
    section.tables.append(
        Table(
            "SLO (Q3)",
            [
                "SLO",
                _("measure", lang),
                _("threshold", lang),
                _("selected", lang),
                _("measured", lang),
                _("violations", lang),
                _("share (95% CI)", lang),
                _("allowed", lang),
                _("verdict", lang),
                _("violations by cause", lang),
            ],
            [
                [
                    s["name"],
                    s["measure"],
                    _("{n} min", lang).format(n=f"{s['threshold_minutes']:g}"),
                    fmt(s["selected"], lang),
                    fmt(s["measured"], lang),
                    fmt(s["violations"], lang),
                    _share_ci(s, lang),
                    pct(s["allowed_violation_share"], lang),
                    _verdict(s, lang),
                    _causes(s, lang),
                ]
                for s in slos
            ],
        )
    )


def _waits_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Wait reasons by total wait (Q2)."""
    section.tables.append(
        Table(
            t("wait_reasons", lang),
            [_("reason", lang), _("category", lang), _("jobs", lang), _("total wait", lang)],
            [
                [
                    _loc(r["reason"], lang) if r["reason"] == "(none given)" else r["reason"],
                    _word(CATEGORIES, r["category"], lang),
                    fmt(r["jobs"], lang),
                    hours(r["total_wait_s"], lang),
                ]
                for r in f["wait_reasons"][:12]
            ],
        )
    )


def _preemption_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Stops, lost work and priority levels (Q4)."""
    p = f["preemption"]
    section.tables.append(
        Table(
            _("Preemption (Q4)", lang),
            [t("figure", lang), t("value", lang)],
            [
                [
                    _("stops (preempted / requeued)", lang),
                    f"{p['stops']} ({p['preempted']} / {p['requeued']})",
                ],
                [
                    _("GPU-minutes lost since a measured checkpoint", lang),
                    fmt(p["gpu_minutes_lost_since_checkpoint"], lang),
                ],
                [
                    _("checkpoint before stop: yes / no / unknown", lang),
                    " / ".join(
                        str(p["checkpoint_before_stop"][k]) for k in ("yes", "no", "unknown")
                    ),
                ],
                [
                    _("share of jobs at the top priority level", lang),
                    pct(p["top_priority_share"], lang),
                ],
            ],
        )
    )


# How a re-run after a lost run is judged (drills.restarts), as a person reads it.
RESTART_VERDICTS = {
    "restarted_from_zero": N_("restarted from zero"),
    "resumed": N_("resumed"),
    "unclear": N_("unclear"),
}
LOST_BY = {
    "node_fail": N_("node failure"),
    "preempted": N_("preempted"),
    "timeout": N_("time limit"),
    "requeued": N_("requeued"),
}


def _restarts_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Re-runs after a lost node, preemption or timeout: resumed or restarted from zero (G1)."""
    found = f.get("restarts_from_zero") or {}
    yes_no = {True: _("yes", lang), False: _("no", lang)}
    rows = [
        [
            str(e["job_id"]),
            str(e["name"]),
            _word(LOST_BY, str(e["state"]), lang),
            _word(RESTART_VERDICTS, str(e["verdict"]), lang),
            fmt(e["gpu_hours_lost"], lang),
            str(e["checkpoint_known"]) if lang == "en" else yes_no[bool(e["checkpoint_known"])],
        ]
        for e in found.get("restarts", [])
    ]
    if rows:
        section.tables.append(
            Table(
                _("Restarts after a lost run (G1)", lang),
                [
                    _("job", lang),
                    _("name", lang),
                    _("lost by", lang),
                    _("verdict", lang),
                    _("GPU-hours lost", lang),
                    _("checkpoint time known", lang),
                ],
                rows,
            )
        )


def _chains_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Chains of jobs from training to export (Q5)."""
    if not f["chains"]:
        return
    section.tables.append(
        Table(
            t("chains", lang),
            [
                _("chain", lang),
                _("jobs", lang),
                _("end to end", lang),
                _("last stage", lang),
                _("longest wait in", lang),
                _("hand-off idle", lang),
            ],
            [
                [
                    c["chain"],
                    fmt(c["jobs"], lang),
                    hours(c["end_to_end_s"], lang),
                    str(c["last_stage"]),
                    str(c["longest_waiting_stage"]),
                    hours(c["handoff_idle_s"], lang),
                ]
                for c in f["chains"]
            ],
        )
    )


def replay_section(section: Section, lang: Language) -> None:
    """Pool sizes replayed against the log (SPEC C8, D3)."""
    f = section.record.figures
    section.title = t("replay", lang)
    slo = f.get("slo")
    if len(f["pools"]) > 1:
        section.charts.append(
            Chart(
                t("chart_pool_curve", lang),
                charts.pool_curve(
                    f["pools"],
                    None if not slo else slo["threshold_s"] / 3600,
                    t("chart_pool_curve", lang),
                    lang,
                ),
            )
        )
    section.tables.append(
        Table(
            t("pools", lang),
            [
                "GPUs" if lang == "en" else "GPU",
                _("jobs", lang),
                "p50",
                "p95",
                "p99",
                _("max", lang),
                _("SLO violations", lang),
                _("utilisation", lang),
                _("longest queue", lang),
            ],
            [
                [
                    fmt(p["gpus"], lang),
                    fmt(p["jobs"], lang),
                    hours(p["wait_p50_s"], lang),
                    hours(p["wait_p95_s"], lang),
                    hours(p["wait_p99_s"], lang),
                    hours(p["wait_max_s"], lang),
                    pct(p["slo_violation_share"], lang),
                    pct(p["utilisation"], lang),
                    fmt(p["longest_queue"], lang),
                ]
                for p in f["pools"]
            ],
        )
    )
