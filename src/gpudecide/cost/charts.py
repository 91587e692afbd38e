"""Cost charts as inline SVG (the conventions of report/charts.py: Agg, text as text, no fetch).

- stacked bars: each C1 component, per option and month;
- cost per useful GPU-hour against the dedicated pool's useful utilisation, with the
  break-even points and the observed utilisation marked (C8);
- a tornado: how far each input, moved -20 % / +20 %, moves the decision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.patches import Patch

from gpudecide.cost.figures import BreakEven, Curve
from gpudecide.cost.words import component_name
from gpudecide.fmt import num, pct, pct0
from gpudecide.i18n import N_, translator
from gpudecide.report.charts import figure_svg

__all__ = [
    "COMPONENT_COLOURS",
    "REGIME_MARKS",
    "stacked_components",
    "tornado",
    "utilisation_curves",
]

_ = translator("cost")

COMPONENT_COLOURS = {
    "compute": "#1f77b4",
    "storage": "#ff7f0e",
    "data_transfer": "#17becf",
    "platform_ops": "#9467bd",
    "engineer_labour": "#2ca02c",
    "waiting_cost": "#d62728",
}
# The one-letter marks of the three months under the bars (the legend in the title explains
# them: "(N normal, P peak, E empty)").
REGIME_MARKS = {"normal": N_("N"), "peak": N_("P"), "empty": N_("E")}


def _mark(regime: str) -> str:
    return _(REGIME_MARKS[regime]) if regime in REGIME_MARKS else regime[:1].upper()


def _ticks(value: float) -> str:
    return num(Decimal(str(round(value))), 0)


def stacked_components(
    data: Mapping[str, Mapping[str, Mapping[str, float]]],
    components: Sequence[str],
    regimes: Sequence[str],
    currency: str,
    title: str,
) -> str:
    """Bars per option and month (N, P, E), each stacked by C1 component."""
    options = list(data)
    width = max(7.5, 1.2 * len(options) * len(regimes) / 3 + 2)
    fig, ax = plt.subplots(figsize=(width, 3.6))
    group = len(regimes) + 1
    xs = [i * group + j for i in range(len(options)) for j in range(len(regimes))]
    bottoms = [0.0] * len(xs)
    for comp in components:
        heights = [data[o][r].get(comp, 0.0) for o in options for r in regimes]
        if not any(heights):
            continue
        ax.bar(
            xs,
            heights,
            bottom=bottoms,
            width=0.85,
            label=component_name(comp),
            color=COMPONENT_COLOURS.get(comp),
        )
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    ax.set_xticks(xs, [_mark(r) for _o in options for r in regimes])
    for i, option in enumerate(options):
        ax.annotate(
            option,
            xy=(i * group + (len(regimes) - 1) / 2, 0),
            xycoords=("data", "axes fraction"),
            xytext=(0, -22),
            textcoords="offset points",
            ha="center",
            va="top",
        )
    ax.margins(y=0.08)
    ax.set_ylabel(_("{currency} per month").format(currency=currency))
    ax.yaxis.set_major_formatter(lambda v, _pos: _ticks(v))
    ax.set_title(title + "  " + _("(N normal, P peak, E empty)"), loc="left")
    ax.legend(ncols=6, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(0, -0.16))
    return figure_svg(fig, title)


def utilisation_curves(
    curves: Sequence[Curve],
    break_even: Sequence[BreakEven],
    currency: str,
    title: str,
) -> str:
    """Cost per useful GPU-hour against useful utilisation, one panel per dedicated option."""
    fig, axes = plt.subplots(len(curves), 1, figsize=(7.5, 2.9 * len(curves)), squeeze=False)
    for ax, curve in zip(axes[:, 0], curves, strict=True):
        xs = [100 * (u or 0.0) for u in curve.useful_utilisation]
        dedicated = curve.dedicated
        for i, (oid, ys) in enumerate(curve.cost_per_useful_gpu_hour.items()):
            ax.plot(
                xs,
                [float(y) for y in ys],
                label=oid,
                linestyle="-" if oid == dedicated else "--",
                linewidth=1.8 if oid == dedicated else 1.2,
                color=f"C{i}",
            )
        crossings = [
            p
            for p in break_even
            if p.dedicated == dedicated
            and p.dedicated_cheaper in ("above", "below")
            and p.break_even_useful_utilisation is not None
        ]
        for k, pair in enumerate(crossings):
            u = pair.break_even_useful_utilisation or 0.0
            x = 100 * u
            own = [float(v) for v in curve.cost_per_useful_gpu_hour[dedicated]]
            y = _interpolate(xs, own, x)
            ax.plot([x], [y], marker="o", color="black", markersize=4)
            ax.annotate(
                f"{pair.managed}: {pct(u)}",
                xy=(x, y),
                xytext=(4, 6 + 11 * k),  # stacked: break-evens are often close
                textcoords="offset points",
                fontsize=8,
            )
        observed = curve.observed_normal
        if observed is not None:
            ax.axvline(100 * observed, color="#d62728", linestyle=":", linewidth=1)
            ax.annotate(
                _("observed {share}").format(share=pct(observed)),
                xy=(100 * observed, 1),
                xycoords=("data", "axes fraction"),
                xytext=(3, -10),
                textcoords="offset points",
                color="#d62728",
                fontsize=8,
            )
        ax.set_yscale("log")
        ax.set_xlabel(
            _("useful utilisation of {option} ({gpus} GPUs), %").format(
                option=dedicated, gpus=curve.pool_gpus
            )
        )
        ax.set_ylabel(_("{currency} per useful GPU-hour").format(currency=currency))
        ax.legend(fontsize=8, frameon=False)
    axes[0, 0].set_title(title, loc="left")
    fig.tight_layout()
    return figure_svg(fig, title)


def _interpolate(xs: Sequence[float], ys: Sequence[float], x: float) -> float:
    """The curve's value at x (linear between samples; ends held)."""
    if x <= xs[0]:
        return ys[0]
    for i in range(1, len(xs)):
        if x <= xs[i]:
            x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return ys[-1]


def tornado(
    rows: Sequence[Mapping[str, Any]],
    baseline: float,
    measure: str,
    step: float,
    currency: str,
    title: str,
) -> str:
    """Horizontal bars from the baseline to the value after -step (left colour) and +step."""
    rows = list(rows)[::-1]  # largest swing on top
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(rows) + 1.4))
    sides = (
        ("low", "#4c78a8", f"-{pct0(step)}"),
        ("high", "#f58518", f"+{pct0(step)}"),
    )
    for i, row in enumerate(rows):
        for side, colour, _text in sides:
            value = row.get(side)
            if value is not None:
                ax.barh(i, value - baseline, left=baseline, color=colour, height=0.6)
    ax.set_yticks(range(len(rows)), [row["input"] for row in rows], fontsize=8)
    ax.axvline(baseline, color="black", linewidth=0.8)
    if measure == "gap":
        ax.axvline(0, color="#d62728", linestyle="--", linewidth=1)
        ax.set_xlabel(
            _(
                "lead of the cheapest option over the next, {currency} per month "
                "(below 0: another option is cheapest)"
            ).format(currency=currency)
        )
    else:
        ax.set_xlabel(_("monthly cost of the option, {currency}").format(currency=currency))
    ax.xaxis.set_major_formatter(lambda v, _pos: _ticks(v))
    ax.set_title(title, loc="left")
    ax.legend(
        handles=[Patch(color=colour, label=text) for _side, colour, text in sides],
        fontsize=8,
        frameon=False,
        loc="lower right",
    )
    return figure_svg(fig, title)
