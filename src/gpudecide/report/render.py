"""Render the evidence of a workspace as HTML, Markdown and JSON.

Each evidence kind has a section builder (`SECTION_BUILDERS`); a later analysis adds its
section by registering one. The HTML is a single file with inline CSS and inline SVG: no
script, font or stylesheet is fetched, so it opens the same in an air-gapped network.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from gpudecide import __version__
from gpudecide import evidence as ev
from gpudecide.artifacts.report import audit_section
from gpudecide.cost.report import cost_section
from gpudecide.fsutil import atomic_write_text
from gpudecide.jsonio import utc_iso
from gpudecide.report import charts
from gpudecide.report.fmt import fmt, hours, pct
from gpudecide.report.i18n import Language, t
from gpudecide.report.model import Chart, Section, SectionBuilder, Table


def _profile_section(section: Section, lang: Language) -> None:
    f = section.record.figures
    section.title = t("profile", lang)
    kinds = list(f["jobs_by_kind"])
    section.tables.append(
        Table(
            t("jobs_by_kind", lang),
            ["kind", t("jobs", lang), t("gpu_hours", lang)],
            [[k, fmt(f["jobs_by_kind"][k]), fmt(f["gpu_hours_by_kind"][k])] for k in kinds]
            + [["all", fmt(f["jobs_total"]), fmt(f["gpu_hours_total"])]],
        )
    )
    burst, pred = f["burstiness"], f["predictability"]
    rows = [
        ["successful full trainings (F1)", fmt(f["trainings_successful"])],
        ["GPU jobs in all (F1)", fmt(f["jobs_total"])],
        ["attempts (requeues included)", fmt(f["attempts_total"])],
        ["restarts (re-submissions + requeues)", fmt(f["restarts"])],
        ["never started (cancelled while pending)", fmt(f["never_started"])],
        ["unsuccessful share of jobs", pct(f["unsuccessful_share"])],
        ["GPU-hours lost to unsuccessful attempts", pct(f["gpu_hours_lost_share"])],
        ["jobs per week (mean)", fmt(f["jobs_per_week_mean"])],
        [
            "duration p50 / p90 / max (h)",
            " / ".join(fmt(f["duration_hours"][k]) for k in ("p50", "p90", "max")),
        ],
        ["peak concurrent GPUs (F2)", f"{fmt(f['peak_concurrent_gpus'])} at {f['peak_at']}"],
        ["weekly GPU-hours CV (F2)", fmt(burst["weekly_gpu_hours_cv"])],
        [
            f"GPU-hours in the largest {burst['top_jobs_fraction']:.0%} of jobs (F2)",
            pct(burst["top_jobs_gpu_hours_share"]),
        ],
        [
            "shape (F2)",
            f"{burst['shape']} (bursty when CV >= "
            f"{burst['thresholds']['bursty_cv_min']} or top share >= "
            f"{burst['thresholds']['bursty_top_share_min']:.0%})",
        ],
        [
            "predictability (F3)",
            f"{pred['verdict']}: WAPE {fmt(pred['wape'])} "
            f"(predictable <= {pred['thresholds']['predictable_wape_max']}, partly <= "
            f"{pred['thresholds']['partly_predictable_wape_max']}); {pred['meaning']}",
        ],
        [
            f"GPU-hours planned >= {pred['lead_time_hours']:.0f} h ahead (F3)",
            pct(pred["lead_time_share"]),
        ],
    ]
    if f.get("pool_gpus"):
        rows.append(
            [
                f"busy share of a {f['pool_gpus']}-GPU pool (C2)",
                f"{pct(f['busy_share'])} useful, {pct(f['occupied_share'])} occupied",
            ]
        )
    section.tables.append(
        Table(t("key_figures", lang), [t("figure", lang), t("value", lang)], rows)
    )
    weeks = f["weeks"]
    section.tables.append(
        Table(
            t("per_week", lang),
            [t("week", lang), "start", t("jobs", lang), t("gpu_hours", lang)],
            [[str(w["week"]), w["start"][:10], fmt(w["jobs"]), fmt(w["gpu_hours"])] for w in weeks],
        )
    )
    labels = [w["start"][5:10] for w in weeks]
    by_kind = {k: [w["jobs_by_kind"][k] for w in weeks] for k in kinds}
    series = f.get("series") or {}
    section.charts.append(
        Chart(
            t("chart_jobs_week", lang),
            charts.jobs_per_week(labels, by_kind, t("chart_jobs_week", lang)),
        )
    )
    if series:
        days = [datetime.fromisoformat(d) for d in series["day_starts"]]
        section.charts.append(
            Chart(
                t("chart_gpu_day", lang),
                charts.gpu_hours_per_day(days, series["daily_gpu_hours"], t("chart_gpu_day", lang)),
            )
        )
        conc = series["concurrency"]
        section.charts.append(
            Chart(
                t("chart_concurrency", lang),
                charts.concurrency(
                    [datetime.fromisoformat(x) for x in conc["t"]],
                    conc["gpus"],
                    f.get("pool_gpus"),
                    t("chart_concurrency", lang),
                ),
            )
        )


def _share_ci(slo: dict[str, Any]) -> str:
    if slo["violation_share"] is None:
        return "n/a"
    lo, hi = slo["ci95"]
    return f"{pct(slo['violation_share'])} ({pct(lo)}-{pct(hi)})"


def _queue_section(section: Section, lang: Language) -> None:
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
                        s["verdict"],
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


def _replay_section(section: Section, lang: Language) -> None:
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


SECTION_BUILDERS: dict[str, SectionBuilder] = {
    "profile": _profile_section,
    "queue": _queue_section,
    "replay": _replay_section,
    "cost": cost_section,
    "audit": audit_section,
}


@dataclass
class Report:
    """Everything the three renderers need."""

    title: str
    team: str
    decision: str
    language: Language
    generated_at_utc: str
    sections: list[Section]
    labels: dict[str, str]


def build(
    records: list[ev.Evidence],
    root: Path,
    *,
    team: str = "",
    decision: str = "",
    language: Language = "en",
    now: datetime | None = None,
) -> Report:
    """Sections for the newest record of every kind, each with its freshness."""
    newest: dict[str, ev.Evidence] = {}
    for record in records:
        newest[record.kind] = record
    sections: list[Section] = []
    for kind, record in newest.items():
        state, problems = ev.freshness(record, root)
        section = Section(
            anchor=kind,
            title=record.title,
            record=record,
            freshness=state.value,
            freshness_label=t(state.value, language),
            problems=problems,
        )
        builder = SECTION_BUILDERS.get(kind)
        if builder is not None:
            builder(section, language)
        sections.append(section)
    stamp = utc_iso(now or datetime.now(UTC)) or ""
    labels = {
        k: t(k, language)
        for k in (
            "report_title",
            "generated",
            "evidence_index",
            "kind",
            "verdict",
            "status",
            "inputs",
            "notes",
            "no_evidence",
        )
    }
    return Report(
        title=t("report_title", language),
        team=team,
        decision=decision,
        language=language,
        generated_at_utc=stamp,
        sections=sections,
        labels=labels,
    )


_ENV = Environment(
    loader=PackageLoader("gpudecide.report", "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


def to_html(report: Report) -> str:
    """The single self-contained HTML file."""
    return _ENV.get_template("report.html.j2").render(r=report, version=__version__)


def to_markdown(report: Report) -> str:
    """The same content as Markdown (charts left out; their numbers are in the tables)."""
    return _ENV.get_template("report.md.j2").render(r=report, version=__version__)


def to_json(report: Report) -> str:
    """Machine form: every record in full, with its freshness."""
    body = {
        "title": report.title,
        "team": report.team,
        "decision": report.decision,
        "generated_at_utc": report.generated_at_utc,
        "tool_version": __version__,
        "sections": [
            {
                "kind": s.record.kind,
                "title": s.title,
                "freshness": s.freshness,
                "problems": s.problems,
                "evidence": s.record.model_dump(),
            }
            for s in report.sections
        ],
    }
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def write(report: Report, out_dir: Path) -> dict[str, Path]:
    """Write index.html, report.md and report.json atomically."""
    paths = {
        "html": out_dir / "index.html",
        "markdown": out_dir / "report.md",
        "json": out_dir / "report.json",
    }
    atomic_write_text(paths["html"], to_html(report))
    atomic_write_text(paths["markdown"], to_markdown(report))
    atomic_write_text(paths["json"], to_json(report))
    return paths
