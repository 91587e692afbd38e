"""Report section of the workload profile (SPEC F1-F3, C2).

Every word through the "jobs" catalogue (headings shared with other sections through the
"report" one); the profile's own English (summary, notes, verdict meanings) is translated
at render by the catalogue's patterns. English output is the historic one, unchanged.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from gpudecide import evidence as ev
from gpudecide.i18n import translator
from gpudecide.report import charts
from gpudecide.report.fmt import fmt, pct, pct0, when
from gpudecide.report.i18n import P_, Language, localize, register_summary, t
from gpudecide.report.model import Chart, Section, Table

_ = translator("jobs")

# English the profile writes into its record (summary, notes, predictability), translated
# by pattern at render; listed so that the catalogues must hold them.
GENERATED = (
    P_(
        "the log shows {peak} GPUs in use at once, more than the {pool}-GPU pool: the log holds "
        "jobs of other pools too, or the pool size is wrong"
    ),
    P_("this peak does not fit the pool"),
    P_("not measurable"),
    P_("predictable"),
    P_("partly predictable"),
    P_("unpredictable"),
    P_("bursty"),
    P_("steady"),
    P_("no GPU-hours after the first week of the window"),
    P_(
        "last week's load predicts the next within {share}: capacity can be planned; renting "
        "per job adds coordination overhead"
    ),
    P_("load drifts week to week: plan a base, keep headroom for the rest"),
    P_(
        "tomorrow's pool load cannot be told from last week's: buying permanent capacity is "
        "premature"
    ),
    P_(
        "the log starts {start}: it covers {covered} of the {weeks} weeks asked for; weekly "
        "figures before that are zero, not measured"
    ),
    P_("no job in the window ran on a GPU: GPU figures are empty"),
    P_("no GPU job has an eligible time: lead-time share not measurable"),
    P_("{n} job(s) still running: counted up to {time}"),
    P_("{n} malformed row(s) skipped (--skip-bad-rows)"),
    P_(
        "{total} jobs in the log: {gpu} GPU jobs, {cpu} CPU-only, {unknown} without GPU "
        "information, {never} never started, {pending} pending (array tasks counted one by one)"
    ),
)


def _loc(text: str, lang: Language) -> str:
    return localize(text, lang, ("jobs", "queue", "report"))


def _day(iso: str, lang: Language) -> str:
    """An ISO date (or time) of the record as a date in the reader's locale."""
    if lang == "en":
        return iso[:10]
    return when(date.fromisoformat(iso[:10]), lang)


def profile_summary(record: ev.Evidence, lang: str) -> str:
    """The profile's summary line in `lang`, from its figures."""
    f = record.figures
    parts = [f"{fmt(n, lang)} {k}" for k, n in f["jobs_by_kind"].items() if n and k != "train"]
    args = {
        "trainings": fmt(f["trainings_successful"], lang),
        "jobs": fmt(f["jobs_total"], lang),
        "kinds": ", ".join(parts),
        "hours": fmt(f["gpu_hours_total"], lang),
    }
    if parts:
        return _(
            "{trainings} successful full training(s); {jobs} GPU jobs in all ({kinds}); "
            "{hours} GPU-hours",
            lang,
        ).format(**args)
    return _(
        "{trainings} successful full training(s); {jobs} GPU jobs in all; {hours} GPU-hours",
        lang,
    ).format(**args)


register_summary("profile", profile_summary)


def _reconciliation_rows(f: dict[str, Any], lang: Language) -> list[list[str]]:
    """Every job of the log in one group, as `queue` counts them too (F1, Q1)."""
    r = f.get("reconciliation")
    if not r:
        return []
    sources = f.get("gpu_count_sources") or {}
    return [
        [
            _("jobs in the log (array tasks one by one)", lang),
            _(
                "{total}: {gpu} GPU, {cpu} CPU-only, {unknown} without GPU information, "
                "{never} never started, {pending} pending",
                lang,
            ).format(
                total=fmt(r["total"], lang),
                gpu=fmt(r["gpu_jobs"], lang),
                cpu=fmt(r["cpu_only"], lang),
                unknown=fmt(r["no_gpu_information"], lang),
                never=fmt(r["never_started"], lang),
                pending=fmt(r["pending"], lang),
            ),
        ],
        [
            _("GPU counts taken from", lang),
            ", ".join(f"{src}: {fmt(n, lang)}" for src, n in sources.items()) or "-",
        ],
    ]


def _shape_rows(f: dict[str, Any], lang: Language) -> list[list[str]]:
    """Burstiness and predictability (F2, F3)."""
    burst, pred = f["burstiness"], f["predictability"]
    th = burst["thresholds"]
    pt = pred["thresholds"]
    return [
        [_("weekly GPU-hours CV (F2)", lang), fmt(burst["weekly_gpu_hours_cv"], lang)],
        [
            _("GPU-hours in the largest {share} of jobs (F2)", lang).format(
                share=pct0(burst["top_jobs_fraction"], lang)
            ),
            pct(burst["top_jobs_gpu_hours_share"], lang),
        ],
        [
            _("shape (F2)", lang),
            _("{shape} (bursty when CV >= {cv} or top share >= {share})", lang).format(
                shape=_loc(burst["shape"], lang),
                cv=fmt(th["bursty_cv_min"], lang) if lang != "en" else th["bursty_cv_min"],
                share=pct0(th["bursty_top_share_min"], lang),
            ),
        ],
        [
            _("predictability (F3)", lang),
            _(
                "{verdict}: WAPE {wape} (predictable <= {max}, partly <= {partly}); {meaning}",
                lang,
            ).format(
                verdict=_loc(pred["verdict"], lang),
                wape=fmt(pred["wape"], lang),
                max=pt["predictable_wape_max"]
                if lang == "en"
                else fmt(pt["predictable_wape_max"], lang),
                partly=pt["partly_predictable_wape_max"]
                if lang == "en"
                else fmt(pt["partly_predictable_wape_max"], lang),
                meaning=_loc(pred["meaning"], lang),
            ),
        ],
        [
            _("GPU-hours planned >= {hours} h ahead (F3)", lang).format(
                hours=f"{pred['lead_time_hours']:.0f}"
            ),
            pct(pred["lead_time_share"], lang),
        ],
    ]


def _pool_rows(f: dict[str, Any], lang: Language) -> list[list[str]]:
    """How busy the team's own pool was (C2)."""
    if not f.get("pool_gpus"):
        return []
    rows = [
        [
            _("busy share of a {gpus}-GPU pool (C2)", lang).format(gpus=f["pool_gpus"]),
            _("{useful} useful, {occupied} occupied", lang).format(
                useful=pct(f["busy_share"], lang), occupied=pct(f["occupied_share"], lang)
            ),
        ]
    ]
    if f.get("peak_exceeds_pool"):
        rows.append(
            [
                _("peak above the pool", lang),
                _(
                    "{peak} GPUs at once on a {gpus}-GPU pool: the log holds other pools too, "
                    "or the pool size is wrong",
                    lang,
                ).format(peak=f["peak_concurrent_gpus"], gpus=f["pool_gpus"]),
            ]
        )
    return rows


def _key_figures(f: dict[str, Any], lang: Language) -> list[list[str]]:
    """The key figures of the profile, one row each."""
    return [
        [_("successful full trainings (F1)", lang), fmt(f["trainings_successful"], lang)],
        [_("GPU jobs in all (F1)", lang), fmt(f["jobs_total"], lang)],
        [_("attempts (requeues included)", lang), fmt(f["attempts_total"], lang)],
        [_("restarts (re-submissions + requeues)", lang), fmt(f["restarts"], lang)],
        [_("never started (cancelled while pending)", lang), fmt(f["never_started"], lang)],
        *_reconciliation_rows(f, lang),
        [_("unsuccessful share of jobs", lang), pct(f["unsuccessful_share"], lang)],
        [_("GPU-hours lost to unsuccessful attempts", lang), pct(f["gpu_hours_lost_share"], lang)],
        [_("jobs per week (mean)", lang), fmt(f["jobs_per_week_mean"], lang)],
        [
            _("duration p50 / p90 / max (h)", lang),
            " / ".join(fmt(f["duration_hours"][k], lang) for k in ("p50", "p90", "max")),
        ],
        [
            _("peak concurrent GPUs (F2)", lang),
            _("{gpus} at {time}", lang).format(
                gpus=fmt(f["peak_concurrent_gpus"], lang),
                time=f["peak_at"]
                if lang == "en" or not f["peak_at"]
                else when(datetime.fromisoformat(str(f["peak_at"])), lang),
            ),
        ],
        *_shape_rows(f, lang),
        *_pool_rows(f, lang),
    ]


def profile_section(section: Section, lang: Language) -> None:
    """The workload profile (SPEC F1-F3, C2)."""
    f = section.record.figures
    section.title = t("profile", lang)
    kinds = list(f["jobs_by_kind"])
    section.tables.append(
        Table(
            t("jobs_by_kind", lang),
            [_("kind", lang), t("jobs", lang), t("gpu_hours", lang)],
            [
                [k, fmt(f["jobs_by_kind"][k], lang), fmt(f["gpu_hours_by_kind"][k], lang)]
                for k in kinds
            ]
            + [[_("all", lang), fmt(f["jobs_total"], lang), fmt(f["gpu_hours_total"], lang)]],
        )
    )
    section.tables.append(
        Table(t("key_figures", lang), [t("figure", lang), t("value", lang)], _key_figures(f, lang))
    )
    weeks = f["weeks"]
    section.tables.append(
        Table(
            t("per_week", lang),
            [t("week", lang), _("start", lang), t("jobs", lang), t("gpu_hours", lang)],
            [
                [
                    str(w["week"]),
                    _day(w["start"], lang),
                    fmt(w["jobs"], lang),
                    fmt(w["gpu_hours"], lang),
                ]
                for w in weeks
            ],
        )
    )
    _charts(section, f, kinds, lang)


def _charts(section: Section, f: dict[str, Any], kinds: list[str], lang: Language) -> None:
    """Jobs per week, GPU-hours per day, GPUs in use."""
    weeks = f["weeks"]
    labels = [w["start"][5:10] for w in weeks]
    by_kind = {k: [w["jobs_by_kind"][k] for w in weeks] for k in kinds}
    series = f.get("series") or {}
    section.charts.append(
        Chart(
            t("chart_jobs_week", lang),
            charts.jobs_per_week(labels, by_kind, t("chart_jobs_week", lang), lang),
        )
    )
    if series:
        days = [datetime.fromisoformat(d) for d in series["day_starts"]]
        section.charts.append(
            Chart(
                t("chart_gpu_day", lang),
                charts.gpu_hours_per_day(
                    days, series["daily_gpu_hours"], t("chart_gpu_day", lang), lang
                ),
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
                    lang,
                ),
            )
        )
