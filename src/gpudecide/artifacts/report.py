"""Report section of the export audit (registered as SECTION_BUILDERS["audit"]).

Every word a reader sees goes through the "artifacts" catalogue in the report's language; the
audit's details (hazards, absent items) are the messages the record stores beside them.
"""

from __future__ import annotations

from typing import Any

from gpudecide import fmt
from gpudecide.artifacts.retention import A8_QUESTIONS
from gpudecide.artifacts.words import BASES, HAZARDS, ITEMS, LAYERS, STATUSES, word
from gpudecide.i18n import translator
from gpudecide.message import render
from gpudecide.report.model import Section, Table

__all__ = ["HAZARDS", "ITEMS", "LAYERS", "STATUSES", "audit_section"]

_ = translator("artifacts")


def _raw(value: Any) -> str:
    """A figure as the audit wrote it, with the reader's number signs; n/a when absent."""
    return fmt.not_available() if value is None else fmt.digits(str(value))


def _said(entry: dict[str, Any], key: str = "detail") -> str:
    """An entry's stored message in the reader's language; without one, its text as written."""
    msg = entry.get("message")
    return render(msg) if msg else str(entry.get(key) or "")


def audit_section(section: Section) -> None:
    """Tables of an `audit` evidence record: layers, units, hazards, egress, A8."""
    f = section.record.figures
    section.title = _("Export audit: can the run leave and resume?")
    _layers_table(section, f)
    _units_table(section, f)
    _hazards_table(section, f)
    _egress_table(section, f)
    _retention_table(section, f)


def _layers_table(section: Section, f: dict[str, Any]) -> None:
    """Every E2 item of the four layers, found or missing, with its proof."""
    rows = []
    for layer, items in f["layers"].items():
        for item in items:
            rows.append(
                [
                    word(LAYERS, layer),
                    word(ITEMS, item["name"]),
                    word(STATUSES, item["status"]),
                    str(item.get("path") or _said(item)),
                ]
            )
    section.tables.append(
        Table(
            _("Four layers of the export (E2)"),
            [_("layer"), _("item"), _("status"), _("proof")],
            rows,
        )
    )


def _units_table(section: Section, f: dict[str, Any]) -> None:
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
                    u["path"],
                    u["kind"],
                    _("yes") if u["resumable"] else _("no"),
                    fmt.not_available() if u["step"] is None else str(u["step"]),
                    u["weights"] or "-",
                    u["optimizer_state"] or "-",
                ]
                for u in f["units"]
            ],
        )
    )


def _hazard_text(h: dict[str, Any]) -> str:
    """What the hazard means, then the audit's own detail."""
    if h["id"] not in HAZARDS:
        return _said(h)
    return f"{word(HAZARDS, h['id'])}: {_said(h)}"


def _hazards_table(section: Section, f: dict[str, Any]) -> None:
    """Each lock-in hazard (E5), a stop factor, with what it means and the audit's detail."""
    rows = [[h["id"], str(h["path"]), _hazard_text(h), h.get("spec", "")] for h in f["hazards"]]
    section.tables.append(
        Table(
            _("Lock-in hazards (E5): each is a stop factor"),
            [_("id"), _("path"), _("detail"), _("SPEC")],
            rows or [[_("none found"), "", "", ""]],
        )
    )


def _egress_table(section: Section, f: dict[str, Any]) -> None:
    """Measured egress and the window a migration of one run needs (E5, V1)."""
    eg = f.get("egress")
    if not eg:
        return
    basis = word(BASES, str(eg["extrapolated_from"]))
    section.tables.append(
        Table(
            _("Egress and migration window (E5, V1)"),
            [_("figure"), _("value")],
            [
                [_("source"), str(eg["source"])],
                [_("measured throughput (MB/s)"), _raw(eg["throughput_mb_s"])],
                [_("bytes measured"), fmt.fmt(eg["bytes"])],
                [_("parallel streams"), str(eg["streams"])],
                [_("bytes to move"), f"{fmt.fmt(eg['run_bytes'])} ({basis})"],
                [_("migration window (h)"), _raw(eg["migration_window_hours"])],
                [_("longest acceptable (h)"), _raw(eg.get("max_migration_hours"))],
            ],
        )
    )


def _retention_table(section: Section, f: dict[str, Any]) -> None:
    """The A8 questions, answered from retention.yaml or open."""
    questions = f["retention"]["questions"]
    section.tables.append(
        Table(
            _("Retention questions (A8)"),
            [_("question"), _("status"), _("answer"), _("source")],
            [
                [
                    word(A8_QUESTIONS, q["id"]) if q["id"] in A8_QUESTIONS else str(q["question"]),
                    word(STATUSES, q["status"]),
                    q.get("answer") or "",
                    q.get("source") or "",
                ]
                for q in questions
            ],
        )
    )
