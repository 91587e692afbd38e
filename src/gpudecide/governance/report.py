"""Report sections of the governance evidence (raci, standard_path, isolation, residency,
secrets): register `governance_section` as the builder of each of those kinds.

Every section reads its record through the figures model of its kind (`figures.figures_of`)
and ends with its findings, worded in the reader's language from their ids, each marked with
the option it concerns and whether it is a stop factor there (D5).
"""

from __future__ import annotations

from gpudecide.governance import charts, controls, messages
from gpudecide.governance.figures import (
    FIGURES,
    IsolationFigures,
    RaciFigures,
    ResidencyFigures,
    SecretsFigures,
    StandardPathFigures,
    figures_of,
)
from gpudecide.governance.findings import Finding
from gpudecide.governance.isolation import (
    BoundaryFigures,
    Coverage,
    IsolationOptionFigures,
    ProofFigures,
)
from gpudecide.governance.raci import Assignment
from gpudecide.governance.residency import SiteFigures
from gpudecide.i18n import translator
from gpudecide.report.model import Chart, Section, Table

__all__ = ["KINDS", "governance_section"]

_ = translator("governance")
KINDS = tuple(FIGURES)


def _yes(flag: bool) -> str:
    return _("yes") if flag else _("no")


def _findings_table(findings: list[Finding]) -> Table:
    rows = [
        [
            x.option or "-",
            _("STOP") if x.stop else "",
            messages.render(x.id, x.params),
            x.spec,
        ]
        for x in findings
    ]
    return Table(
        _("Findings: the option each concerns and whether it stops it"),
        [_("option"), _("stop factor"), _("finding"), "SPEC"],
        rows or [[_("none"), "", "", ""]],
    )


def _letters(asg: Assignment) -> str:
    parts = []
    for names, letter in (
        (asg.responsible, "R"),
        (asg.accountable, "A"),
        (asg.consulted, "C"),
        (asg.informed, "I"),
    ):
        if names:
            parts.append(f"{letter}: {', '.join(names)}")
    return "; ".join(parts)


def _raci(section: Section, f: RaciFigures) -> None:
    section.title = _("Ownership per option (RACI)")
    options = [o.option for o in f.options]
    section.tables.append(
        Table(
            _("Per option: who carries the activities (R2, R3)"),
            [
                _("option"),
                _("activities"),
                _("team Responsible"),
                _("vendor Responsible"),
                _("roles needed"),
                _("on-call load"),
                _("not checked"),
                _("stopped"),
            ],
            [
                [
                    o.option,
                    str(o.activities),
                    str(o.team_responsible),
                    str(o.vendor_responsible),
                    ", ".join(f"{k} {v}" for k, v in o.roles_needed.items()),
                    ", ".join(f"{k} {v}" for k, v in o.on_call_load.items()),
                    str(len(o.not_checked)) if o.answered else messages.term("not checked"),
                    _yes(o.stopped),
                ]
                for o in f.options
            ],
        )
    )
    unchecked = {o.option: set(o.not_checked) for o in f.options}
    rows = []
    for act in f.activities:
        cells = []
        for oid in options:
            asg = next((a for a in act.assignments if oid in a.options), None)
            if act.id in unchecked[oid]:
                cells.append(messages.term("not checked"))
            else:
                cells.append(_letters(asg) if asg else "-")
        rows.append([f"{act.title} ({act.spec})", *cells])
    section.tables.append(Table(_("RACI table"), [_("activity"), *options], rows))


def _standard_path(section: Section, f: StandardPathFigures) -> None:
    section.title = _("Standard path fit and control (R4, R5)")
    section.tables.append(
        Table(
            _("What the work needs against what each option supports"),
            [
                _("option"),
                _("kind"),
                _("gaps"),
                _("R5 controls"),
                _("SSH access (not counted)"),
            ],
            [
                [
                    o.option,
                    o.kind,
                    "; ".join(o.gaps) or "-",
                    f"{len(o.controls)}/{o.controls_total}",
                    _yes(o.ssh_access),
                ]
                for o in f.options
            ],
        )
    )


def _proof_text(proof: ProofFigures) -> str:
    if proof.kind == "document":
        return f'{proof.document} (sha256 {(proof.sha256 or "")[:12]}): "{proof.excerpt}"'
    if proof.kind == "test":
        return str(proof.test)
    return messages.term("claim")


def _isolation_chart(f: IsolationFigures) -> Chart:
    title = _("Boundaries per option: evidenced, claimed, open, not checked")
    options = [o.option for o in f.options]
    counts: dict[str, list[int]] = {"evidenced": [], "claimed": [], "open": [], "not_checked": []}
    for o in f.options:
        states = [b.status for b in o.boundaries if b.answered]
        unchecked = sum(1 for b in o.boundaries if not b.answered)
        counts["evidenced"].append(states.count("evidenced"))
        counts["claimed"].append(states.count("claimed"))
        counts["open"].append(len(states) - states.count("evidenced") - states.count("claimed"))
        counts["not_checked"].append(unchecked)
    labels = {
        "evidenced": messages.term("evidenced"),
        "claimed": messages.term("claimed"),
        "open": messages.term("open"),
        "not_checked": messages.term("not checked"),
        "axis": _("boundaries"),
    }
    return Chart(title, charts.boundary_status(options, counts, labels, title))


def _adversary(adversary: str) -> str:
    name = messages.ADVERSARY_NAMES.get(adversary)
    return f"{_(name)} ({adversary})" if name else adversary


def _boundary_cells(b: BoundaryFigures, required: set[str]) -> list[str]:
    mechanism = b.mechanism or "-"
    if b.custody is not None:
        who = _(messages.CUSTODY_NAMES[b.custody])
        mechanism = _("{mechanism}; who can use the keys: {custody}").format(
            mechanism=mechanism, custody=who
        )
    return [
        b.boundary,
        messages.term(b.status) if b.answered else messages.term("not checked"),
        _yes(b.boundary in required),
        mechanism,
        _proof_text(b.proof) if b.answered else "-",
        ", ".join(b.controls),
    ]


def _isolation(section: Section, f: IsolationFigures) -> None:
    section.title = _("Isolation boundaries and threat model")
    if f.options:
        section.charts.append(_isolation_chart(f))
    section.tables.append(
        Table(
            _("Threat model: assets, adversaries, required boundaries (I2)"),
            [_("asset"), _("closed"), _("adversary"), _("requires")],
            [
                [
                    a.name or a.id,
                    _yes(a.closed),
                    _adversary(t.adversary),
                    ", ".join(t.requires),
                ]
                for a in f.assets
                for t in a.threats
            ],
        )
    )
    absent = [
        [
            o.option,
            _adversary(n.adversary),
            _(n.reason) if n.source == "kind" else n.reason,
            _("the option's kind") if n.source == "kind" else _("the team"),
        ]
        for o in f.options
        for n in o.not_applied
    ]
    if absent:
        section.tables.append(
            Table(
                _("Adversaries that cannot reach an option, and why (I2)"),
                [_("option"), _("adversary"), _("reason"), _("stated by")],
                absent,
            )
        )
    for o in f.options:
        title = _("{option}: boundaries, proof and NIST SP 800-53 controls (I3-I5)")
        if not o.answered:
            title = _("{option}: not checked (nothing answered in isolation.yaml)")
        section.tables.append(
            Table(
                title.format(option=o.option),
                [
                    _("boundary"),
                    _("status"),
                    _("required"),
                    _("mechanism"),
                    _("proof"),
                    _("controls"),
                ],
                [_boundary_cells(b, set(o.required)) for b in o.boundaries],
                verbatim=frozenset({0, 5}),
            )
        )
    families = sorted({fam for o in f.options for fam in o.coverage})
    section.tables.append(
        Table(
            _("Coverage per control family: evidenced / claimed / open (I5)"),
            [_("family"), *[o.option for o in f.options]],
            [
                [
                    f"{fam} {controls.family_name(fam)}",
                    *[_cov(o.coverage.get(fam)) for o in f.options],
                ]
                for fam in families
            ],
        )
    )
    items = list(f.options[0].regulated) if f.options else []
    section.tables.append(
        Table(
            _("Regulated evidence (I6): present or missing"),
            [_("document"), *[o.option for o in f.options]],
            [
                [
                    item,
                    *[_regulated_cell(o, item) for o in f.options],
                ]
                for item in items
            ],
        )
    )


def _regulated_cell(o: IsolationOptionFigures, item: str) -> str:
    if o.regulated[item]:
        return _("present")
    return _("missing") if o.answered else messages.term("not checked")


def _cov(c: Coverage | None) -> str:
    return f"{c.evidenced} / {c.claimed} / {c.open}" if c else "-"


def _residency(section: Section, f: ResidencyFigures) -> None:
    section.title = _("Data residency per option (I7)")
    section.tables.append(
        Table(
            _("Requirements (the team's; not legal advice)"),
            [
                _("asset"),
                _("allowed countries"),
                _("uses"),
                _("basis"),
                _("edition relied on"),
            ],
            [
                [
                    r.asset,
                    ", ".join(r.countries),
                    messages.terms(r.roles),
                    r.basis,
                    r.edition or _("not recorded"),
                ]
                for r in f.requirements
            ],
        )
    )
    rows = []
    for o in f.options:
        for a in o.assets:
            sites: list[SiteFigures | None] = [*a.sites] or [None]
            for s in sites:
                bad = s is not None and s in a.violations
                rows.append(
                    [
                        o.option,
                        a.asset,
                        s.where() if s else "-",
                        messages.terms(s.roles) if s else "-",
                        s.via if s else "-",
                        _("VIOLATION") if bad else "",
                    ]
                )
    section.tables.append(
        Table(
            _("Where each asset is stored, processed and backed up"),
            [
                _("option"),
                _("asset"),
                _("site"),
                _("uses"),
                _("via"),
                "",
            ],
            rows,
        )
    )


def _secrets(section: Section, f: SecretsFigures) -> None:
    section.title = _("Credentials in logs and configs (I3)")
    section.tables.append(
        Table(
            _("Scanned"),
            [_("files"), _("credentials")],
            [[str(f.files_scanned), str(f.secrets)]],
        )
    )


def governance_section(section: Section) -> None:
    """Tables of a raci, standard_path, isolation, residency or secrets record (another kind:
    nothing); figures of another shape raise, and the report shows the section as damaged."""
    if section.record.kind not in FIGURES:
        return
    f = figures_of(section.record)
    if isinstance(f, RaciFigures):
        _raci(section, f)
    elif isinstance(f, StandardPathFigures):
        _standard_path(section, f)
    elif isinstance(f, IsolationFigures):
        _isolation(section, f)
    elif isinstance(f, ResidencyFigures):
        _residency(section, f)
    else:
        _secrets(section, f)
    section.tables.append(_findings_table(list(f.findings)))
