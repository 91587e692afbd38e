"""What an analysis's rules hand to the decision: score suggestions and stop factors (SPEC
D3-D5).

Each analysis package that concerns options has a `rules.py` with one function per evidence
kind, `(record) -> list[Suggestion | StopFactor]`; `gpudecide.decision.rules` lists them in
one place. A rule never reads files: it turns a record's figures into a score or a stop
factor and says how, as a message (`rule_message`, shown next to the score in the reader's
language) and in English (`rule`, for --json).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CRITERIA", "Finding", "StopFactor", "Suggestion"]

CRITERIA = ("frequency", "artifacts", "queue", "isolation", "operations", "scale", "cost")


@dataclass(frozen=True)
class Suggestion:
    """A score 1-5 for one option and criterion, derived from evidence by a named rule."""

    option: str
    criterion: str
    score: int
    rule: str
    evidence: tuple[str, ...] = field(default_factory=tuple)
    rule_message: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.score <= 5:
            raise ValueError(f"score {self.score} is outside 1..5")


@dataclass(frozen=True)
class StopFactor:
    """A reason an option is excluded whatever its total (D5).

    `id` is the stop factor's stable name (export_hazard, export_test_failed,
    residency_violated, no_accountable, no_node_replacement, derived_rights_unclear,
    hard_slo_violated, isolation_protection_missing, cannot_resume_after_node_loss, ...);
    `clear` says what would lift it.
    """

    option: str
    id: str
    rule: str
    evidence: tuple[str, ...] = field(default_factory=tuple)
    clear: str = ""
    rule_message: Mapping[str, Any] | None = None
    clear_message: Mapping[str, Any] | None = None


Finding = Suggestion | StopFactor
