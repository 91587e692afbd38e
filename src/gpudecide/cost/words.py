"""The words of the cost analysis: names of the schema's values and the counted nouns its
sentences are built from.

- Names a table column or a sentence shows for a value of the schema (a month, a C1
  component, an option type, how a dedicated option compares with a managed one): tables of
  `N_()` msgids of the "cost" catalogue, said with `word`.
- Counted nouns ("2 attempts", "0.45 GPU-hours", "28 days"): plural messages nested in the
  sentences that show them, so every language gives the noun the form its count needs
  ("0,45 GPU-часа", "5 GPU-часов").
- Figures go into a message as JSON numbers rounded the way the sentence shows them
  (`figure`, `share`): the record keeps the figure a person reads, and `{x:num}` / `{x:pct}`
  format it for the reader's locale.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from gpudecide.i18n import N_, translator
from gpudecide.message import Message, message, nmessage, render

if TYPE_CHECKING:
    from gpudecide.cost.figures import OptionFigures

__all__ = [
    "CHEAPER",
    "COMPONENT_NAMES",
    "OPTION_TYPES",
    "PEAK_OUTCOMES",
    "REGIME_MONTHS",
    "WINDOWS",
    "attempts",
    "component_name",
    "days",
    "figure",
    "gpu_hours",
    "gpus",
    "log_window",
    "month_window",
    "month_word",
    "months",
    "replay_window",
    "servers",
    "share",
    "share_cell",
    "share_of",
    "trainings",
    "utilisation",
    "utilisation_figure",
    "weeks",
    "window_word",
    "word",
]

_ = translator("cost")

# The three months of the analysis (SPEC C8).
REGIME_MONTHS = {
    "normal": N_("normal month"),
    "peak": N_("peak month"),
    "empty": N_("empty month"),
}
# The C1 components.
COMPONENT_NAMES = {
    "compute": N_("compute"),
    "storage": N_("storage"),
    "data_transfer": N_("data transfer"),
    "platform_ops": N_("platform ops"),
    "engineer_labour": N_("engineer labour"),
    "waiting_cost": N_("waiting cost"),
}
# Option kinds, as the table's "type" column names them.
OPTION_TYPES = {
    "owned": N_("owned"),
    "rented": N_("rented"),
    "managed": N_("managed"),
    "hybrid": N_("hybrid"),
}
# Where a dedicated option is cheaper than a managed one as its utilisation grows.
CHEAPER = {
    "above": N_("above"),
    "below": N_("below"),
    "never": N_("never"),
    "always": N_("always"),
}
# The window of the job log a pool replay ran (`gpudecide replay`).
WINDOWS = {
    "full": N_("full window"),
    "peak": N_("peak window"),
}
# What the peak check found (SPEC C8): the pool takes the peak month, does not (jobs wait
# longer than the SLO allows), cannot (jobs larger than the pool), the evidence disagrees or
# cannot say (unsettled), or nothing measured it.
PEAK_OUTCOMES = {
    "absorbed": N_("absorbed"),
    "not_absorbed": N_("not absorbed"),
    "never_fits": N_("jobs never fit"),
    "unsettled": N_("unsettled"),
    "not_measured": N_("not measured"),
}


def word(table: dict[str, str], key: str) -> str:
    """The name of a known value in the reader's language; an unknown one as it is."""
    return _(table[key]) if key in table else key


def component_name(component: str) -> str:
    """A C1 component's name in the reader's language (an unknown one with spaces for
    underscores)."""
    return _(COMPONENT_NAMES.get(component, component.replace("_", " ")))


def month_word(regime: str) -> Message:
    """The name of a month ("normal month") as a message, a word inside a sentence."""
    return message("cost", REGIME_MONTHS.get(regime, regime))


def window_word(kind: object) -> Message:
    """The window a replay ran, as a message ("peak window")."""
    known = WINDOWS.get(str(kind))
    return message("cost", known) if known else message("cost", "{kind} window", kind=kind)


# --- utilisation: one name for every share of GPU-hours (SPEC C2) ---
#
# A share of GPU-hours means nothing without what was counted (useful: completed attempts;
# occupied: every attempt, lost ones included), of which hours (a pool's, around the clock;
# the GPU-hours a managed service billed; both for a hybrid) and over which window. Every
# table and sentence of the cost analysis names its shares here, so the same 8-GPU pool's
# 3.3 % in the normal month, 7.1 % in the peak month and 13.2 % in a replay read as three
# different figures, each with what it is.


def month_window(regime: str, span: list[int] | None = None) -> Message:
    """A month of the analysis as a window ("normal month (weeks 5-8)")."""
    month = month_word(regime)
    if not span or len(span) != 2:
        return month
    return message(
        "cost", "{month} (weeks {first}-{last})", month=month, first=span[0], last=span[1]
    )


def log_window(n_weeks: int | float) -> Message:
    """The whole profiled log as a window ("whole log, 8 weeks")."""
    return message("cost", "whole log, {weeks}", weeks=weeks(Decimal(str(n_weeks))))


def replay_window(kind: object, start: str | None = None, end: str | None = None) -> Message:
    """The window a replay ran, with its dates when known ("replay of the peak window,
    2026-06-01 to 2026-06-27")."""
    window = window_word(kind)
    if not start or not end:
        return message("cost", "replay of the {window}", window=window)
    return message(
        "cost",
        "replay of the {window}, {start} to {end}",
        window=window,
        start=start[:10],
        end=end[:10],
    )


def utilisation(
    measure: str, of: str, window: Message, *, gpus: int | None = None, overflow: str = ""
) -> Message:
    """The name of a share of GPU-hours: what was counted (`measure`: useful | occupied), of
    which hours (`of`: pool | billed | paid) and over which `window`.

    pool: a dedicated pool's GPU-hours around the clock (the useful one is C2's useful
    utilisation); billed: the GPU-hours a managed service billed (job time, start-up, data
    loading, the billing increment), not a utilisation; paid: a hybrid's base pool and the
    GPU-hours its overflow billed.
    """
    if of == "billed":
        return message("cost", "useful share of billed GPU-hours, {window}", window=window)
    if of == "paid":
        return message(
            "cost",
            "useful share of paid GPU-hours ({gpus}-GPU base pool and the hours {option} "
            "billed), {window}",
            gpus=gpus,
            option=overflow,
            window=window,
        )
    if measure == "occupied":
        return message(
            "cost",
            "occupied utilisation of the {gpus}-GPU pool, {window}",
            gpus=gpus,
            window=window,
        )
    return message(
        "cost", "useful utilisation of the {gpus}-GPU pool, {window}", gpus=gpus, window=window
    )


def utilisation_figure(name: Mapping[str, Any], value: float | None) -> Message:
    """A named share with its value ("useful utilisation of the 8-GPU pool, normal month
    (weeks 5-8): 3.3%")."""
    return message("cost", "{name}: {share:pct}", name=name, share=value)


def share_cell(of: str, value: float | None, pool_gpus: int | None = None) -> Message:
    """A share in a table cell whose column names the measure and the window: what it is a
    share of ("3.3% of 8 GPUs", "53.8% of billed GPU-h")."""
    if of == "billed":
        return message("cost", "{share:pct} of billed GPU-h", share=value)
    if of == "paid":
        return message("cost", "{share:pct} of paid GPU-h", share=value)
    return message("cost", "{share:pct} of {gpus}", share=value, gpus=gpus(pool_gpus or 0))


# --- figures as message arguments ---


def figure(value: Decimal, places: int = 2) -> float | int:
    """A figure rounded half up to `places` (as `gpudecide.fmt.num` shows it), JSON-ready."""
    q = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return int(q) if places <= 0 else float(q)


def share(value: Decimal, places: int = 1) -> float:
    """A share shown as a percentage with `places` decimals, rounded where a Decimal's own
    `{:.1%}` rounds it (half to even), JSON-ready."""
    return float(value.quantize(Decimal(1).scaleb(-(places + 2)), rounding=ROUND_HALF_EVEN))


# --- counted nouns ---


def _count(n: Decimal | float) -> float | int:
    """A computed count rounded to two decimals; a figure of a record as it is stored."""
    return figure(n) if isinstance(n, Decimal) else n


def attempts(n: Decimal | float) -> Message:
    """Job starts in a month, an average ("2 attempts")."""
    return nmessage("cost", "{n:num} attempt", "{n:num} attempts", n=_count(n))


def trainings(n: Decimal | float) -> Message:
    """Training jobs in a month, an average ("1 trainings": English reads "trainings" for any
    count, as these lines always have)."""
    return nmessage("cost", "{n:num} trainings", "{n:num} trainings", n=_count(n))


def gpus(n: Decimal | int) -> Message:
    """A pool's size, or the mean GPUs an attempt holds ("8 GPUs")."""
    return nmessage("cost", "{n:num} GPU", "{n:num} GPUs", n=_count(n))


def servers(n: int) -> Message:
    """GPU servers of an owned pool ("2 server(s)": English keeps "(s)", as the power line
    always has)."""
    return nmessage("cost", "{n} server(s)", "{n} server(s)", n=n)


def gpu_hours(n: Decimal | float) -> Message:
    """GPU-hours ("0.2 GPU-hours")."""
    return nmessage("cost", "{n:num} GPU-hour", "{n:num} GPU-hours", n=_count(n))


def days(n: int) -> Message:
    """Days ("28 days")."""
    return nmessage("cost", "{n} day", "{n} days", n=n)


def weeks(n: Decimal) -> Message:
    """Weeks ("4 weeks")."""
    return nmessage("cost", "{n:num} week", "{n:num} weeks", n=_count(n))


def months(n: int) -> Message:
    """Months ("24 months")."""
    return nmessage("cost", "{n} month", "{n} months", n=n)


def share_of(o: OptionFigures, value: float | None) -> str:
    """A share of one option's GPU-hours in a table cell, with what it is a share of (the
    pool and its size, billed or paid GPU-hours)."""
    of = {"managed": "billed", "hybrid": "paid"}.get(o.type, "pool")
    return render(share_cell(of, value, o.pool_gpus))
