"""Charts as inline SVG strings (matplotlib, Agg, no fonts or scripts fetched: works offline)."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
from babel.dates import format_date
from matplotlib.figure import Figure

from gpudecide.i18n import babel_locale, current_language, translator
from gpudecide.report.i18n import N_

__all__ = [
    "KIND_COLOURS",
    "PHASE_COLOURS",
    "PHASE_NAMES",
    "chain_gantt",
    "concurrency",
    "figure_svg",
    "gpu_hours_per_day",
    "jobs_per_week",
    "phase_bars",
    "pool_curve",
    "wait_cdf",
]


_ = translator("report")

# Text stays text (searchable, small); ids are deterministic so reports diff cleanly.
matplotlib.rcParams.update(
    {
        "svg.fonttype": "none",
        "svg.hashsalt": "gpudecide",
        "font.family": "sans-serif",
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
    }
)

KIND_COLOURS = {
    "train": "#1f77b4",
    "smoke": "#aec7e8",
    "restart": "#d62728",
    "eval": "#2ca02c",
    "merge": "#9467bd",
    "quantize": "#8c564b",
    "export": "#e377c2",
    "other": "#7f7f7f",
}


def figure_svg(fig: Figure, title: str) -> str:
    """A matplotlib figure as inline SVG, named by `title` for screen readers (and for the
    tests that look charts up by it); the figure is closed."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    # Accessible name for screen readers and for tests that look charts up by title.
    return re.sub(r"<svg ", f'<svg role="img" aria-label="{_attr(title)}" ', text, count=1)


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def jobs_per_week(labels: Sequence[str], by_kind: Mapping[str, Sequence[int]], title: str) -> str:
    """Stacked bars: jobs started per week, one colour per kind."""
    fig, ax = plt.subplots(figsize=(7.5, 3.0))
    bottom = [0] * len(labels)
    for kind, counts in by_kind.items():
        if not any(counts):
            continue
        ax.bar(labels, counts, bottom=bottom, label=kind, color=KIND_COLOURS.get(kind))
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    ax.set_ylabel(_("jobs"))
    ax.set_title(title, loc="left")
    ax.legend(ncols=4, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(0, -0.12))
    ax.tick_params(axis="x", labelrotation=30)
    return figure_svg(fig, title)


def _dates(values: Sequence[datetime]) -> Any:
    """Datetimes as matplotlib date numbers (typed entry point of matplotlib.dates)."""
    return mdates.date2num(list(values))  # type: ignore[no-untyped-call]


def _date_axis(ax: Any) -> None:
    # Day and month in the reader's language (Babel), not the C locale's English names.
    locale = babel_locale(current_language())
    ax.xaxis.set_major_formatter(
        lambda v, _pos: str(
            format_date(mdates.num2date(v).date(), "d MMM", locale=locale)  # type: ignore[no-untyped-call]
        )
    )


def gpu_hours_per_day(days: Sequence[datetime], hours: Sequence[float], title: str) -> str:
    """Bars: GPU-hours in use per day."""
    fig, ax = plt.subplots(figsize=(7.5, 2.6))
    ax.bar(_dates(days), list(hours), width=0.9, color="#1f77b4", align="edge")
    ax.set_ylabel(_("GPU-hours"))
    ax.set_title(title, loc="left")
    _date_axis(ax)
    return figure_svg(fig, title)


def concurrency(
    times: Sequence[datetime],
    gpus: Sequence[int],
    pool_gpus: int | None,
    title: str,
) -> str:
    """Step line: GPUs in use over time, with the pool size drawn when one is given."""
    fig, ax = plt.subplots(figsize=(7.5, 2.6))
    ax.step(_dates(times), list(gpus), where="post", color="#1f77b4", linewidth=1)
    if pool_gpus:
        ax.axhline(pool_gpus, color="#d62728", linestyle="--", linewidth=1)
        ax.annotate(
            _("pool {gpus} GPUs").format(gpus=pool_gpus),
            xy=(float(_dates(times[:1])[0]), pool_gpus),
            xytext=(2, 2),
            textcoords="offset points",
            color="#d62728",
        )
    ax.set_ylabel(_("GPUs in use"))
    ax.set_title(title, loc="left")
    _date_axis(ax)
    return figure_svg(fig, title)


PHASE_COLOURS = {
    "not_eligible": "#c7c7c7",
    "queue_wait": "#d62728",
    "startup": "#ff7f0e",
    "run": "#1f77b4",
}


def wait_cdf(
    series: Mapping[str, Sequence[float]],
    thresholds: Mapping[str, float],
    title: str,
) -> str:
    """Empirical CDF of waits (hours) per SLO, each threshold drawn as a dashed line."""
    fig, ax = plt.subplots(figsize=(7.5, 3.0))
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    for i, (name, waits) in enumerate(series.items()):
        if not waits:
            continue
        colour = colours[i % len(colours)]
        hours = sorted(w / 3600 for w in waits)
        share = [(k + 1) / len(hours) for k in range(len(hours))]
        ax.step(hours, share, where="post", color=colour, label=name)
        if name in thresholds:
            ax.axvline(thresholds[name] / 3600, color=colour, linestyle="--", linewidth=1)
            ax.annotate(
                _("{name} threshold").format(name=name),
                xy=(thresholds[name] / 3600, 0.02),
                xytext=(3, 0),
                textcoords="offset points",
                color=colour,
                fontsize=7,
                rotation=90,
            )
    ax.set_xlabel(_("wait (hours)"))
    ax.set_ylabel(_("share of jobs"))
    ax.set_ylim(0, 1.02)
    ax.set_title(title, loc="left")
    ax.legend(frameon=False, fontsize=8)
    return figure_svg(fig, title)


PHASE_NAMES = {
    "not_eligible": N_("not eligible"),
    "queue_wait": N_("queue wait"),
    "startup": N_("start-up"),
    "run": N_("run"),
}


def phase_bars(by_kind: Mapping[str, Mapping[str, float | None]], title: str) -> str:
    """Stacked horizontal bars: median hours of each phase per job kind."""
    kinds = list(by_kind)
    fig, ax = plt.subplots(figsize=(7.5, 0.5 + 0.35 * max(len(kinds), 1)))
    left = [0.0] * len(kinds)
    for phase, colour in PHASE_COLOURS.items():
        widths = [(by_kind[k].get(phase) or 0.0) / 3600 for k in kinds]
        name = _(PHASE_NAMES[phase])
        ax.barh(kinds, widths, left=left, color=colour, label=name)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_xlabel(_("median hours"))
    ax.set_title(title, loc="left")
    ax.invert_yaxis()
    ax.legend(ncols=4, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(0, -0.25))
    return figure_svg(fig, title)


def chain_gantt(chains: Sequence[Mapping[str, object]], title: str) -> str:
    """One row per job of each chain: waiting (light) then running (dark), by kind colour."""
    rows: list[tuple[str, datetime, datetime | None, datetime | None, str]] = []
    for chain in chains:
        for job in chain["timeline"]:  # type: ignore[attr-defined]
            if not job["submit"]:
                continue
            parse = datetime.fromisoformat
            rows.append(
                (
                    f"{chain['chain']}: {job['kind']}",
                    parse(job["submit"]),
                    parse(job["start"]) if job["start"] else None,
                    parse(job["end"]) if job["end"] else None,
                    str(job["kind"]),
                )
            )
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.28 * max(len(rows), 1)))
    for y, (_, submit, start, end, kind) in enumerate(rows):
        colour = KIND_COLOURS.get(kind, "#7f7f7f")
        s, st, en = _dates([submit])[0], None, None
        if start is not None:
            st = _dates([start])[0]
            ax.barh(y, st - s, left=s, color=colour, alpha=0.3, height=0.6)
        if start is not None and end is not None:
            en = _dates([end])[0]
            ax.barh(y, en - st, left=st, color=colour, height=0.6)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=7)
    ax.invert_yaxis()
    _date_axis(ax)
    ax.set_title(title, loc="left")
    return figure_svg(fig, title)


def pool_curve(pools: Sequence[Mapping[str, object]], threshold_h: float | None, title: str) -> str:
    """p95 wait (hours) and utilisation against pool size."""
    sizes = [int(p["gpus"]) for p in pools]  # type: ignore[call-overload]
    p95 = [float(p["wait_p95_s"] or 0) / 3600 for p in pools]  # type: ignore[arg-type]
    util = [float(p["utilisation"] or 0) * 100 for p in pools]  # type: ignore[arg-type]
    fig, ax = plt.subplots(figsize=(7.5, 3.0))
    ax.plot(sizes, p95, marker="o", color="#d62728", label=_("p95 wait (h)"))
    if threshold_h is not None:
        ax.axhline(threshold_h, color="#d62728", linestyle="--", linewidth=1)
    ax.set_xlabel(_("pool size (GPUs)"))
    ax.set_ylabel(_("p95 wait (hours)"), color="#d62728")
    right = ax.twinx()
    right.plot(sizes, util, marker="s", color="#1f77b4", label=_("utilisation (%)"))
    right.set_ylabel(_("utilisation (%)"), color="#1f77b4")
    right.set_ylim(0, 100)
    right.spines["right"].set_visible(True)
    ax.set_title(title, loc="left")
    return figure_svg(fig, title)
