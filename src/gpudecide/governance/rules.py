"""Decision rules of the governance evidence: scores and stop factors per option (SPEC D3-D5).

    raci           -> operations score; stop factors no_accountable, no_node_replacement
    standard_path  -> operations score (R4 fit and R5 control)
    isolation      -> isolation score; stop factor isolation_protection_missing
    residency      -> stop factor residency_violated
    secrets        -> isolation score 2 for the option whose logs leak credentials

An option whose row is not checked at all (nothing answered for it) gets no score: the
criterion stays unsettled until the team answers. Rows left unanswered beside answered ones
lower the score like findings do: unchecked never reads as clear.

Rules are pure: they read only the record's figures. `RULES` maps evidence kind to rule;
`rules(record)` applies the right one (no rule for another kind: nothing).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from gpudecide.evidence import Evidence
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.governance import messages
from gpudecide.governance.findings import Finding
from gpudecide.i18n import N_
from gpudecide.message import Message, english, message, nmessage

__all__ = [
    "KIND_LABELS",
    "RULES",
    "STOP_IDS",
    "Outcome",
    "isolation_rules",
    "isolation_score",
    "raci_rules",
    "residency_rules",
    "rules",
    "secrets_rules",
    "standard_path_rules",
]

Outcome = list[Suggestion | StopFactor]


# What the rules read of a record: the part of the figures models (`raci.RaciFigures`, ...)
# every per-option governance row shares, so that a rule never depends on the rest.
class _Read(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Boundary(_Read):
    status: str
    answered: bool = True


class _Row(_Read):
    option: str
    findings: list[Finding]
    boundaries: list[_Boundary] = Field(default_factory=list)
    answered: bool = True
    not_checked: list[str] = Field(default_factory=list)


class _Rows(_Read):
    options: list[_Row] = Field(default_factory=list)


class _Secrets(_Read):
    option: str | None = None
    secrets: int = 0


def _rows(record: Evidence) -> list[_Row]:
    return _Rows.model_validate(record.figures).options


# Finding id -> (stop factor id, what lifts it).
STOP_IDS: dict[str, tuple[str, str]] = {
    "no_accountable": (
        "no_accountable",
        N_("name one Accountable person of the team for every activity in raci.yaml"),
    ),
    "no_on_call": (
        "no_accountable",
        N_("put a person of the team who owns the duty on the on-call rota (raci.yaml on_call)"),
    ),
    "no_on_call_duty": (
        "no_accountable",
        N_(
            "add the option's on-call duties to raci.yaml, each owned by a person of the team "
            "on the on-call rota"
        ),
    ),
    "no_node_replacement": (
        "no_node_replacement",
        N_("name who replaces a failed node (Responsible in raci.yaml) or buy that service"),
    ),
    "protection_missing": (
        "isolation_protection_missing",
        N_("put the boundary in place and attach its evidence in isolation.yaml"),
    ),
    "keys_provider_custody": (
        "isolation_protection_missing",
        N_(
            "keep the keys where only the team can use them (its own HSM or KMS; keys.custody=team)"
        ),
    ),
    "residency_violated": (
        "residency_violated",
        N_("keep the asset only at sites in the allowed countries (options.sites, placement)"),
    ),
}
# The evidence kind as a stop factor's rule names it ("residency (I7): ...").
KIND_LABELS: dict[str, str] = {
    "raci": N_("raci"),
    "standard_path": N_("standard_path"),
    "isolation": N_("isolation"),
    "residency": N_("residency"),
    "secrets": N_("secrets"),
}
_SHOWN = 3


def _rule_message(kind: str, specs: str, found: list[Finding]) -> Message:
    """The stop factor's rule as a message: the kind, its SPEC ids and the first findings."""
    label = message("governance", KIND_LABELS[kind]) if kind in KIND_LABELS else kind
    shown = [messages.as_message(f.id, f.params) for f in found[:_SHOWN]]
    if len(found) > _SHOWN:
        return message(
            "governance",
            "{kind} ({specs}): {findings}; and {more} more",
            kind=label,
            specs=specs,
            findings=shown,
            more=len(found) - _SHOWN,
        )
    return message(
        "governance", "{kind} ({specs}): {findings}", kind=label, specs=specs, findings=shown
    )


def _stops(record: Evidence, row: _Row) -> list[StopFactor]:
    grouped: dict[str, list[Finding]] = {}
    for f in row.findings:
        if f.stop and f.id in STOP_IDS:
            grouped.setdefault(STOP_IDS[f.id][0], []).append(f)
    out: list[StopFactor] = []
    for sid, found in grouped.items():
        clear = message("governance", STOP_IDS[found[0].id][1])
        specs = ", ".join(sorted({f.spec for f in found}))
        rule = _rule_message(record.kind, specs, found)
        out.append(
            StopFactor(
                option=row.option,
                id=sid,
                rule=english(rule),
                evidence=(record.id,),
                clear=english(clear),
                rule_message=rule,
                clear_message=clear,
            )
        )
    return out


def _count_score(n: int) -> int:
    """5 with no findings, 4 with 1-2, 3 with 3-4, 2 with 5 or more."""
    if n == 0:
        return 5
    return 4 if n <= 2 else 3 if n <= 4 else 2


def _findings_score(record: Evidence, criterion: str, label: str) -> Outcome:
    out: Outcome = []
    for row in _rows(record):
        out.extend(_stops(record, row))
        if not row.answered:
            continue  # not checked: the criterion stays unsettled for this option
        stopped = any(f.stop for f in row.findings)
        soft = [f for f in row.findings if not f.stop]
        unchecked = len(row.not_checked)
        score = 1 if stopped else _count_score(len(soft) + unchecked)
        reason = (
            message("governance", "a stop factor")
            if stopped
            else nmessage("governance", "{n} finding", "{n} findings", n=len(soft))
        )
        if unchecked:
            reason = nmessage(
                "governance",
                "{reason}, {n} row not checked",
                "{reason}, {n} rows not checked",
                reason=reason,
                n=unchecked,
            )
        rule = message(
            "governance",
            "{label}: {reason} -> {score}",
            label=message("governance", label),
            reason=reason,
            score=score,
        )
        out.append(Suggestion(row.option, criterion, score, english(rule), (record.id,), rule))
    return out


def raci_rules(record: Evidence) -> Outcome:
    """Operations score from the RACI findings; stop factors for no owner, no node replacement."""
    return _findings_score(record, "operations", N_("RACI (R1-R3, G3)"))


def standard_path_rules(record: Evidence) -> Outcome:
    """Operations score from the standard-path gaps and missing R5 controls."""
    return _findings_score(record, "operations", N_("standard path and control (R4, R5)"))


def isolation_score(row: _Row) -> int:
    """1 when stopped; else by the share of boundaries in place with evidence, at most 4 with
    findings left or a boundary not checked."""
    if any(f.stop for f in row.findings):
        return 1
    bounds = row.boundaries
    share = sum(1 for b in bounds if b.status == "evidenced") / len(bounds) if bounds else 0.0
    score = 5 if share >= 0.9 else 4 if share >= 0.7 else 3 if share >= 0.5 else 2
    unchecked = any(not b.answered for b in bounds)
    return min(score, 4) if row.findings or unchecked else score


def isolation_rules(record: Evidence) -> Outcome:
    """Isolation score per option; a missing required protection of a closed asset stops it."""
    out: Outcome = []
    for row in _rows(record):
        out.extend(_stops(record, row))
        if not row.answered:
            continue  # not checked: the criterion stays unsettled for this option
        score = isolation_score(row)
        evidenced = sum(1 for b in row.boundaries if b.status == "evidenced")
        unchecked = sum(1 for b in row.boundaries if not b.answered)
        total, found = len(row.boundaries), len(row.findings)
        # Every isolation row has all eleven boundaries: the count of findings picks the form.
        if unchecked:
            rule = nmessage(
                "governance",
                "isolation (I2-I6): {evidenced} of {total} boundaries evidenced, "
                "{unchecked} not checked, {found} finding -> {score}",
                "isolation (I2-I6): {evidenced} of {total} boundaries evidenced, "
                "{unchecked} not checked, {found} findings -> {score}",
                count="found",
                evidenced=evidenced,
                total=total,
                unchecked=unchecked,
                found=found,
                score=score,
            )
        else:
            rule = nmessage(
                "governance",
                "isolation (I2-I6): {evidenced} of {total} boundaries evidenced, "
                "{found} finding -> {score}",
                "isolation (I2-I6): {evidenced} of {total} boundaries evidenced, "
                "{found} findings -> {score}",
                count="found",
                evidenced=evidenced,
                total=total,
                found=found,
                score=score,
            )
        out.append(Suggestion(row.option, "isolation", score, english(rule), (record.id,), rule))
    return out


def residency_rules(record: Evidence) -> Outcome:
    """A residency violation stops the option (I7, D5); a met requirement scores nothing."""
    out: Outcome = []
    for row in _rows(record):
        out.extend(_stops(record, row))
    return out


def secrets_rules(record: Evidence) -> Outcome:
    """Credentials in an option's logs: isolation 2 for that option (I3)."""
    scan = _Secrets.model_validate(record.figures)
    if not scan.option or not scan.secrets:
        return []
    rule = nmessage(
        "governance",
        "secrets in logs (I3): {n} credential found -> 2",
        "secrets in logs (I3): {n} credentials found -> 2",
        n=scan.secrets,
    )
    return [Suggestion(scan.option, "isolation", 2, english(rule), (record.id,), rule)]


RULES: dict[str, Callable[[Evidence], Outcome]] = {
    "raci": raci_rules,
    "standard_path": standard_path_rules,
    "isolation": isolation_rules,
    "residency": residency_rules,
    "secrets": secrets_rules,
}


def rules(record: Evidence) -> Outcome:
    """The suggestions and stop factors of any governance record (other kinds: none)."""
    rule = RULES.get(record.kind)
    return rule(record) if rule is not None else []
