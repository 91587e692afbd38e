"""Rules that turn the figures of the workload evidence into score suggestions and stop
factors (SPEC D3-D5); the queue and replay rules are the queue package's
(`gpudecide.queue.rules`), the export audit's the artifacts package's
(`gpudecide.artifacts.rules`), the cost and scale rules the cost package's
(`gpudecide.cost.rules`). Each rule says how it got its score.

Thresholds are bands, not tuning knobs: each band is named in the rule text, so a reader can
check the score against the figure in the evidence it cites. Every rule text is a message of
the "decision" catalogue (`rule_message`, `clear_message`) and its English rendering (`rule`,
`clear`), so the report and the terminal say it in the reader's language.
"""

from __future__ import annotations

from typing import Any

from gpudecide import evidence as ev
from gpudecide.decision.context import RuleContext
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.i18n import N_
from gpudecide.message import Message, english, message

Finding = Suggestion | StopFactor
DEDICATED = ("owned", "rented")

# Useful busy share of a dedicated pool -> frequency score (SPEC C2, D1: "a steady queue
# keeps GPUs busy"). Below 10 % a pool mostly waits for work.
BUSY_BANDS = ((0.6, 5), (0.4, 4), (0.2, 3), (0.1, 2), (0.0, 1))


# Words the analyses write into their figures, shown inside rule texts in the reader's language.
WORDS = {
    "bursty": N_("bursty"),
    "steady": N_("steady"),
    "no load": N_("no load"),
    "predictable": N_("predictable"),
    "partly predictable": N_("partly predictable"),
    "unpredictable": N_("unpredictable"),
    "not measurable": N_("not measurable"),
    "peak": N_("peak"),
    "full": N_("full"),
    "pass": N_("pass"),
    "warn": N_("warn"),
    "fail": N_("fail"),
    "info": N_("info"),
}


def word(value: object) -> Message | str:
    """A word of the figures as a message (known words), else the value as written."""
    text = str(value)
    return message("decision", WORDS[text]) if text in WORDS else text


def _suggest(
    option: str, criterion: str, score: int, msg: Message, cited: tuple[str, ...]
) -> Suggestion:
    return Suggestion(option, criterion, score, english(msg), cited, rule_message=msg)


def _stop(
    option: str, sid: str, msg: Message, cited: tuple[str, ...], clear: Message
) -> StopFactor:
    return StopFactor(
        option,
        sid,
        english(msg),
        cited,
        clear=english(clear),
        rule_message=msg,
        clear_message=clear,
    )


def _band(value: float, bands: tuple[tuple[float, int], ...]) -> int:
    return next(score for floor, score in bands if value >= floor)


def _cost_options(ctx: RuleContext) -> dict[str, dict[str, Any]]:
    cost = ctx.newest.get("cost")
    return {o["id"]: o for o in cost.figures.get("options", [])} if cost else {}


def profile_rules(record: ev.Evidence, ctx: RuleContext) -> list[Finding]:
    """Frequency: dedicated options by the useful busy share of their pool (from the cost
    evidence when it priced the pool, else the profile's pool), managed options by how rare,
    bursty and unpredictable the work is (D1, D2)."""
    f = record.figures
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
                basis = message("decision", "useful utilisation in the normal month")
            else:
                share = f.get("busy_share")
                basis = message(
                    "decision", "busy share of a {gpus}-GPU pool", gpus=f.get("pool_gpus")
                )
            if share is None:
                continue
            score = _band(float(share), BUSY_BANDS)
            if irregular and score > 1:
                score -= 1
            msg = message(
                "decision",
                "{basis} {share:pct}: bands >=60 % 5, >=40 % 4, >=20 % 3, >=10 % 2, else 1; "
                "minus 1 as the work is {shape}, {predictability}",
                basis=basis,
                share=float(share),
                shape=word(shape),
                predictability=word(pred),
            )
            out.append(_suggest(opt.id, "frequency", score, msg, cited))
        elif opt.kind == "managed":
            busy = f.get("busy_share")
            rare = busy is not None and float(busy) < 0.2
            score = 5 if irregular and rare else 4 if irregular or rare else 2
            msg = message(
                "decision",
                "work is {shape}, {predictability}, busy share {busy:pct}: rare or bursty runs "
                "suit a managed endpoint (D2): both 5, one 4, neither 2",
                shape=word(shape),
                predictability=word(pred),
                busy=None if busy is None else float(busy),
            )
            out.append(_suggest(opt.id, "frequency", score, msg, (record.id,)))
    return out
