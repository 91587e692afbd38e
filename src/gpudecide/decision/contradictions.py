"""Where the team's own inputs disagree with each other (SPEC A8, I1-I6, H2).

A decision cannot rest on two answers that cannot both be true. Each contradiction is a
finding on the option it concerns; while one concerns the leading option the decision is
provisional. The classes found:

- **key custody**: the retention policy says who sees the encryption keys (A8,
  retention.yaml `key_custody`); an option's isolation answer for its keys boundary says
  who holds them (isolation.yaml `custody`). "Only the team" in one and "the provider" in the
  other is a contradiction, whichever option it is.
- **isolation scored on claims**: an isolation score of 4 or 5 for an option whose
  boundaries that the threat model requires rest on claims, not on a document or a test (I6:
  evidence, not declarations).
- **a hybrid stronger than its contour**: a hybrid's isolation answer for a boundary is
  better than the answer of a contour its closed data runs on (its placement, else every
  contour); a hybrid is only as isolated as the weakest contour that sees the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpudecide import evidence as ev
from gpudecide.decision.context import RuleContext
from gpudecide.decision.matrix import Cell
from gpudecide.governance.messages import CUSTODY_NAMES
from gpudecide.message import Message, message

__all__ = [
    "TEAM_ONLY",
    "Contradiction",
    "contradictions",
]

# How strong an isolation answer is, weakest first.
_STRENGTH = {"missing": 0, "unknown": 0, "claimed": 1, "evidenced": 2}
TEAM_ONLY = "team"


@dataclass
class Contradiction:
    """Two inputs that cannot both be true, about one option."""

    id: str
    option: str
    why: Message
    evidence: list[str]

    def as_dict(self) -> dict[str, Any]:
        """Machine form (`decision.contradictions[]`)."""
        return {"id": self.id, "option": self.option, "why": self.why, "evidence": self.evidence}


def _rows(record: ev.Evidence | None) -> dict[str, dict[str, Any]]:
    if record is None:
        return {}
    return {str(o.get("option")): o for o in record.figures.get("options", []) if o.get("option")}


def _boundaries(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(b.get("boundary")): b for b in row.get("boundaries", []) if b.get("boundary")}


def _retention_custody(ctx: RuleContext) -> tuple[str, ev.Evidence] | None:
    """Who the retention policy says sees the keys, from the newest audit that read it."""
    audits = [r for r in ctx.checks.values() if r.kind == "audit"]
    for audit in sorted(audits, key=lambda r: (r.created_at_utc, r.id), reverse=True):
        retention = audit.figures.get("retention")
        custody = retention.get("key_custody") if isinstance(retention, dict) else None
        if isinstance(custody, str) and custody:
            return custody, audit
    return None


def _key_custody(ctx: RuleContext) -> list[Contradiction]:
    policy = _retention_custody(ctx)
    isolation = ctx.newest.get("isolation")
    if policy is None or isolation is None or policy[0] != TEAM_ONLY:
        return []
    out = []
    for option, row in _rows(isolation).items():
        custody = _boundaries(row).get("keys", {}).get("custody")
        if isinstance(custody, str) and custody not in ("", TEAM_ONLY, "unknown"):
            out.append(
                Contradiction(
                    "key_custody",
                    option,
                    message(
                        "decision",
                        "the retention policy says only the team sees the keys; the isolation "
                        "answers say {custody} for this option",
                        custody=message("governance", CUSTODY_NAMES.get(custody, custody))
                        if custody in CUSTODY_NAMES
                        else custody,
                    ),
                    [policy[1].id, isolation.id],
                )
            )
    return out


def _claimed_isolation(ctx: RuleContext, cells: dict[str, dict[str, Cell]]) -> list[Contradiction]:
    isolation = ctx.newest.get("isolation")
    if isolation is None:
        return []
    by_model = {
        str(b)
        for asset in isolation.figures.get("assets", [])
        if asset.get("closed", True)
        for threat in asset.get("threats", [])
        for b in threat.get("requires", [])
    }
    out = []
    for option, row in _rows(isolation).items():
        # The option's own list: adversaries that cannot reach it are left out.
        required = set(row["required"]) if row.get("required") else by_model
        cell = cells.get(option, {}).get("isolation")
        if cell is None or cell.score < 4:
            continue
        claimed = sorted(
            b
            for b, a in _boundaries(row).items()
            if b in required and _STRENGTH.get(str(a.get("status")), 0) < 2
        )
        if claimed:
            out.append(
                Contradiction(
                    "isolation_scored_on_claims",
                    option,
                    message(
                        "decision",
                        "isolation scored {score} while {boundaries} rest on claims (I6)",
                        score=cell.score,
                        boundaries=", ".join(claimed),
                    ),
                    [isolation.id, *cell.evidence],
                )
            )
    return out


def _data_contours(ctx: RuleContext, hybrid: str, contours: list[str]) -> list[str]:
    """The contours a hybrid's closed data runs on: its placement, else every contour."""
    residency = ctx.newest.get("residency")
    row = _rows(residency).get(hybrid)
    placed: set[str] = set()
    for asset in (row or {}).get("assets", []):
        placement = asset.get("placement")
        if isinstance(placement, list):
            placed |= {str(c) for c in placement}
    return sorted(placed) if placed else contours


def _stronger_hybrid(ctx: RuleContext) -> list[Contradiction]:
    isolation = ctx.newest.get("isolation")
    rows = _rows(isolation)
    out = []
    for hybrid in (o for o in ctx.options if o.kind == "hybrid"):
        own = rows.get(hybrid.id)
        if own is None or isolation is None:
            continue
        mine = _boundaries(own)
        for contour in _data_contours(ctx, hybrid.id, hybrid.contours):
            theirs = _boundaries(rows.get(contour, {}))
            weaker = sorted(
                b
                for b, a in mine.items()
                if b in theirs
                and _STRENGTH.get(str(a.get("status")), 0)
                > _STRENGTH.get(str(theirs[b].get("status")), 0)
            )
            if weaker:
                out.append(
                    Contradiction(
                        "hybrid_stronger_than_contour",
                        hybrid.id,
                        message(
                            "decision",
                            "the hybrid answers {boundaries} better than its contour {contour}, "
                            "where its data runs",
                            boundaries=", ".join(weaker),
                            contour=contour,
                        ),
                        [isolation.id],
                    )
                )
    return out


def contradictions(ctx: RuleContext, cells: dict[str, dict[str, Cell]]) -> list[Contradiction]:
    """Every contradiction among the standing records, option by option."""
    return [*_key_custody(ctx), *_claimed_isolation(ctx, cells), *_stronger_hybrid(ctx)]
