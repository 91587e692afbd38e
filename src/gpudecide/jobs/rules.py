"""Decision rules of profile evidence (SPEC C2, D1, D2, D3).

`profile_rules` scores each option's frequency from the team's workload: a dedicated option
by the useful utilisation of its pool (the cost's normal month when the cost priced the
pool, else the profile's own pool over its window), one band lower when the work is bursty
or unpredictable; a managed option by how rare, bursty and unpredictable the work is (D2).
A profile record that names an option describes the part of the work on that option's
platform, not the team's workload: it scores nothing (the frequency is the workload's).

The figures are read with `.get`: the decision reads any record it is given, including one
written by an older gpudecide or by hand, and a missing figure is no finding, never a crash.
Every rule text is a message of the "jobs" catalogue, said in the reader's language.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpudecide import evidence as ev
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.jobs.words import SHAPES, VERDICTS, utilisation_message
from gpudecide.message import Message, english, message

if TYPE_CHECKING:  # the decision passes its context; jobs never imports the decision
    from gpudecide.decision.context import RuleContext

__all__ = ["BUSY_BANDS", "DEDICATED", "Finding", "profile_rules"]

Finding = Suggestion | StopFactor
DEDICATED = ("owned", "rented")

# Useful utilisation of a dedicated pool -> frequency score (SPEC C2, D1: "a steady queue
# keeps GPUs busy"). Below 10 % a pool mostly waits for work.
BUSY_BANDS = ((0.6, 5), (0.4, 4), (0.2, 3), (0.1, 2), (0.0, 1))


def _word(words: dict[str, str], value: object) -> Message | str:
    """A word of the figures (a shape, a verdict) as a message, else as written."""
    text = str(value)
    return message("jobs", words[text]) if text in words else text


def _suggest(
    option: str, criterion: str, score: int, msg: Message, cited: tuple[str, ...]
) -> Suggestion:
    return Suggestion(option, criterion, score, english(msg), cited, rule_message=msg)


def _band(value: float) -> int:
    return next(score for floor, score in BUSY_BANDS if value >= floor)


def _cost_options(ctx: RuleContext) -> dict[str, dict[str, Any]]:
    cost = ctx.newest.get("cost")
    return {o["id"]: o for o in cost.figures.get("options", [])} if cost else {}


def _profile_utilisation(f: dict[str, Any]) -> Message:
    """The profile's useful utilisation, named with its pool and window."""
    gpus, window = f.get("pool_gpus"), f.get("window")
    weeks = window.get("weeks") if isinstance(window, dict) else None
    if isinstance(gpus, int) and isinstance(weeks, int):
        return utilisation_message("useful", gpus, weeks)
    if isinstance(gpus, int):  # a record that does not say its window
        return message("jobs", "useful utilisation of the {gpus}-GPU pool", gpus=gpus)
    return message("jobs", "useful utilisation (no pool size: profile.pool_gpus)")


def profile_rules(record: ev.Evidence, ctx: RuleContext) -> list[Finding]:
    """Frequency of every option from the team's workload profile (D1, D2); a profile of
    one option's logs scores nothing."""
    f = record.figures
    if f.get("option") is not None:
        return []
    shape = (f.get("burstiness") or {}).get("shape")
    pred = (f.get("predictability") or {}).get("verdict")
    irregular = shape == "bursty" or pred == "unpredictable"
    out: list[Finding] = []
    priced = _cost_options(ctx)
    cost = ctx.newest.get("cost")
    for opt in ctx.options:
        if opt.kind in DEDICATED:
            normal = (priced.get(opt.id) or {}).get("regimes", {}).get("normal", {})
            share = normal.get("useful_utilisation")
            cited: tuple[str, ...] = (record.id,)
            if share is not None and cost is not None:
                cited = (record.id, cost.id)
                basis = message("jobs", "useful utilisation in the normal month")
            else:
                share = f.get("busy_share")
                basis = _profile_utilisation(f)
            if share is None:
                continue
            score = _band(float(share))
            if irregular and score > 1:
                score -= 1
            msg = message(
                "jobs",
                "{basis} {share:pct}: bands >=60 % 5, >=40 % 4, >=20 % 3, >=10 % 2, else 1; "
                "minus 1 as the work is {shape}, {predictability}",
                basis=basis,
                share=float(share),
                shape=_word(SHAPES, shape),
                predictability=_word(VERDICTS, pred),
            )
            out.append(_suggest(opt.id, "frequency", score, msg, cited))
        elif opt.kind == "managed":
            busy = f.get("busy_share")
            rare = busy is not None and float(busy) < 0.2
            score = 5 if irregular and rare else 4 if irregular or rare else 2
            msg = message(
                "jobs",
                "work is {shape}, {predictability}, {basis} {busy:pct}: rare or bursty runs "
                "suit a managed endpoint (D2): both 5, one 4, neither 2",
                shape=_word(SHAPES, shape),
                predictability=_word(VERDICTS, pred),
                basis=_profile_utilisation(f),
                busy=None if busy is None else float(busy),
            )
            out.append(_suggest(opt.id, "frequency", score, msg, (record.id,)))
    return out
