"""Report section of the export audit (registered as SECTION_BUILDERS["audit"]).

Every word a reader sees goes through the "artifacts" catalogue in the report's language; the
audit's details (hazards, absent items) are the messages the record stores beside them.

Besides the export itself (E2 layers, checkpoints, hazards, egress) the section shows what
the team decided about keeping it (issue 22: A1 and A8 in the report): every artifact class
with its retention class, lifetime, location, encryption, backup and restore-test interval,
each pointing at the line of retention.yaml that says so, and the A8 questions with the
answer's line, or, for an open one, the line where it is to be answered.
"""

from __future__ import annotations

from gpudecide import fmt
from gpudecide.artifacts.figures import (
    ArtifactClassRow,
    AuditFigures,
    Hazard,
    Item,
    Question,
    RetentionFigures,
    RetentionOpen,
    figures_of,
)
from gpudecide.artifacts.retention import A8_QUESTIONS, ARTIFACT_CLASSES, FILE_NAME
from gpudecide.artifacts.words import (
    ARTIFACT_CLASS_NAMES,
    BASES,
    CUSTODIES,
    HAZARDS,
    ITEMS,
    LAYERS,
    STATUSES,
    word,
)
from gpudecide.i18n import translator
from gpudecide.message import render
from gpudecide.report.model import Section, Table

__all__ = [
    "HAZARDS",
    "ITEMS",
    "LAYERS",
    "STATUSES",
    "audit_section",
    "hazard_detail",
    "item_proof",
    "question_text",
]

_ = translator("artifacts")


def _raw(value: float | None) -> str:
    """A figure as the audit wrote it, with the reader's number signs; n/a when absent."""
    return fmt.not_available() if value is None else fmt.digits(str(value))


def hazard_detail(h: Hazard) -> str:
    """What is wrong, in the reader's language."""
    return render(h.message)


def item_proof(item: Item) -> str:
    """What proves an E2 item: its file, else why it is absent (in the reader's language)."""
    if item.path:
        return item.path
    return render(item.message) if item.message else item.detail


def question_text(q: Question) -> str:
    """An A8 question in the reader's language (one the tool does not know, as written)."""
    return word(A8_QUESTIONS, q.id) if q.id in A8_QUESTIONS else q.question


def audit_section(section: Section) -> None:
    """Tables of an `audit` evidence record: what it audited, layers, units, hazards, egress,
    the artifact classes' retention (A1, A3) and the A8 questions."""
    f = figures_of(section.record)
    section.title = _("Export audit: can the run leave and resume?")
    _audited_table(section, f)
    _layers_table(section, f)
    _units_table(section, f)
    _hazards_table(section, f)
    _egress_table(section, f)
    _classes_table(section, f.retention)
    _retention_table(section, f)


def _audited_table(section: Section, f: AuditFigures) -> None:
    """What the audit read: the storage, whose artifacts, the option it stands for."""
    if f.contour is None:
        return
    whose = (
        _("the vendor's own export")
        if f.contour.artifacts == "vendor_export"
        else _("produced here (not the vendor's export)")
    )
    rows = [[_("storage"), f.contour.storage], [_("artifacts"), whose]]
    if f.option is not None:
        rows.append([_("option"), f.option])
    section.tables.append(Table(_("What was audited"), [_("figure"), _("value")], rows))


def _layers_table(section: Section, f: AuditFigures) -> None:
    """Every E2 item of the four layers, found or missing, with its proof."""
    rows = [
        [word(LAYERS, layer), word(ITEMS, item.name), word(STATUSES, item.status), item_proof(item)]
        for layer, items in f.layers.items()
        for item in items
    ]
    section.tables.append(
        Table(
            _("Four layers of the export (E2)"),
            [_("layer"), _("item"), _("status"), _("proof")],
            rows,
        )
    )


def _units_table(section: Section, f: AuditFigures) -> None:
    """Each checkpoint: can training continue from it, or are these weights only (A2)."""
    section.tables.append(
        Table(
            _("Checkpoints: resumable or weights-only (A2)"),
            [
                _("path"),
                _("kind"),
                _("resumable"),
                _("step"),
                _("weights"),
                _("optimizer state"),
            ],
            [
                [
                    u.path,
                    u.kind,
                    _("yes") if u.resumable else _("no"),
                    fmt.not_available() if u.step is None else str(u.step),
                    u.weights or "-",
                    u.optimizer_state or "-",
                ]
                for u in f.units
            ],
        )
    )


def _hazard_text(h: Hazard) -> str:
    """What the hazard means, then the audit's own detail."""
    if h.id not in HAZARDS:
        return hazard_detail(h)
    return f"{word(HAZARDS, h.id)}: {hazard_detail(h)}"


def _hazards_table(section: Section, f: AuditFigures) -> None:
    """Each lock-in hazard (E5), a stop factor, with what it means and the audit's detail."""
    rows = [[h.id, str(h.path), _hazard_text(h), h.spec] for h in f.hazards]
    section.tables.append(
        Table(
            _("Lock-in hazards (E5): each is a stop factor"),
            [_("id"), _("path"), _("detail"), _("SPEC")],
            rows or [[_("none found"), "", "", ""]],
        )
    )


def _egress_table(section: Section, f: AuditFigures) -> None:
    """Measured egress and the window a migration of one run needs (E5, V1)."""
    eg = f.egress
    if eg is None:
        return
    basis = word(BASES, eg.extrapolated_from)
    section.tables.append(
        Table(
            _("Egress and migration window (E5, V1)"),
            [_("figure"), _("value")],
            [
                [_("source"), eg.source],
                [_("measured throughput (MB/s)"), _raw(eg.throughput_mb_s)],
                [_("bytes measured"), fmt.fmt(eg.bytes)],
                [_("parallel streams"), str(eg.streams)],
                [_("bytes to move"), f"{fmt.fmt(eg.run_bytes)} ({basis})"],
                [_("migration window (h)"), _raw(eg.migration_window_hours)],
                [_("longest acceptable (h)"), _raw(eg.max_migration_hours)],
            ],
        )
    )


def _no_policy() -> str:
    return _("no {file}: gpudecide init writes one").format(file=FILE_NAME)


def _class_rows(r: RetentionFigures | RetentionOpen) -> list[ArtifactClassRow]:
    """Every A1 artifact class; a record written before they were kept lists the classes the
    export holds, from `classes`."""
    if r.artifact_classes is not None:
        return r.artifact_classes
    mapping = r.classes if isinstance(r, RetentionFigures) else {}
    present = set(r.artifact_classes_present)
    return [
        ArtifactClassRow(
            artifact_class=c,
            present=True,
            retention_class=mapping[c].retention_class if c in mapping else None,
            source=r.policy if isinstance(r, RetentionFigures) and c in mapping else None,
        )
        for c in ARTIFACT_CLASSES
        if c in present
    ]


def _classes_table(section: Section, r: RetentionFigures | RetentionOpen) -> None:
    """Every artifact class (A1): in the export or not, its retention class with the
    lifetime and restore-test interval that class gives it, and the line of retention.yaml
    that maps it; then every retention class with where it is kept, how it is encrypted and
    backed up (A3), and the line it is defined at."""
    defined = r.retention_classes or {}
    used = r.classes if isinstance(r, RetentionFigures) else {}
    rows = []
    for row in _class_rows(r):
        present = _("yes") if row.present else _("no")
        name = word(ARTIFACT_CLASS_NAMES, row.artifact_class)
        if row.retention_class is None:
            where = (
                _("{policy}: add it under artifact_classes").format(policy=r.policy)
                if isinstance(r, RetentionFigures)
                else _no_policy()
            )
            rows.append([name, present, _("no retention decided"), "-", "-", where])
            continue
        cls = defined.get(row.retention_class)
        use = used.get(row.artifact_class)  # a record written before `retention_classes`
        lifetime = cls.lifetime_days if cls else use.lifetime_days if use else None
        restore = (
            cls.restore_test_interval_days
            if cls
            else use.restore_test_interval_days
            if use
            else None
        )
        rows.append(
            [
                name,
                present,
                row.retention_class,
                fmt.fmt(lifetime) if lifetime is not None else "-",
                fmt.fmt(restore) if restore is not None else "-",
                row.source or "",
            ]
        )
    section.tables.append(
        Table(
            _("Artifact classes and their retention (A1, A3)"),
            [
                _("artifact class"),
                _("in this export"),
                _("retention class"),
                _("lifetime (days)"),
                _("restore test every (days)"),
                _("source"),
            ],
            rows,
            verbatim=frozenset({2, 5}),
        )
    )
    if not defined:
        return
    section.tables.append(
        Table(
            _("Retention classes (A3)"),
            [
                _("retention class"),
                _("lifetime (days)"),
                _("location"),
                _("encryption"),
                _("backup"),
                _("restore test every (days)"),
                _("source"),
            ],
            [
                [
                    name,
                    fmt.fmt(c.lifetime_days),
                    c.location,
                    c.encryption,
                    c.backup,
                    fmt.fmt(c.restore_test_interval_days),
                    c.source,
                ]
                for name, c in defined.items()
            ],
            verbatim=frozenset({0, 6}),
        )
    )


def _question_source(q: Question, policy: str | None) -> str:
    """Where the answer is written, or for an open question where it is to be answered."""
    if q.status == "answered":
        return q.source or ""
    if q.asked_at:
        return _("answer it at {where}").format(where=q.asked_at)
    return _no_policy() if policy is None else _("answer it in {policy}").format(policy=policy)


def _retention_table(section: Section, f: AuditFigures) -> None:
    """The A8 questions, answered from retention.yaml or open, and who holds the keys."""
    r = f.retention
    rows = [
        [question_text(q), word(STATUSES, q.status), q.answer or "", _question_source(q, r.policy)]
        for q in r.questions
    ]
    if isinstance(r, RetentionFigures):
        if r.key_custody is not None:
            rows.append(
                [
                    _("Who holds the keys (key_custody)"),
                    word(STATUSES, "answered"),
                    word(CUSTODIES, r.key_custody),
                    r.key_custody_source or "",
                ]
            )
        else:
            rows.append(
                [
                    _("Who holds the keys (key_custody)"),
                    word(STATUSES, "open"),
                    "",
                    _("answer it in {policy}: questions.key_custody").format(policy=r.policy),
                ]
            )
    section.tables.append(
        Table(
            _("Retention questions (A8)"),
            [_("question"), _("status"), _("answer"), _("source")],
            rows,
        )
    )
