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

from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

from gpudecide.i18n import N_, translator
from gpudecide.message import Message, message, nmessage

__all__ = [
    "CHEAPER",
    "COMPONENT_NAMES",
    "OPTION_TYPES",
    "REGIME_MONTHS",
    "WINDOWS",
    "attempts",
    "component_name",
    "days",
    "figure",
    "gpu_hours",
    "gpus",
    "month_word",
    "months",
    "servers",
    "share",
    "trainings",
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
