"""What to do next so that a provisional decision can become decided (SPEC D4).

Each action is a command (or the file to fill), the option it concerns, and what it settles:
a stale record the decision refused to rest on, an unverified must-prove item of the
leading option, a score nobody has settled that alone can change the winner. Stale records
come first (nothing else is worth doing on them), then the leader's items, then the scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpudecide.decision.bounds import Bounds
from gpudecide.decision.context import RuleContext
from gpudecide.decision.contradictions import Contradiction
from gpudecide.decision.coverage import CoverageItem, unverified
from gpudecide.decision.freshness import Unfit
from gpudecide.decision.matrix import Cell
from gpudecide.decision.robustness import criterion_name
from gpudecide.i18n import N_
from gpudecide.message import Message, message

__all__ = [
    "CONTRADICTION_FILES",
    "ITEM_NAMES",
    "SOURCE_NAMES",
    "STATE_NAMES",
    "Action",
    "next_actions",
    "settle_command",
]

# The must-prove items and their states, as the report and the actions name them.
ITEM_NAMES = {
    "export_proven": N_("export proven on its own artifacts"),
    "export_audited": N_("export audited"),
    "node_loss_drilled": N_("node loss drilled on its contour"),
    "start_measured": N_("start time measured from its own jobs"),
    "isolation_evidenced": N_("isolation backed by evidence"),
    "residency": N_("data kept where the law requires"),
    "on_call": N_("an accountable on-call person"),
    "derived_rights": N_("rights to derived weights"),
    "gpu_health": N_("GPU telemetry wired to cordon"),
    "hybrid_consistent": N_("one system across both contours"),
}
SOURCE_NAMES = {
    "evidence": N_("evidence"),
    "rehearsal": N_("rehearsal"),
    "override": N_("override"),
    "document": N_("document"),
    "assumption": N_("assumption"),
}
STATE_NAMES = {
    "verified": N_("verified"),
    "rehearsed": N_("rehearsed"),
    "claimed": N_("claimed"),
    "not_checked": N_("not checked"),
    "failed": N_("failed"),
}


# Where each kind of contradiction is resolved.
CONTRADICTION_FILES = {
    "key_custody": "retention.yaml key_custody / isolation.yaml keys.custody",
    "isolation_scored_on_claims": "isolation.yaml proof",
    "hybrid_stronger_than_contour": "isolation.yaml (the hybrid's answers)",
}


@dataclass
class Action:
    """One next step: run `command` for `option`; it settles `settles`."""

    command: str
    option: str | None
    settles: Message

    def as_dict(self) -> dict[str, Any]:
        """Machine form (`decision.next_actions[]`)."""
        return {"command": self.command, "option": self.option, "settles": self.settles}


def settle_command(ctx: RuleContext, option: str, criterion: str, cell: Cell) -> str:
    """What would settle one unsettled score: the check on the option's own contour for a
    rehearsal, else the analysis that scores the criterion."""
    decl = ctx.option(option)
    managed = decl is not None and decl.kind == "managed"
    if cell.source == "rehearsal" and any(e.startswith("export_test-") for e in cell.evidence):
        return (
            f"gpudecide export-test --option {option} --from-export DIR"
            if managed
            else f"gpudecide export-test --option {option} --executor slurm"
        )
    if cell.source == "rehearsal":
        return f"gpudecide drill all --option {option}"
    by_criterion = {
        "frequency": "gpudecide profile && gpudecide cost",
        "artifacts": f"gpudecide audit EXPORT_DIR --option {option}",
        "queue": f"gpudecide queue LOG --option {option}"
        if managed
        else "gpudecide replay && gpudecide cost",
        "isolation": "gpudecide check isolation",
        "operations": "gpudecide check raci",
        "scale": "gpudecide cost",
        "cost": "gpudecide cost",
    }
    return by_criterion.get(criterion, "matrix.scores in gpudecide.yaml")


def _item_action(option: str, item: CoverageItem) -> Action:
    return Action(
        item.command or "-",
        item.contour or option,
        message(
            "decision",
            "{item} ({spec}): {state}",
            item=message("decision", ITEM_NAMES.get(item.id, item.id)),
            spec=", ".join(item.spec),
            state=message("decision", STATE_NAMES[item.state]),
        ),
    )


def next_actions(
    ctx: RuleContext,
    leader: str | None,
    covered: dict[str, list[CoverageItem]],
    cells: dict[str, dict[str, Cell]],
    limits: Bounds,
    stale: list[Unfit],
    disputed: list[Contradiction],
) -> list[Action]:
    """The actions that would settle a provisional decision, most urgent first, each
    command and option once."""
    out: list[Action] = [Action(u.command, u.option, u.why) for u in stale]
    out += [Action(CONTRADICTION_FILES.get(c.id, "-"), c.option, c.why) for c in disputed]
    if leader is not None:
        out += [_item_action(leader, i) for i in unverified(covered.get(leader, []))]
    cells_named = [*limits.flips, *(c for group in limits.together.values() for c in group)]
    for flip in cells_named:
        option, criterion = flip["option"], flip["criterion"]
        cell = cells[option][criterion]
        out.append(
            Action(
                settle_command(ctx, option, criterion, cell),
                option,
                message(
                    "decision",
                    "the {source} score {score} of {criterion}: at {extreme} it can change "
                    "the winner",
                    source=message("decision", SOURCE_NAMES[cell.source]),
                    score=cell.score,
                    criterion=criterion_name(criterion),
                    extreme=flip["extreme"],
                ),
            )
        )
    seen: set[tuple[str, str | None]] = set()
    unique = []
    for action in out:
        if (action.command, action.option) not in seen:
            seen.add((action.command, action.option))
            unique.append(action)
    return unique
