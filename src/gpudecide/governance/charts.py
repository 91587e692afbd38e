"""The isolation chart: per option, how many boundaries rest on evidence, on a claim, or are
open (SPEC I3, I6), as stacked horizontal bars in inline SVG."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt

from gpudecide.report.charts import figure_svg

__all__ = [
    "STATUS_COLOURS",
    "boundary_status",
]

STATUS_COLOURS = {
    "evidenced": "#2ca02c",
    "claimed": "#ffbb78",
    "open": "#d62728",
    "not_checked": "#c7c7c7",
}


def boundary_status(
    options: Sequence[str],
    counts: Mapping[str, Sequence[int]],
    labels: Mapping[str, str],
    title: str,
) -> str:
    """Stacked bars: boundaries per option by status (evidenced, claimed, open, not checked;
    a status without counts is drawn as zero)."""
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(options) + 1.0))
    left = [0] * len(options)
    for status, colour in STATUS_COLOURS.items():
        values = list(counts.get(status, [0] * len(options)))
        ax.barh(list(options), values, left=left, color=colour, label=labels.get(status, status))
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel(labels["axis"])
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    ax.set_title(title)
    return figure_svg(fig, title)
