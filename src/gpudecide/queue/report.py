"""Report sections of the queue analysis (SPEC Q1-Q5) and the pool replay (C8, D3)."""

from __future__ import annotations

from typing import Any

from gpudecide.report import charts
from gpudecide.report.fmt import fmt, hours, pct
from gpudecide.report.i18n import Language, t
from gpudecide.report.model import Chart, Section, Table


def _verdict(slo: dict[str, Any]) -> str:
    """The verdict; an inconclusive one with its point estimate and the jobs to settle it."""
    if slo["verdict"] != "inconclusive":
        return str(slo["verdict"])
    more = slo.get("more_jobs_to_settle")
    return f"inconclusive (leans {slo['point_estimate']}" + (
        f"; ~{more} more jobs would settle it)" if more else ")"
    )


def _causes(slo: dict[str, Any]) -> str:
    causes = slo.get("violations_by_cause") or {}
    return ", ".join(f"{n} {c.replace('_', ' ')}" for c, n in causes.items() if n) or "-"


def _share_ci(slo: dict[str, Any]) -> str:
    if slo["violation_share"] is None:
        return "n/a"
    lo, hi = slo["ci95"]
    return f"{pct(slo['violation_share'])} ({pct(lo)}-{pct(hi)})"


def queue_section(section: Section, lang: Language) -> None:
    """Queue phases, SLOs, wait reasons, preemption and chains (SPEC Q1-Q5)."""
    f = section.record.figures
    section.title = t("queue", lang)
    slos = f.get("slo") or []
    series = {s["name"]: s.get("waits_s") or [] for s in slos}
    if not any(series.values()):
        waits = [
            j["eligible_to_start_s"] for j in f["jobs"] if j.get("eligible_to_start_s") is not None
        ]
        series = {"all jobs": waits}
    thresholds = {s["name"]: s["threshold_minutes"] * 60 for s in slos}
    section.charts.append(
        Chart(
            t("chart_wait_cdf", lang),
            charts.wait_cdf(series, thresholds, t("chart_wait_cdf", lang)),
        )
    )
    if f.get("phases_by_kind"):
        section.charts.append(
            Chart(
                t("chart_phases", lang),
                charts.phase_bars(f["phases_by_kind"], t("chart_phases", lang)),
            )
        )
    finished = [c for c in f["chains"] if c["timeline"]][:8]
    if finished:
        section.charts.append(
            Chart(t("chart_chains", lang), charts.chain_gantt(finished, t("chart_chains", lang)))
        )
    section.tables.append(
        Table(
            t("phases", lang),
            ["phase", "n", "p50", "p90", "p99", "max", "unmeasured"],
            [
                [
                    name,
                    fmt(q["n"]),
                    hours(q["p50"]),
                    hours(q["p90"]),
                    hours(q["p99"]),
                    hours(q["max"]),
                    fmt(q["unmeasured"]),
                ]
                for name, q in f["phases"].items()
            ],
        )
    )
    rec = f["summary"].get("reconciliation")
    if rec:
        section.tables.append(
            Table(
                "Jobs in the log (array tasks one by one)",
                [t("figure", lang), t("value", lang)],
                [[k.replace("_", " "), fmt(v)] for k, v in rec.items()],
            )
        )
    if slos:
        section.tables.append(
            Table(
                "SLO (Q3)",
                [
                    "SLO",
                    "measure",
                    "threshold",
                    "selected",
                    "measured",
                    "violations",
                    "share (95% CI)",
                    "allowed",
                    "verdict",
                    "violations by cause",
                ],
                [
                    [
                        s["name"],
                        s["measure"],
                        f"{s['threshold_minutes']:g} min",
                        fmt(s["selected"]),
                        fmt(s["measured"]),
                        fmt(s["violations"]),
                        _share_ci(s),
                        pct(s["allowed_violation_share"]),
                        _verdict(s),
                        _causes(s),
                    ]
                    for s in slos
                ],
            )
        )
    section.tables.append(
        Table(
            t("wait_reasons", lang),
            ["reason", "category", "jobs", "total wait"],
            [
                [r["reason"], r["category"], fmt(r["jobs"]), hours(r["total_wait_s"])]
                for r in f["wait_reasons"][:12]
            ],
        )
    )
    p = f["preemption"]
    section.tables.append(
        Table(
            "Preemption (Q4)",
            [t("figure", lang), t("value", lang)],
            [
                [
                    "stops (preempted / requeued)",
                    f"{p['stops']} ({p['preempted']} / {p['requeued']})",
                ],
                [
                    "GPU-minutes lost since a measured checkpoint",
                    fmt(p["gpu_minutes_lost_since_checkpoint"]),
                ],
                [
                    "checkpoint before stop: yes / no / unknown",
                    " / ".join(
                        str(p["checkpoint_before_stop"][k]) for k in ("yes", "no", "unknown")
                    ),
                ],
                ["share of jobs at the top priority level", pct(p["top_priority_share"])],
            ],
        )
    )
    _restarts_table(section, f, lang)
    if f["chains"]:
        section.tables.append(
            Table(
                t("chains", lang),
                ["chain", "jobs", "end to end", "last stage", "longest wait in", "hand-off idle"],
                [
                    [
                        c["chain"],
                        fmt(c["jobs"]),
                        hours(c["end_to_end_s"]),
                        str(c["last_stage"]),
                        str(c["longest_waiting_stage"]),
                        hours(c["handoff_idle_s"]),
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
                ),
            )
        )
    section.tables.append(
        Table(
            t("pools", lang),
            [
                "GPUs",
                "jobs",
                "p50",
                "p95",
                "p99",
                "max",
                "SLO violations",
                "utilisation",
                "longest queue",
            ],
            [
                [
                    fmt(p["gpus"]),
                    fmt(p["jobs"]),
                    hours(p["wait_p50_s"]),
                    hours(p["wait_p95_s"]),
                    hours(p["wait_p99_s"]),
                    hours(p["wait_max_s"]),
                    pct(p["slo_violation_share"]),
                    pct(p["utilisation"]),
                    fmt(p["longest_queue"]),
                ]
                for p in f["pools"]
            ],
        )
    )


def _restarts_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Re-runs after a lost node, preemption or timeout: resumed or restarted from zero (G1)."""
    found = f.get("restarts_from_zero") or {}
    rows = [
        [
            str(e["job_id"]),
            str(e["name"]),
            str(e["state"]),
            str(e["verdict"]),
            fmt(e["gpu_hours_lost"]),
            str(e["checkpoint_known"]),
        ]
        for e in found.get("restarts", [])
    ]
    if rows:
        section.tables.append(
            Table(
                "Restarts after a lost run (G1)",
                ["job", "name", "lost by", "verdict", "GPU-hours lost", "checkpoint time known"],
                rows,
            )
        )
