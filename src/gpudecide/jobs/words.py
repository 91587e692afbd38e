"""What the log commands say about a profile and a log, in the reader's language.

The profile's figures keep its words in English (a shape, a verdict and what it means,
`SHAPES`, `VERDICTS`, `MEANINGS` below, which `jobs.profile` writes); these functions say
them, the job
reconciliation (SPEC F1, Q1) and the rows a command skipped, where they are shown: in
`profile`, in `queue` and in the report. Numbers follow the reader's locale
(`gpudecide.fmt`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gpudecide import fmt
from gpudecide.i18n import N_, translator
from gpudecide.jobs.figures import reconciliation_message
from gpudecide.message import Message, is_message, message, render

if TYPE_CHECKING:
    from gpudecide.jobs.profile_figures import Predictability, Reconciliation

__all__ = [
    "MEANINGS",
    "SHAPES",
    "VERDICTS",
    "figure",
    "meaning_text",
    "reconciliation_text",
    "shape_word",
    "skipped_lines",
    "utilisation_message",
    "utilisation_name",
    "verdict_word",
    "wape_text",
]

_ = translator("jobs")
_n = _.n

# The words the profile writes into its figures (F2 shape, F3 verdict and what it means), as
# catalogue msgids: the figures keep the English, a reader is shown them translated.
SHAPES = {"no load": N_("no load"), "bursty": N_("bursty"), "steady": N_("steady")}
VERDICTS = {
    "not measurable": N_("not measurable"),
    "predictable": N_("predictable"),
    "partly predictable": N_("partly predictable"),
    "unpredictable": N_("unpredictable"),
}
# `{share}`: the predictable WAPE band as a whole percentage.
MEANINGS = {
    "not measurable": N_("no GPU-hours after the first week of the window"),
    "predictable": N_(
        "last week's load predicts the next within {share}: capacity can be planned; renting "
        "per job adds coordination overhead"
    ),
    "partly predictable": N_("load drifts week to week: plan a base, keep headroom for the rest"),
    "unpredictable": N_(
        "tomorrow's pool load cannot be told from last week's: buying permanent capacity is "
        "premature"
    ),
}


def figure(value: Any) -> str:
    """A figure as the analysis wrote it, with the reader's number signs; n/a when absent."""
    return fmt.not_available() if value is None else fmt.digits(str(value))


def shape_word(shape: str) -> str:
    """The workload's shape (F2) in the reader's language."""
    return _(SHAPES.get(shape, shape))


def verdict_word(verdict: str) -> str:
    """The predictability verdict (F3) in the reader's language."""
    return _(VERDICTS.get(verdict, verdict))


def meaning_text(predictability: Predictability) -> str:
    """What the predictability verdict means for capacity (F3), in the reader's language."""
    template = MEANINGS.get(predictability.verdict)
    if template is None:
        return predictability.meaning
    share = predictability.thresholds.predictable_wape_max
    return _(template).format(share=fmt.pct0(share))


def utilisation_message(measure: str, gpus: int, weeks: int) -> Message:
    """The name of a utilisation the profile shows, with its pool and window (C2), as a
    message: useful (GPU-hours of completed attempts) or occupied (of every attempt, lost
    ones included), over the pool's GPU-hours around the clock. Every utilisation of the
    profile is named here (its lines, its report rows, its decision rules), so that none is
    read for another (the cost's months, a replay's window)."""
    if measure == "occupied":
        return message(
            "jobs",
            "occupied utilisation of the {gpus}-GPU pool over the {weeks}-week window",
            gpus=gpus,
            weeks=weeks,
        )
    return message(
        "jobs",
        "useful utilisation of the {gpus}-GPU pool over the {weeks}-week window",
        gpus=gpus,
        weeks=weeks,
    )


def utilisation_name(measure: str, gpus: int, weeks: int) -> str:
    """`utilisation_message` said in the reader's language."""
    return render(utilisation_message(measure, gpus, weeks))


def wape_text() -> str:
    """What WAPE measures, in plain words, for where it is first shown (F3)."""
    return _(
        'WAPE (weighted absolute percentage error): how far the forecast "next week = this '
        'week" missed, summed over the weeks, as a share of the GPU-hours used; 0 is a '
        "perfect forecast"
    )


def reconciliation_text(r: Reconciliation | Mapping[str, int]) -> str:
    """Every job of the log in one sentence (F1, Q1), as `profile` and `queue` print it
    (`queue` passes the figures of its own record)."""
    # A mapping as given, else the figures' model (not imported here: the words stay light).
    counts = dict(r) if isinstance(r, Mapping) else r.model_dump()
    return render(reconciliation_message(counts))


def skipped_lines(f: Mapping[str, Any]) -> list[str]:
    """The malformed rows a log command skipped (--skip-bad-rows), ten at most: where, the
    log's own column name and why. `f`: the figures of a profile or a queue record
    (`skipped_rows`, `skipped`: the shape both write; a row without a message is said as
    its English reason). The column is the log's word, as the log writes it: English shows
    it bare, a translation may set it off as a name (`State`)."""
    n = f["skipped_rows"]
    if not n:
        return []
    lines = [
        _n("{n} malformed row skipped:", "{n} malformed rows skipped:", n).format(n=fmt.fmt(n))
    ]
    for b in f["skipped"][:10]:
        said = b.get("message")
        reason = render(said) if is_message(said) else str(b["reason"])
        where = f"{b['path']}:{b['line']}"
        if b["field"]:
            text = _("{where}: {column} {reason}").format(
                where=where, column=b["field"], reason=reason
            )
        else:
            text = _("{where}: {reason}").format(where=where, reason=reason)
        lines.append(f"  {text}")
    return lines
