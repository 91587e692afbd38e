"""Who owns what, per option: the RACI table of raci.yaml (SPEC R1-R3, G3, D5).

Each activity (R3's six questions, R1's experiment-quality duties, G3's pool and vendor
operations) names, per option, who is Responsible, Accountable, Consulted and Informed:
people of the team or vendors. The check finds what makes an incident bounce between
support queues: no Accountable (a stop factor), several, a vendor as Accountable, a row of
vendors only, an R1 duty handed to a vendor, an on-call duty with nobody of the team on call
(stop), an option with no on-call duty at all (stop: nobody answers when it breaks), a
dedicated option with nobody to replace a node (stop), one person carrying too large a share
of the on-call work (bus factor) and, for R2, a duty whose Responsible lacks its role.

A row left unanswered for an option (no assignment names it, or its assignment names only
the template's placeholder people and vendors, whose name starts with "placeholder") is "not
checked": listed as such, never a stop factor by being empty. An option with no answered row
at all is not checked as a whole. Stop factors come only from answers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpudecide.errors import InputError
from gpudecide.governance.findings import Figure, Finding, RecordMessages, finding
from gpudecide.governance.loading import Loaded, load
from gpudecide.governance.standard_path import StandardPathSpec
from gpudecide.options import OPTION_ID_PATTERN, OptionDecl, OptionKind

__all__ = [
    "DEDICATED",
    "ID_PATTERN",
    "PLACEHOLDER",
    "RACI_NAME",
    "ROLES",
    "Activity",
    "ActivityRow",
    "Assignment",
    "Person",
    "RaciFigures",
    "RaciFile",
    "RaciOptionFigures",
    "RaciResult",
    "Role",
    "Vendor",
    "check",
    "is_dedicated",
    "is_placeholder",
    "load_raci",
    "option_kinds",
]

RACI_NAME = "raci.yaml"
ID_PATTERN = r"^[a-z0-9][a-z0-9_.-]*$"
Role = Literal["platform_engineer", "ml_engineer", "security_engineer", "data_owner", "other"]
ROLES: tuple[Role, ...] = (
    "platform_engineer",
    "ml_engineer",
    "security_engineer",
    "data_owner",
    "other",
)
_ALL_KINDS: tuple[OptionKind, ...] = ("owned", "rented", "managed")
DEDICATED: frozenset[str] = frozenset({"owned", "rented"})
# How the template marks a person or vendor still to be named.
PLACEHOLDER = "placeholder"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Person(_Strict):
    """A person of the team."""

    id: str = Field(pattern=ID_PATTERN, description="Short id used in the table.")
    name: str = Field(default="", description="Name shown in the report.")
    roles: list[Role] = Field(min_length=1, description="What the person is (R2).")
    on_call: bool = Field(default=False, description="On the on-call rota.")


class Vendor(_Strict):
    """A vendor: its staff can be Responsible, never the team's Accountable."""

    id: str = Field(pattern=ID_PATTERN, description="Short id used in the table.")
    name: str = Field(default="", description="Name shown in the report.")


class Assignment(_Strict):
    """R/A/C/I of one activity for one option."""

    options: list[Annotated[str, Field(pattern=OPTION_ID_PATTERN)]] = Field(
        min_length=1, description="Option ids (gpudecide.yaml) this row of letters is for."
    )
    responsible: list[str] = Field(default_factory=list, description="Who does it.")
    accountable: list[str] = Field(default_factory=list, description="Who answers for it (one).")
    consulted: list[str] = Field(default_factory=list, description="Asked before.")
    informed: list[str] = Field(default_factory=list, description="Told after.")


class Activity(_Strict):
    """One row of the table."""

    id: str = Field(pattern=ID_PATTERN, description="Short id of the activity.")
    title: str = Field(min_length=1, description="What is done.")
    spec: Literal["R1", "R3", "G3", "A8", "H2", "other"] = Field(
        default="other", description="SPEC group: R1 duties may not go to a vendor."
    )
    applies_to: list[OptionKind] = Field(
        default_factory=lambda: list(_ALL_KINDS),
        description="Kinds of option that need this activity (a hybrid: its contours' kinds).",
    )
    role: Role = Field(default="ml_engineer", description="Role the Responsible needs (R2).")
    on_call: bool = Field(default=False, description="Done under incident pressure.")
    node_replacement: bool = Field(
        default=False, description="Replacing a failed node (D5 stop factor for dedicated)."
    )
    assignments: list[Assignment] = Field(default_factory=list, description="Per option.")


class RaciFile(_Strict):
    """Schema of raci.yaml."""

    version: Literal[1] = Field(default=1, description="Schema version.")
    bus_factor_max_share: float = Field(
        default=0.5, gt=0, le=1, description="Largest share of on-call duties one person may carry."
    )
    people: list[Person] = Field(default_factory=list, description="People of the team.")
    vendors: list[Vendor] = Field(default_factory=list, description="Vendors.")
    activities: list[Activity] = Field(default_factory=list, description="The table.")
    standard_path: StandardPathSpec | None = Field(
        default=None, description="What the work needs against what each option offers (R4, R5)."
    )


class RaciOptionFigures(Figure):
    """One option's row of the `raci` figures: what the team and the vendors carry.
    `not_checked` names the activities left unanswered for it; `answered` is false when no
    activity is answered (the whole row is not checked)."""

    option: str
    activities: int
    assigned: int
    team_responsible: int
    vendor_responsible: int
    roles_needed: dict[str, int]
    on_call_load: dict[str, int]
    stopped: bool
    findings: list[Finding]
    answered: bool = True
    not_checked: list[str] = Field(default_factory=list)


class ActivityRow(Figure):
    """One row of the RACI table as the record keeps it (its letters per option)."""

    id: str
    title: str
    spec: Literal["R1", "R3", "G3", "A8", "H2", "other"]
    role: Role
    on_call: bool
    node_replacement: bool
    assignments: list[Assignment]


class RaciFigures(Figure):
    """The figures of a `raci` record (SPEC R1-R3, G3, D5)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"messages"})

    options: list[RaciOptionFigures]
    people: list[Person]
    vendors: list[Vendor]
    activities: list[ActivityRow]
    bus_factor_max_share: float
    findings: list[Finding]
    messages: RecordMessages | None = None


@dataclass
class RaciResult:
    """Findings and figures of one check."""

    findings: list[Finding]
    figures: RaciFigures


def _unique(ids: list[str], loaded: Loaded, key: str) -> None:
    seen: set[str] = set()
    for i, item in enumerate(ids):
        if item in seen:
            raise InputError("{item!r} is declared twice", **loaded.at((key, i, "id")), item=item)
        seen.add(item)


def load_raci(path: Path, options: list[OptionDecl]) -> tuple[RaciFile, Loaded]:
    """Validate raci.yaml: schema, unique ids, declared options, people and vendors."""
    raci, loaded = load(path, RaciFile)
    _unique([p.id for p in raci.people], loaded, "people")
    _unique([v.id for v in raci.vendors], loaded, "vendors")
    _unique([a.id for a in raci.activities], loaded, "activities")
    clash = {p.id for p in raci.people} & {v.id for v in raci.vendors}
    if clash:
        i = next(i for i, v in enumerate(raci.vendors) if v.id in clash)
        raise InputError(
            "{party!r} is both a person and a vendor",
            **loaded.at(("vendors", i)),
            party=raci.vendors[i].id,
        )
    parties = [p.id for p in raci.people] + [v.id for v in raci.vendors]
    for a_i, act in enumerate(raci.activities):
        seen: set[str] = set()
        for s_i, asg in enumerate(act.assignments):
            base: tuple[int | str, ...] = ("activities", a_i, "assignments", s_i)
            for o_i, oid in enumerate(asg.options):
                loaded.require_option(oid, options, (*base, "options", o_i))
                if oid in seen:
                    raise InputError(
                        "option {option!r} is assigned twice",
                        **loaded.at((*base, "options", o_i)),
                        option=oid,
                    )
                seen.add(oid)
            for letter in ("responsible", "accountable", "consulted", "informed"):
                for n_i, name in enumerate(getattr(asg, letter)):
                    loaded.require_in(name, parties, "party", (*base, letter, n_i))
    return raci, loaded


def option_kinds(option: OptionDecl, options: list[OptionDecl]) -> set[str]:
    """The kinds an option stands for: a hybrid counts as each of its contours."""
    by_id = {o.id: o for o in options}
    kinds: set[str] = {option.kind}
    kinds.update(by_id[c].kind for c in option.contours if c in by_id)
    return kinds


def is_dedicated(option: OptionDecl, options: list[OptionDecl]) -> bool:
    """Owned or rented, or a hybrid with an owned or rented contour."""
    return bool(option_kinds(option, options) & DEDICATED)


def is_placeholder(name: str) -> bool:
    """Whether a person's or vendor's name is still the template's placeholder."""
    return name.strip().casefold().startswith(PLACEHOLDER)


class _Table:
    """The parties of raci.yaml, to tell people of the team from vendors and real parties
    from the template's placeholders."""

    def __init__(self, raci: RaciFile) -> None:
        self.people = {p.id: p for p in raci.people}
        self.vendors = {v.id for v in raci.vendors}
        self.placeholders = {p.id for p in raci.people if is_placeholder(p.name)} | {
            v.id for v in raci.vendors if is_placeholder(v.name)
        }

    def answers(self, asg: Assignment | None) -> bool:
        """Whether an assignment is an answer: it exists and names someone who is not a
        placeholder (an assignment naming nobody is an answer: nobody)."""
        if asg is None:
            return False
        named = asg.responsible + asg.accountable + asg.consulted + asg.informed
        return not named or not set(named) <= self.placeholders

    def team(self, names: list[str]) -> list[str]:
        return [n for n in names if n in self.people]

    def vendors_in(self, names: list[str]) -> list[str]:
        return [n for n in names if n in self.vendors]


def _row_findings(act: Activity, asg: Assignment, oid: str, t: _Table) -> list[Finding]:
    """Findings of one answered activity for one option."""
    if not asg.accountable:
        return [finding("no_accountable", oid, True, "R3", activity=act.id)]
    out: list[Finding] = []
    named = asg.responsible + asg.accountable + asg.consulted + asg.informed
    for name in sorted(set(named) & t.placeholders):
        out.append(finding("placeholder_party", oid, False, "R3", activity=act.id, who=name))
    if len(asg.accountable) > 1:
        out.append(
            finding(
                "multiple_accountable",
                oid,
                False,
                "R3",
                activity=act.id,
                who=", ".join(asg.accountable),
            )
        )
    for name in t.vendors_in(asg.accountable):
        out.append(finding("accountable_not_team", oid, False, "R3", activity=act.id, who=name))
    owners = t.team(asg.responsible + asg.accountable)
    if not owners:
        out.append(finding("vendor_only", oid, False, "R3", activity=act.id))
    if act.spec == "R1":
        for name in t.vendors_in(asg.responsible + asg.accountable):
            out.append(finding("r1_vendor", oid, False, "R1", activity=act.id, who=name))
    if act.on_call and not any(t.people[n].on_call for n in owners):
        out.append(finding("no_on_call", oid, True, "D5", activity=act.id))
    doers = t.team(asg.responsible)
    if doers and not any(act.role in t.people[n].roles for n in doers):
        out.append(
            finding(
                "role_uncovered",
                oid,
                False,
                "R2",
                activity=act.id,
                role=act.role,
                who=", ".join(doers),
            )
        )
    return out


def _bus_factor(
    oid: str, on_call: list[tuple[Activity, Assignment]], t: _Table, share: float
) -> tuple[Counter[str], list[Finding]]:
    """How many on-call duties each person of the team does; who carries more than `share`."""
    load_count: Counter[str] = Counter()
    for _, asg in on_call:
        for name in set(t.team(asg.responsible)):
            load_count[name] += 1
    found = [
        finding(
            "bus_factor",
            oid,
            False,
            "R2",
            who=name,
            count=n,
            total=len(on_call),
            share=round(n / len(on_call), 3),
            limit=share,
        )
        for name, n in sorted(load_count.items())
        if n / len(on_call) > share
    ]
    return load_count, found


def _option_row(
    option: OptionDecl,
    acts: list[tuple[Activity, Assignment | None]],
    t: _Table,
    share: float,
    options: list[OptionDecl],
) -> RaciOptionFigures:
    oid = option.id
    answered = [(a, s) for a, s in acts if s is not None and t.answers(s)]
    unchecked = [a.id for a, s in acts if s is None or not t.answers(s)]
    found: list[Finding] = []
    if answered:
        for act, asg in answered:
            found.extend(_row_findings(act, asg, oid, t))
        found += _on_call_duty(option, acts)
        found += _node_replacement(option, acts, answered, options)
    on_call = [(a, s) for a, s in answered if a.on_call]
    load_count, overloaded = _bus_factor(oid, on_call, t, share) if on_call else (Counter(), [])
    found += overloaded
    roles: Counter[str] = Counter()
    for act, asg in answered:
        if t.team(asg.responsible):
            roles[act.role] += 1
    return RaciOptionFigures(
        option=oid,
        activities=len(acts),
        assigned=len(answered),
        team_responsible=sum(1 for _, s in answered if t.team(s.responsible)),
        vendor_responsible=sum(1 for _, s in answered if t.vendors_in(s.responsible)),
        roles_needed={r: roles[r] for r in ROLES if roles[r]},
        on_call_load=dict(sorted(load_count.items())),
        stopped=any(f.stop for f in found),
        findings=found,
        answered=bool(answered),
        not_checked=unchecked,
    )


def _on_call_duty(
    option: OptionDecl, acts: list[tuple[Activity, Assignment | None]]
) -> list[Finding]:
    """D5: an answered option with no on-call duty at all in the table is stopped: nobody of
    the team answers when it breaks. On-call rows left unanswered are not checked (no stop);
    an answered on-call row is judged by its own owners (`no_on_call`, `no_accountable`)."""
    if any(a.on_call for a, _ in acts):
        return []
    return [finding("no_on_call_duty", option.id, True, "D5")]


def _node_replacement(
    option: OptionDecl,
    acts: list[tuple[Activity, Assignment | None]],
    answered: list[tuple[Activity, Assignment]],
    options: list[OptionDecl],
) -> list[Finding]:
    """D5: a dedicated option with nobody Responsible for replacing a node is stopped: no
    such activity in the table, or one answered with nobody Responsible. Left unanswered, it
    is not checked."""
    if not is_dedicated(option, options):
        return []
    rows = [a for a, _ in acts if a.node_replacement]
    given = [(a, s) for a, s in answered if a.node_replacement]
    if any(s.responsible for _, s in given):
        return []
    if rows and not given:
        return []  # not checked
    activity = rows[0].id if rows else "-"
    return [finding("no_node_replacement", option.id, True, "D5", activity=activity)]


def check(raci: RaciFile, options: list[OptionDecl]) -> RaciResult:
    """Run every RACI finding for every declared option."""
    t = _Table(raci)
    rows: list[RaciOptionFigures] = []
    for option in options:
        kinds = option_kinds(option, options)
        acts = [
            (act, next((s for s in act.assignments if option.id in s.options), None))
            for act in raci.activities
            if kinds & set(act.applies_to)
        ]
        rows.append(_option_row(option, acts, t, raci.bus_factor_max_share, options))
    findings = [f for row in rows for f in row.findings]
    figures = RaciFigures(
        options=rows,
        people=list(raci.people),
        vendors=list(raci.vendors),
        activities=[_activity_row(a) for a in raci.activities],
        bus_factor_max_share=raci.bus_factor_max_share,
        findings=findings,
    )
    return RaciResult(findings, figures)


def _activity_row(act: Activity) -> ActivityRow:
    return ActivityRow(
        id=act.id,
        title=act.title,
        spec=act.spec,
        role=act.role,
        on_call=act.on_call,
        node_replacement=act.node_replacement,
        assignments=list(act.assignments),
    )
