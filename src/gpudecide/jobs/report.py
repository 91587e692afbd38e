"""Report section of the workload profile (SPEC F1-F3, C2).

Every word through the "jobs" catalogue (headings shared with other sections through the
"report" one), in the language the report is written in; the figures are read through
their model (`jobs.profile_figures`), the shape and verdict words said by `jobs.words`.
"""

from __future__ import annotations

from datetime import date, datetime

from gpudecide import fmt
from gpudecide.i18n import translator
from gpudecide.jobs.profile_figures import ProfileRecordFigures, figures_of
from gpudecide.jobs.words import (
    meaning_text,
    shape_word,
    utilisation_name,
    verdict_word,
    wape_text,
)
from gpudecide.report import charts
from gpudecide.report.i18n import t
from gpudecide.report.model import Chart, Section, Table

__all__ = ["profile_section"]

_ = translator("jobs")


def _day(iso: str) -> str:
    """An ISO date (or time) of the record as a date in the reader's locale."""
    return fmt.when(date.fromisoformat(iso[:10]))


def _reconciliation_rows(f: ProfileRecordFigures) -> list[list[str]]:
    """Every job of the log in one group, as `queue` counts them too (F1, Q1)."""
    r = f.reconciliation
    sources = f.gpu_count_sources
    return [
        [
            _("jobs in the log (array tasks one by one)"),
            _(
                "{total}: {gpu} GPU, {cpu} CPU-only, {unknown} without GPU information, "
                "{never} never started, {pending} pending"
            ).format(
                total=fmt.fmt(r.total),
                gpu=fmt.fmt(r.gpu_jobs),
                cpu=fmt.fmt(r.cpu_only),
                unknown=fmt.fmt(r.no_gpu_information),
                never=fmt.fmt(r.never_started),
                pending=fmt.fmt(r.pending),
            ),
        ],
        [
            _("GPU counts taken from"),
            ", ".join(f"{src}: {fmt.fmt(n)}" for src, n in sources.items()) or "-",
        ],
    ]


def _shape_rows(f: ProfileRecordFigures) -> list[list[str]]:
    """Burstiness, concentration and predictability (F2, F3), WAPE said where it is first
    used."""
    burst, conc, pred = f.burstiness, f.concentration, f.predictability
    th, pt = burst.thresholds, pred.thresholds
    return [
        [_("weekly GPU-hours CV (F2)"), fmt.fmt(burst.weekly_gpu_hours_cv)],
        [
            _("GPUs in use in the busiest {share} of the window (F2)").format(
                share=fmt.pct0(burst.busiest_share)
            ),
            _("{busiest}: {ratio} times the mean of {mean}").format(
                busiest=fmt.fmt(burst.busiest_gpus_in_use),
                ratio=fmt.fmt(burst.busiest_to_mean),
                mean=fmt.fmt(burst.mean_gpus_in_use),
            ),
        ],
        [
            _("shape (F2)"),
            _(
                "{shape} (bursty when CV >= {cv} or the busiest GPUs in use >= {ratio} times "
                "the mean)"
            ).format(
                shape=shape_word(burst.shape),
                cv=fmt.fmt(th.bursty_cv_min),
                ratio=fmt.fmt(th.bursty_busiest_to_mean_min),
            ),
        ],
        [
            _("concentration: GPU-hours in the largest {share} of jobs (F2)").format(
                share=fmt.pct0(conc.top_jobs_fraction)
            ),
            _(
                "{share}, the largest job {largest} (how the work is spread over jobs, not a burst)"
            ).format(
                share=fmt.pct(conc.top_jobs_gpu_hours_share),
                largest=fmt.pct(conc.largest_job_gpu_hours_share),
            ),
        ],
        [
            _("predictability (F3)"),
            _(
                "{verdict}: WAPE {wape} (predictable <= {max}, partly <= {partly}); {meaning}"
            ).format(
                verdict=verdict_word(pred.verdict),
                wape=fmt.fmt(pred.wape),
                max=fmt.fmt(pt.predictable_wape_max),
                partly=fmt.fmt(pt.partly_predictable_wape_max),
                meaning=meaning_text(pred),
            ),
        ],
        [_("what WAPE is"), wape_text()],
        [
            _("GPU-hours planned >= {hours} h ahead (F3)").format(
                hours=f"{pred.lead_time_hours:.0f}"
            ),
            fmt.pct(pred.lead_time_share),
        ],
    ]


def _pool_rows(f: ProfileRecordFigures) -> list[list[str]]:
    """How busy the team's own pool was (C2), each utilisation named with its pool and
    window."""
    if not f.pool_gpus:
        return []
    weeks = f.window.weeks
    rows = [
        [utilisation_name("useful", f.pool_gpus, weeks) + " (C2)", fmt.pct(f.busy_share)],
        [utilisation_name("occupied", f.pool_gpus, weeks), fmt.pct(f.occupied_share)],
    ]
    if f.peak_exceeds_pool:
        rows.append(
            [
                _("peak above the pool"),
                _(
                    "{peak} GPUs at once on a {gpus}-GPU pool: the log holds other pools too, "
                    "or the pool size is wrong"
                ).format(peak=f.peak_concurrent_gpus, gpus=f.pool_gpus),
            ]
        )
    return rows


def _key_figures(f: ProfileRecordFigures) -> list[list[str]]:
    """The key figures of the profile, one row each."""
    d = f.duration_hours
    return [
        [_("successful full trainings (F1)"), fmt.fmt(f.trainings_successful)],
        [_("GPU jobs in all (F1)"), fmt.fmt(f.jobs_total)],
        [_("attempts (requeues included)"), fmt.fmt(f.attempts_total)],
        [_("restarts (re-submissions + requeues)"), fmt.fmt(f.restarts)],
        [_("never started (cancelled while pending)"), fmt.fmt(f.never_started)],
        *_reconciliation_rows(f),
        [_("unsuccessful share of jobs"), fmt.pct(f.unsuccessful_share)],
        [_("GPU-hours lost to unsuccessful attempts"), fmt.pct(f.gpu_hours_lost_share)],
        [_("jobs per week (mean)"), fmt.fmt(f.jobs_per_week_mean)],
        [
            _("duration p50 / p90 / max (h)"),
            " / ".join(fmt.fmt(v) for v in (d.p50, d.p90, d.max)),
        ],
        [
            _("peak concurrent GPUs (F2)"),
            _("{gpus} at {time}").format(
                gpus=fmt.fmt(f.peak_concurrent_gpus),
                # when the peak was, in the reader's locale; n/a for a log without GPU use
                time=fmt.moment(f.peak_at) if f.peak_at else fmt.not_available(),
            ),
        ],
        *_shape_rows(f),
        *_pool_rows(f),
    ]


def profile_section(section: Section) -> None:
    """The workload profile (SPEC F1-F3, C2)."""
    f = figures_of(section.record)
    section.title = t("profile")
    kinds = list(f.jobs_by_kind)
    section.tables.append(
        Table(
            t("jobs_by_kind"),
            [_("kind"), t("jobs"), t("gpu_hours")],
            [[k, fmt.fmt(f.jobs_by_kind[k]), fmt.fmt(f.gpu_hours_by_kind[k])] for k in kinds]
            + [[_("all"), fmt.fmt(f.jobs_total), fmt.fmt(f.gpu_hours_total)]],
        )
    )
    section.tables.append(Table(t("key_figures"), [t("figure"), t("value")], _key_figures(f)))
    section.tables.append(
        Table(
            t("per_week"),
            [t("week"), _("start"), t("jobs"), t("gpu_hours")],
            [[str(w.week), _day(w.start), fmt.fmt(w.jobs), fmt.fmt(w.gpu_hours)] for w in f.weeks],
        )
    )
    _charts(section, f, kinds)


def _charts(section: Section, f: ProfileRecordFigures, kinds: list[str]) -> None:
    """Jobs per week, GPU-hours per day, GPUs in use."""
    labels = [w.start[5:10] for w in f.weeks]
    by_kind = {k: [w.jobs_by_kind[k] for w in f.weeks] for k in kinds}
    section.charts.append(
        Chart(
            t("chart_jobs_week"),
            charts.jobs_per_week(labels, by_kind, t("chart_jobs_week")),
        )
    )
    series = f.series
    days = [datetime.fromisoformat(d) for d in series.day_starts]
    section.charts.append(
        Chart(
            t("chart_gpu_day"),
            charts.gpu_hours_per_day(days, series.daily_gpu_hours, t("chart_gpu_day")),
        )
    )
    conc = series.concurrency
    section.charts.append(
        Chart(
            t("chart_concurrency"),
            charts.concurrency(
                [datetime.fromisoformat(x) for x in conc.t],
                conc.gpus,
                f.pool_gpus,
                t("chart_concurrency"),
            ),
        )
    )
