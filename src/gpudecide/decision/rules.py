"""The one place that lists, per evidence kind, the rules that suggest scores and raise stop
factors (SPEC D3-D5). A new analysis adds its kind here; a kind with no evidence yet leaves
its criteria as assumptions, never a silent default.
"""

from __future__ import annotations

from collections.abc import Callable

from gpudecide import evidence as ev
from gpudecide.artifacts.rules import audit_rules
from gpudecide.cost.rules import cost_rules
from gpudecide.decision import hybrid
from gpudecide.decision.context import RuleContext
from gpudecide.drills import rules as drill_rules
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.governance import rules as governance_rules
from gpudecide.jobs.rules import profile_rules
from gpudecide.portability import rules as export_rules
from gpudecide.queue.rules import queue_rules, replay_rules

__all__ = ["RULES", "Finding", "PureRule", "Rule", "apply", "rules_for"]


Finding = Suggestion | StopFactor
Rule = Callable[[ev.Evidence, RuleContext], list[Finding]]
PureRule = Callable[[ev.Evidence], list[Finding]]


def _pure(fn: PureRule) -> Rule:
    """A rule that reads only its record (each package's own `rules.py`), as a `Rule`."""
    return lambda record, _ctx: fn(record)


# Per evidence kind, the rules that read its records: the one registry.
RULES: dict[str, list[Rule]] = {
    "profile": [profile_rules],
    "queue": [queue_rules],
    "replay": [replay_rules],
    "cost": [cost_rules],
    "audit": [audit_rules],
    "export_test": [_pure(export_rules.rules)],
    "raci": [_pure(governance_rules.rules)],
    "isolation": [_pure(governance_rules.rules)],
    "residency": [_pure(governance_rules.rules)],
    "standard_path": [_pure(governance_rules.rules)],
    "secrets": [_pure(governance_rules.rules)],
    "drill": [_pure(drill_rules.rules)],
    "hybrid": [_pure(hybrid.rules)],
}


def rules_for(kind: str) -> list[Rule]:
    """Every rule that reads records of `kind`."""
    return list(RULES.get(kind, []))


def apply(records: list[ev.Evidence], ctx: RuleContext) -> list[Finding]:
    """All findings of the given records (one record per kind: the newest)."""
    out: list[Finding] = []
    for record in records:
        for rule in rules_for(record.kind):
            out.extend(rule(record, ctx))
    known = {o.id for o in ctx.options}
    return [f for f in out if f.option in known]
