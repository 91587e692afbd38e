"""Report section of the workload profile (SPEC F1-F3, C2)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gpudecide.report import charts
from gpudecide.report.fmt import fmt, pct
from gpudecide.report.i18n import Language, t
from gpudecide.report.model import Chart, Section, Table


def _reconciliation_rows(f: dict[str, Any]) -> list[list[str]]:
    """Every job of the log in one group, as `queue` counts them too (F1, Q1)."""
    r = f.get("reconciliation")
    if not r:
        return []
    sources = f.get("gpu_count_sources") or {}
    return [
        [
            "jobs in the log (array tasks one by one)",
            f"{fmt(r['total'])}: {fmt(r['gpu_jobs'])} GPU, {fmt(r['cpu_only'])} CPU-only, "
            f"{fmt(r['no_gpu_information'])} without GPU information, "
            f"{fmt(r['never_started'])} never started, {fmt(r['pending'])} pending",
        ],
        [
            "GPU counts taken from",
            ", ".join(f"{src}: {fmt(n)}" for src, n in sources.items()) or "-",
        ],
    ]


def profile_section(section: Section, lang: Language) -> None:
    """The workload profile (SPEC F1-F3, C2)."""
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
        *_reconciliation_rows(f),
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
        if f.get("peak_exceeds_pool"):
            rows.append(
                [
                    "peak above the pool",
                    f"{f['peak_concurrent_gpus']} GPUs at once on a {f['pool_gpus']}-GPU pool: "
                    "the log holds other pools too, or the pool size is wrong",
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
