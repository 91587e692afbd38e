"""Decision rules of the cost evidence (SPEC C1, C8, D3).

- cost: each declared option's normal-month total against the cheapest one's, in the bands
  of COST_BANDS.
- scale: whether the option's dedicated pool takes the whole peak month, as the cost's peak
  check found it (`peak_check.outcome`): absorbed 4, unsettled 3 (the evidence disagrees, or
  waits with no SLO to judge them), not absorbed 2, jobs larger than the pool 1.

Queue and scale read one replay without contradicting each other: the queue rule
(`gpudecide.queue.rules.replay_rules`) measures how long the replayed jobs wait against the
SLO; the scale rule measures whether the pool holds the peak month at all, from the same
replay's SLO share and jobs that never fit, and the log's own peak of GPUs in use at once.
A replay whose SLO holds is never "not absorbed" here, one whose SLO fails never
"absorbed", and jobs that never fit score 1 on both.

The rules read the figures with `.get`: the decision reads any record it is given, one
written by an older gpudecide or by hand included, and a missing figure is no finding,
never a crash.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gpudecide import evidence as ev
from gpudecide.cost import words
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.message import Message, english, message, nmessage

if TYPE_CHECKING:  # the decision passes its context; the cost never imports the decision
    from gpudecide.decision.context import RuleContext

__all__ = ["COST_BANDS", "SCALE_SCORES", "Finding", "cost_rules", "peak_outcome"]

Finding = Suggestion | StopFactor
# Monthly cost relative to the cheapest option -> cost score.
COST_BANDS = (
    (Decimal("1.10"), 5),
    (Decimal("1.50"), 4),
    (Decimal("2.00"), 3),
    (Decimal("3.00"), 2),
)
# The peak check's outcome -> scale score (not_measured: no score, the criterion stays an
# assumption).
SCALE_SCORES = {"absorbed": 4, "unsettled": 3, "not_absorbed": 2, "never_fits": 1}


def _suggest(
    option: str, criterion: str, score: int, msg: Message, cited: tuple[str, ...]
) -> Suggestion:
    return Suggestion(option, criterion, score, english(msg), cited, rule_message=msg)


def peak_outcome(check: dict[str, Any]) -> str:
    """What a peak check found; a record written before `outcome` was stored is read from
    its `absorbs` and the jobs that never fit."""
    outcome = check.get("outcome")
    if isinstance(outcome, str) and outcome in words.PEAK_OUTCOMES:
        return outcome
    if int(check.get("jobs_unplaceable") or 0):
        return "never_fits"
    absorbs = check.get("absorbs")
    if absorbs is None:
        return "not_measured"
    return "absorbed" if absorbs else "not_absorbed"


def _basis(check: dict[str, Any]) -> Message:
    """What the peak check stands on: a replay of a pool this size, or the profile alone."""
    if check.get("source") == "replay":
        return message(
            "cost", "the replay of the {window}", window=words.window_word(check.get("window"))
        )
    return message("cost", "the profile's GPUs in use at once, no replay")


def _outcome(outcome: str, never: int) -> Message:
    if outcome == "never_fits":
        return nmessage(
            "cost",
            "{n} job larger than the pool never fits",
            "{n} jobs larger than the pool never fit",
            n=never,
        )
    return message("cost", words.PEAK_OUTCOMES[outcome])


def _scale(oid: str, check: dict[str, Any], cited: tuple[str, ...]) -> Suggestion | None:
    """The scale score of one option's pool from its peak check."""
    outcome = peak_outcome(check)
    score = SCALE_SCORES.get(outcome)
    if score is None:
        return None
    args: dict[str, Any] = {
        "gpus": words.gpus(int(check.get("pool_gpus") or 0)),
        "basis": _basis(check),
        "outcome": _outcome(outcome, int(check.get("jobs_unplaceable") or 0)),
    }
    meaning = check.get("meaning_message")
    if meaning is None:
        msg = message(
            "cost",
            "scale, whether {gpus} take the whole peak month (from {basis}): {outcome}; "
            "absorbed 4, unsettled 3, not absorbed 2, jobs that never fit 1",
            **args,
        )
    else:
        # The peak check's sentence names its basis (the replay and its window) itself.
        del args["basis"]
        msg = message(
            "cost",
            "scale, whether {gpus} take the whole peak month: {outcome} ({why}); absorbed 4, "
            "unsettled 3, not absorbed 2, jobs that never fit 1",
            why=meaning,
            **args,
        )
    return _suggest(oid, "scale", score, msg, cited)


def cost_rules(record: ev.Evidence, ctx: RuleContext) -> list[Finding]:
    """Cost by the normal month's total against the cheapest option; scale by the peak
    check (C8, D3)."""
    f = record.figures
    options = {o["id"]: o for o in f.get("options", []) if isinstance(o, dict) and "id" in o}
    declared = {o.id for o in ctx.options}
    totals: dict[str, Decimal] = {}
    for oid, o in options.items():
        total = ((o.get("regimes") or {}).get("normal") or {}).get("total")
        if oid in declared and total is not None:
            totals[oid] = Decimal(str(total))
    if not totals:
        return []
    cheapest = min(totals.values())
    out: list[Finding] = []
    for oid, total in totals.items():
        ratio = total / cheapest if cheapest > 0 else Decimal(1)
        score = next((s for ceiling, s in COST_BANDS if ratio <= ceiling), 1)
        msg = message(
            "cost",
            "normal month {total:money} {currency} = {ratio:money2} x the cheapest: "
            "<=1.1 5, <=1.5 4, <=2 3, <=3 2, else 1",
            total=str(total),
            currency=f.get("currency"),
            ratio=str(ratio),
        )
        out.append(_suggest(oid, "cost", score, msg, (record.id,)))
        check = options[oid].get("peak_check")
        if isinstance(check, dict):
            scale = _scale(oid, check, (record.id,))
            if scale is not None:
                out.append(scale)
    return out
