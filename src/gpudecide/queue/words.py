"""The names of the queue's schema values as a person reads them (domain "queue").

The analyses write ids (`queue_wait`, `array_limit`, `node_fail`); a table here maps each to
an English msgid, translated where it is shown. `word` says one now (a table cell, a command's
line), `word_message` stores one inside a sentence (a record's summary, a finding), so that it
is said in the reader's language when the sentence is. An id no table knows (a newer
analysis, a scheduler's own word) is shown as it is.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpudecide.fmt import digits
from gpudecide.i18n import N_, translator
from gpudecide.message import Message, message, nmessage

__all__ = [
    "CATEGORIES",
    "CAUSES",
    "LOST_BY",
    "NONE_GIVEN",
    "PHASES",
    "RECONCILIATION",
    "RESTART_VERDICTS",
    "UNITS",
    "VERDICTS",
    "WINDOWS",
    "WINDOW_NAMES",
    "cannot_hold",
    "duration",
    "jobs_by_gpus",
    "reason",
    "replay_window",
    "word",
    "word_message",
    "yes_no",
]

_ = translator("queue")

# Lifecycle phases (SPEC Q1; `lifecycle.PHASES`).
PHASES: dict[str, str] = {
    "not_eligible": N_("not eligible"),
    "queue_wait": N_("queue wait"),
    "prep": N_("preparation"),
    "startup": N_("start-up"),
    "run": N_("run"),
    "since_checkpoint": N_("since checkpoint"),
    "end_to_end": N_("end to end"),
}
# Wait-reason categories (Q2; `lifecycle.REASON_CATEGORIES`, "unknown" without a reason).
CATEGORIES: dict[str, str] = {
    "capacity": N_("capacity"),
    "array_limit": N_("array limit"),
    "quota": N_("quota"),
    "constraints": N_("constraints"),
    "unknown": N_("unknown"),
    "begin_time": N_("begin time"),
    "dependency": N_("dependency"),
    "hold": N_("held"),
    "other": N_("other"),
}
# Who can act on an SLO violation (`slo.CAUSES`).
CAUSES: dict[str, str] = {
    "capacity": N_("capacity"),
    "own_limits": N_("own limits"),
    "team_choice": N_("team choice"),
    "other": N_("other"),
}
# Every job of the log in one group (`jobs.figures.reconciliation`).
RECONCILIATION: dict[str, str] = {
    "total": N_("total"),
    "gpu_jobs": N_("gpu jobs"),
    "cpu_only": N_("cpu only"),
    "no_gpu_information": N_("no gpu information"),
    "never_started": N_("never started"),
    "pending": N_("pending"),
}
# The replay's window (the busiest weeks or the whole log).
WINDOWS: dict[str, str] = {"peak": N_("peak"), "full": N_("full")}
# The same window named on its own ("the peak window").
WINDOW_NAMES: dict[str, str] = {"peak": N_("peak window"), "full": N_("full window")}
# An SLO's verdict and its point estimate (Q3).
VERDICTS: dict[str, str] = {
    "pass": N_("pass"),
    "fail": N_("fail"),
    "inconclusive": N_("inconclusive"),
    "not measurable": N_("not measurable"),
}
# How a re-run after a lost run is judged (G1; `restarts`).
RESTART_VERDICTS: dict[str, str] = {
    "restarted_from_zero": N_("restarted from zero"),
    "resumed": N_("resumed"),
    "unclear": N_("unclear"),
}
# How a run was lost (`restarts.LOST_STATES`).
LOST_BY: dict[str, str] = {
    "node_fail": N_("node failure"),
    "preempted": N_("preempted"),
    "timeout": N_("time limit"),
    "requeued": N_("requeued"),
}
# A wait or run time in the unit that reads best (`duration`).
UNITS: dict[str, str] = {"s": N_("{n}s"), "m": N_("{n}m"), "h": N_("{n}h"), "d": N_("{n}d")}
# The wait reason `lifecycle.wait_reasons` writes for waits the scheduler gave none for.
NONE_GIVEN = N_("(none given)")
_YES_NO = {True: N_("yes"), False: N_("no")}


def word(table: Mapping[str, str], key: str) -> str:
    """The name of the id `key` in the reader's language (the id itself when unknown)."""
    return _(table[key]) if key in table else key


def word_message(table: Mapping[str, str], key: str) -> Message | str:
    """The name of the id `key` as a message to nest in a stored sentence (the id itself,
    as written, when unknown)."""
    return message("queue", table[key]) if key in table else key


def yes_no(value: bool) -> Message:
    """Yes or no, as a message to nest in a stored sentence."""
    return message("queue", _YES_NO[bool(value)])


def reason(text: str) -> str:
    """A scheduler's wait reason as written, or the words for "none given"."""
    return _(NONE_GIVEN) if text == NONE_GIVEN else text


def duration(seconds: float) -> str:
    """A wait or run time in the unit that reads best: 45s, 12m, 3.5h, 2.5d."""
    if seconds < 120:
        n, unit = f"{seconds:.0f}", "s"
    elif seconds < 7200:
        n, unit = f"{seconds / 60:.0f}", "m"
    elif seconds < 172800:
        n, unit = f"{seconds / 3600:.1f}", "h"
    else:
        n, unit = f"{seconds / 86400:.1f}", "d"
    return _(UNITS[unit]).format(n=digits(n))


def replay_window(kind: str, start: str | None = None, end: str | None = None) -> Message:
    """The window a replay ran, with its dates ("replay of the peak window, 2026-06-01 to
    2026-06-27")."""
    window = word_message(WINDOW_NAMES, kind)
    if not start or not end:
        return message("queue", "replay of the {window}", window=window)
    return message(
        "queue",
        "replay of the {window}, {start} to {end}",
        window=window,
        start=start[:10],
        end=end[:10],
    )


def jobs_by_gpus(counts: list[tuple[int, int]]) -> Message | str:
    """Jobs by the GPUs each needs ("3 jobs of 8 GPUs, 1 job of 16 GPUs")."""
    parts: list[Message] = [
        nmessage("queue", "{n} job of {gpus} GPUs", "{n} jobs of {gpus} GPUs", n=n, gpus=g)
        for g, n in counts
    ]
    if not parts:
        return ""
    joined = parts[0]
    for part in parts[1:]:
        joined = message("queue", "{head}, {tail}", head=joined, tail=part)
    return joined


def cannot_hold(never: int, counts: list[tuple[int, int]] | None) -> str:
    """The jobs a pool cannot hold, for a table cell whose heading names them: how many by
    the GPUs they need ("2 of 8 GPUs, 1 of 16 GPUs"), or only how many for a record written
    before the GPU counts were kept."""
    if not never:
        return digits("0")
    if not counts:
        return digits(str(never))
    return ", ".join(
        _("{n} of {gpus} GPUs").format(n=digits(str(n)), gpus=digits(str(g))) for g, n in counts
    )
