"""Report section of the export audit (registered as SECTION_BUILDERS["audit"]).

Every word a reader sees goes through the "artifacts" catalogue in the report's language; the
audit's details (hazards, absent items) are the messages the record stores beside them.
"""

from __future__ import annotations

from gpudecide import fmt
from gpudecide.artifacts.figures import AuditFigures, Hazard, Item, Question, figures_of
from gpudecide.artifacts.retention import A8_QUESTIONS
from gpudecide.artifacts.words import BASES, HAZARDS, ITEMS, LAYERS, STATUSES, word
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
    """Tables of an `audit` evidence record: layers, units, hazards, egress, A8."""
    f = figures_of(section.record)
    section.title = _("Export audit: can the run leave and resume?")
    _layers_table(section, f)
    _units_table(section, f)
    _hazards_table(section, f)
    _egress_table(section, f)
    _retention_table(section, f)


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


def _retention_table(section: Section, f: AuditFigures) -> None:
    """The A8 questions, answered from retention.yaml or open."""
    section.tables.append(
        Table(
            _("Retention questions (A8)"),
            [_("question"), _("status"), _("answer"), _("source")],
            [
                [question_text(q), word(STATUSES, q.status), q.answer or "", q.source or ""]
                for q in f.retention.questions
            ],
        )
    )
