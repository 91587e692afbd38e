"""Which inputs decide the cheapest option: each input -20 % and +20 % (a tornado).

Every number in costs.yaml that feeds a monthly cost is moved on its own, and so is the
profiled workload (its GPU-hours, and its number of jobs at the same GPU-hours). After each
move the normal month of every standalone option is costed again. What is measured is the
lead of the cheapest option over the best of the rest (the "gap"): a gap below zero means the
move changed which option is cheapest, and the input is listed as one that flips it. Each
input is named in English (`input`) and as a message (`input_message`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pydantic import ValidationError

from gpudecide.cost.regimes import Workload
from gpudecide.cost.schema import CostsConfig, Loc, dotted, is_consistent
from gpudecide.cost.tco import cents, month_cost
from gpudecide.message import Message, english, message

__all__ = [
    "INT_INPUTS",
    "NOT_INPUTS",
    "OPTION_LISTS",
    "STEP",
    "Outcome",
    "label",
    "label_message",
    "tornado",
    "totals",
]

STEP = Decimal("0.2")
# Whole-number inputs that are costs levers; other integers are counts or V2-only terms.
INT_INPUTS = frozenset({"write_off_months", "retention_days"})
# Numbers that do not change a monthly cost (conventions, or only the V2 exit figures).
NOT_INPUTS = frozenset({"hours_per_month", "resale_share", "weeks_to_shrink"})
OPTION_LISTS = ("owned", "rented", "managed", "hybrid")


@dataclass(frozen=True)
class Outcome:
    """The standalone options' normal-month totals after one move."""

    totals: dict[str, Decimal]

    @property
    def cheapest(self) -> str:
        """Id of the cheapest option (file order breaks ties)."""
        return min(self.totals, key=lambda k: self.totals[k])

    def gap(self, leader: str) -> Decimal | None:
        """Best of the rest minus `leader`'s total; None with a single option."""
        rest = [v for k, v in self.totals.items() if k != leader]
        return min(rest) - self.totals[leader] if rest else None


def totals(cfg: CostsConfig, normal: Workload) -> Outcome:
    """Normal-month totals of every standalone option."""
    return Outcome({o.id: month_cost(cfg, o, normal).total for o in cfg.compared()})


def _leaves(node: Any, loc: Loc = ()) -> Iterator[tuple[Loc, Decimal | int]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in NOT_INPUTS:
                yield from _leaves(value, (*loc, key))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _leaves(item, (*loc, i))
    elif isinstance(node, Decimal) or (
        isinstance(node, int) and not isinstance(node, bool) and loc and loc[-1] in INT_INPUTS
    ):
        yield loc, node


def _set(tree: dict[str, Any], loc: Loc, value: Decimal | int) -> None:
    node: Any = tree
    for part in loc[:-1]:
        node = node[part]
    node[loc[-1]] = value


def label(cfg: CostsConfig, loc: Loc) -> str:
    """A reader's name for an input: option id, then the field path (`capex[0].unit_price`)."""
    return english(label_message(cfg, loc))


def label_message(cfg: CostsConfig, loc: Loc) -> Message:
    """`label` as a message (the id and the path stay as written in every language)."""
    parts = list(loc)
    if parts and parts[-1] == "amount":
        parts.pop()
    head = "data"
    if parts and parts[0] in OPTION_LISTS:
        head = getattr(cfg, str(parts[0]))[int(parts[1])].id
        parts = parts[2:]
    elif parts and parts[0] == "data":
        parts = parts[1:]
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else str(p))
    return message("cost", "{option}: {field}", option=head, field=text)


def _moved(value: Decimal | int, factor: Decimal) -> Decimal | int:
    if isinstance(value, Decimal):
        return value * factor
    return int((value * factor).to_integral_value(rounding=ROUND_HALF_UP))


def tornado(cfg: CostsConfig, normal: Workload, step: Decimal = STEP) -> dict[str, Any]:
    """Each input moved by -step and +step; who is cheapest, and by how much, after each."""
    base = totals(cfg, normal)
    leader = base.cheapest
    base_gap = base.gap(leader)
    tree = cfg.model_dump()
    factors = {"low": 1 - step, "high": 1 + step}
    skipped: list[str] = []
    rows: list[dict[str, Any]] = []

    def record(
        named: Message, field: str, value: Any, run: Callable[[Decimal], Outcome | None]
    ) -> None:
        name = english(named)
        sides: dict[str, dict[str, Any] | None] = {}
        for side, factor in factors.items():
            outcome = run(factor)
            if outcome is None:
                sides[side] = None
                skipped.append(f"{name} {'-' if side == 'low' else '+'}{step:.0%}")
                continue
            gap = outcome.gap(leader)
            sides[side] = {
                "cheapest": outcome.cheapest,
                "gap": str(cents(gap)) if gap is not None else None,
                "leader_total": str(cents(outcome.totals[leader])),
                "_gap": gap if gap is not None else outcome.totals[leader],
            }
        ref = base_gap if base_gap is not None else base.totals[leader]
        ends = [ref, *(s["_gap"] for s in sides.values() if s is not None)]
        swing = max(ends) - min(ends)
        if swing == 0:
            return
        for s in sides.values():
            if s is not None:
                del s["_gap"]
        rows.append(
            {
                "input": name,
                "input_message": named,
                "field": field,
                "base": value,
                **sides,
                "swing": cents(swing),
            }
        )

    for loc, value in _leaves(tree):
        if value == 0:
            continue  # +-20 % of nothing is nothing

        def run(factor: Decimal, loc: Loc = loc, value: Decimal | int = value) -> Outcome | None:
            moved = _moved(value, factor)
            if moved == value:
                return None
            variant = copy.deepcopy(tree)
            _set(variant, loc, moved)
            try:
                new = CostsConfig.model_validate(variant)
            except ValidationError:
                return None  # outside the field's allowed range (a PUE below 1, a share over 1)
            return totals(new, normal) if is_consistent(new) else None

        record(label_message(cfg, loc), dotted(loc), str(value), run)

    record(
        message("cost", "workload: GPU-hours per month"),
        "profile",
        str(cents(normal.gpu_hours)),
        lambda f: totals(cfg, normal.scaled(f)),
    )
    record(
        message("cost", "workload: jobs per month at the same GPU-hours"),
        "profile",
        str(cents(normal.attempts)),
        lambda f: totals(cfg, normal.scaled(Decimal(1), f)),
    )
    return _result(rows, leader, base, base_gap, step, skipped)


def _result(
    rows: list[dict[str, Any]],
    leader: str,
    base: Outcome,
    base_gap: Decimal | None,
    step: Decimal,
    skipped: list[str],
) -> dict[str, Any]:
    """Rows by swing, the moves that change the cheapest option, and the baseline."""
    rows.sort(key=lambda r: (-r["swing"], r["input"]))
    flips = [
        {"input": r["input"], "field": r["field"], "move": move, "cheapest": r[side]["cheapest"]}
        for r in rows
        for side, move in (("low", f"-{step:.0%}"), ("high", f"+{step:.0%}"))
        if r[side] is not None and r[side]["cheapest"] != leader
    ]
    for r in rows:
        r["swing"] = str(r["swing"])
    return {
        "step": float(step),
        "regime": "normal",
        "measure": "gap" if base_gap is not None else "total",
        "baseline_cheapest": leader,
        "baseline_gap": str(cents(base_gap)) if base_gap is not None else None,
        "baseline_total": str(cents(base.totals[leader])),
        "inputs": rows,
        "flips": flips,
        "skipped": skipped,
    }
