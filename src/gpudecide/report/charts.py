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
from matplotlib.figure import Figure

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


def _svg(fig: Figure, title: str) -> str:
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
    ax.set_ylabel("jobs")
    ax.set_title(title, loc="left")
    ax.legend(ncols=4, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(0, -0.12))
    ax.tick_params(axis="x", labelrotation=30)
    return _svg(fig, title)


def _dates(values: Sequence[datetime]) -> Any:
    """Datetimes as matplotlib date numbers (typed entry point of matplotlib.dates)."""
    return mdates.date2num(list(values))  # type: ignore[no-untyped-call]


def _date_axis(ax: Any) -> None:
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%d %b"))  # type: ignore[no-untyped-call]


def gpu_hours_per_day(days: Sequence[datetime], hours: Sequence[float], title: str) -> str:
    """Bars: GPU-hours in use per day."""
    fig, ax = plt.subplots(figsize=(7.5, 2.6))
    ax.bar(_dates(days), list(hours), width=0.9, color="#1f77b4", align="edge")
    ax.set_ylabel("GPU-hours")
    ax.set_title(title, loc="left")
    _date_axis(ax)
    return _svg(fig, title)


def concurrency(
    times: Sequence[datetime], gpus: Sequence[int], pool_gpus: int | None, title: str
) -> str:
    """Step line: GPUs in use over time, with the pool size drawn when one is given."""
    fig, ax = plt.subplots(figsize=(7.5, 2.6))
    ax.step(_dates(times), list(gpus), where="post", color="#1f77b4", linewidth=1)
    if pool_gpus:
        ax.axhline(pool_gpus, color="#d62728", linestyle="--", linewidth=1)
        ax.annotate(
            f"pool {pool_gpus} GPUs",
            xy=(float(_dates(times[:1])[0]), pool_gpus),
            xytext=(2, 2),
            textcoords="offset points",
            color="#d62728",
        )
    ax.set_ylabel("GPUs in use")
    ax.set_title(title, loc="left")
    _date_axis(ax)
    return _svg(fig, title)
