"""The one place that lists, per evidence kind, the rules that suggest scores and raise stop
factors (SPEC D3-D5). A new analysis adds its kind here; a kind with no evidence yet leaves
its criteria as assumptions, never a silent default.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from gpudecide import evidence as ev
from gpudecide.artifacts.rules import audit_rules
from gpudecide.cost.rules import cost_rules
from gpudecide.decision.context import RuleContext
from gpudecide.decision.model import StopFactor, Suggestion
from gpudecide.jobs.rules import profile_rules
from gpudecide.queue.rules import queue_rules, replay_rules

__all__ = ["PACKAGE_RULES", "RULES", "Finding", "PureRule", "Rule", "apply", "rules_for"]


Finding = Suggestion | StopFactor
Rule = Callable[[ev.Evidence, RuleContext], list[Finding]]
PureRule = Callable[[ev.Evidence], list[Finding]]

RULES: dict[str, list[Rule]] = {
    "profile": [profile_rules],
    "queue": [queue_rules],
    "replay": [replay_rules],
    "cost": [cost_rules],
    "audit": [audit_rules],
}

# Packages whose `rules.py` holds pure rules `(record) -> findings`, per evidence kind.
PACKAGE_RULES: dict[str, tuple[str, str]] = {
    "export_test": ("gpudecide.portability.rules", "rules"),
    "raci": ("gpudecide.governance.rules", "rules"),
    "isolation": ("gpudecide.governance.rules", "rules"),
    "residency": ("gpudecide.governance.rules", "rules"),
    "standard_path": ("gpudecide.governance.rules", "rules"),
    "secrets": ("gpudecide.governance.rules", "rules"),
    "drill": ("gpudecide.drills.rules", "rules"),
    "hybrid": ("gpudecide.decision.hybrid", "rules"),
}


def _pure(fn: PureRule) -> Rule:
    return lambda record, _ctx: fn(record)


def rules_for(kind: str) -> list[Rule]:
    """Every rule that reads records of `kind`."""
    found = list(RULES.get(kind, []))
    where = PACKAGE_RULES.get(kind)
    if where is not None:
        module = import_module(where[0])
        found.append(_pure(getattr(module, where[1])))
    return found


def apply(records: list[ev.Evidence], ctx: RuleContext) -> list[Finding]:
    """All findings of the given records (one record per kind: the newest)."""
    out: list[Finding] = []
    for record in records:
        for rule in rules_for(record.kind):
            out.extend(rule(record, ctx))
    known = {o.id for o in ctx.options}
    return [f for f in out if f.option in known]
