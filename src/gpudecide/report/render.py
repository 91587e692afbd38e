"""Render the evidence of a workspace as HTML, Markdown and JSON.

The renderer knows no analysis by name: the caller passes the section builders, in report
order (`gpudecide.sections.SECTIONS` lists every package's). The HTML is a single file with
inline CSS and inline SVG: no script, font or stylesheet is fetched, so it opens the same in
an air-gapped network.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import BaseModel, Field

from gpudecide import __version__
from gpudecide import evidence as ev
from gpudecide.fsutil import atomic_write_set
from gpudecide.i18n import current_language, speaking
from gpudecide.jsonio import utc_iso
from gpudecide.message import english, message
from gpudecide.redact import redact
from gpudecide.report.i18n import Language, t
from gpudecide.report.i18n import install as install_i18n
from gpudecide.report.model import Overview, OverviewBuilder, Section, SectionBuilder
from gpudecide.report.signature import SignatureShown

__all__ = [
    "JsonReport",
    "JsonSection",
    "Report",
    "build",
    "is_number",
    "to_html",
    "to_json",
    "to_markdown",
    "write",
]


@dataclass
class Report:
    """Everything the three renderers need."""

    title: str
    team: str
    decision: str
    language: Language
    generated_at_utc: str
    sections: list[Section]
    labels: dict[str, str]
    superseded: list[ev.Evidence] = field(default_factory=list)
    damaged: list[ev.Damaged] = field(default_factory=list)
    overview: Overview | None = None
    # The archive's signature as the signature file states it (None: not signed).
    signature: SignatureShown | None = None
    # Print and PDF: every <details> open.
    expanded: bool = False

    def groups(self) -> list[tuple[str | None, list[Section]]]:
        """The sections by the option they concern: the whole workload first, then the
        options in the overview's order (the leader first), then any other."""
        order = [o for o, _name in self.overview.options] if self.overview else []
        found = {s.option for s in self.sections}
        keys = [None, *[o for o in order if o in found]]
        keys += sorted(o for o in found if o is not None and o not in keys)
        return [(k, [s for s in self.sections if s.option == k]) for k in keys if k in found]

    def option_name(self, option: str) -> str:
        """An option's name for people, as the decision lists it."""
        names = dict(self.overview.options) if self.overview else {}
        return names.get(option, option)


def build(
    records: list[ev.Evidence],
    root: Path,
    builders: Mapping[str, SectionBuilder],
    *,
    team: str = "",
    decision: str = "",
    now: datetime | None = None,
    damaged: Sequence[ev.Damaged] = (),
    shown: Sequence[ev.Evidence] | None = None,
    overview: OverviewBuilder | None = None,
    signature: SignatureShown | None = None,
    snapshot: ev.Snapshot | None = None,
) -> Report:
    """Sections for the records shown (default: the newest of every kind and option), each
    with its freshness, and the first screen from the decision record (`overview`), in the
    reader's language (`gpudecide.i18n.speaking`).

    Kinds appear in the order of `builders`; kinds without a builder follow in record order.
    Records not shown (a newer one replaces them) and damaged files are listed apart.
    `snapshot`: the one the records were scanned in, whose reads the freshness checks reuse.
    """
    if shown is None:
        shown = list(ev.current(records).values())
    rank = {kind: i for i, kind in enumerate(builders)}
    ordered = sorted(
        shown, key=lambda r: (rank.get(r.kind, len(rank)), ev.subject(r)[1] or "", r.id)
    )
    kinds = [r.kind for r in ordered]
    anchors: dict[str, int] = {}
    sections: list[Section] = []
    snapshot = snapshot or ev.Snapshot(root)
    for record in ordered:
        kind, option = ev.subject(record)
        state, problems = snapshot.freshness(record)
        base = kind if kinds.count(kind) == 1 else f"{kind}-{option or 'all'}"
        anchors[base] = anchors.get(base, 0) + 1
        section = Section(
            anchor=base if anchors[base] == 1 else f"{base}-{anchors[base]}",
            title=record.title,
            record=record,
            freshness=state.value,
            freshness_label=t(state.value),
            problems=problems,
            option=option,
        )
        builder = builders.get(kind)
        if builder is not None:
            _fill(builder, section)
        sections.append(section)
    stamp = utc_iso(now or datetime.now(UTC)) or ""
    labels = {
        k: t(k)
        for k in (
            "report_title",
            "generated",
            "evidence_index",
            "kind",
            "verdict",
            "status",
            "inputs",
            "notes",
            "no_evidence",
        )
    }
    decisions = [s.record for s in sections if s.record.kind == "decision"]
    first = overview(decisions[-1]) if overview is not None and decisions else None
    shown_ids = {r.id for r in shown}
    return Report(
        overview=first,
        signature=signature,
        title=t("report_title"),
        team=redact(team),
        decision=redact(decision),
        language=current_language(),
        generated_at_utc=stamp,
        sections=sections,
        labels=labels,
        superseded=[r for r in records if r.id not in shown_ids],
        damaged=list(damaged),
    )


def _fill(builder: SectionBuilder, section: Section) -> None:
    """Run a section builder; a record whose figures do not have the shape its analysis
    writes is shown as damaged, and the rest of the report still renders."""
    try:
        builder(section)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        section.tables.clear()
        section.charts.clear()
        section.problems.append(
            message(
                "report",
                "figures damaged ({error}): re-run the analysis",
                error=f"{type(exc).__name__}: {str(exc)[:80]}",
            )
        )


_NUMBER_CELL = re.compile(
    r"[-+−]?\d[\d\s\u00a0\u202f.,]*(?:%|\s?[*~]|\s?[^\W\d_]{1,5}\.?)?(?:\s?/\s?\d+)?"
)

_ENV = Environment(
    loader=PackageLoader("gpudecide.report", "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


def is_number(cell: str) -> bool:
    """Whether a table cell holds a figure (right-aligned): digits with the locale's signs,
    an optional sign, a percent or a short unit ("1 290 966", "12,5%", "0.8 h", "4 ~")."""
    return bool(_NUMBER_CELL.fullmatch(cell.strip())) if cell else False


install_i18n(_ENV)
_ENV.globals["is_number"] = is_number


def to_html(report: Report) -> str:
    """The single self-contained HTML file."""
    with speaking(report.language):
        return _ENV.get_template("report.html.j2").render(r=report, version=__version__)


def to_markdown(report: Report) -> str:
    """The same content as Markdown (charts left out; their numbers are in the tables)."""
    with speaking(report.language):
        return _ENV.get_template("report.md.j2").render(r=report, version=__version__)


class JsonSection(BaseModel):
    """One section of report.json: the record in full, with its freshness."""

    kind: str
    title: str
    freshness: str = Field(description="fresh | stale | missing_input | tampered | superseded")
    problems: list[str]
    evidence: ev.Evidence


class JsonReport(BaseModel):
    """Schema of report.json (published as `schemas/report.schema.json`)."""

    title: str
    team: str
    decision: str
    generated_at_utc: str
    tool_version: str
    sections: list[JsonSection]
    signature: dict[str, Any] | None = Field(
        default=None,
        description="The archive's signature as its file states it (unchecked: "
        "`gpudecide verify` checks it); null when the workspace is not signed.",
    )


def to_json(report: Report) -> str:
    """Machine form: every record in full, with its freshness."""
    body = JsonReport(
        title=report.title,
        team=report.team,
        decision=report.decision,
        generated_at_utc=report.generated_at_utc,
        tool_version=__version__,
        sections=[
            JsonSection(
                kind=s.record.kind,
                title=s.title,
                freshness=s.freshness,
                problems=[english(p) for p in s.problems],
                evidence=s.record,
            )
            for s in report.sections
        ],
        signature=report.signature.as_dict() if report.signature else None,
    )
    return json.dumps(body.model_dump(), indent=2, ensure_ascii=False) + "\n"


def write(report: Report, out_dir: Path, *, pdf: bool = False) -> dict[str, Path]:
    """Write index.html, report.md and report.json (and report.pdf) as one unit: a reader
    sees the old set or the new one, never a mix or a part (the folder is swapped in one
    rename)."""
    names = {"html": "index.html", "markdown": "report.md", "json": "report.json"}
    files = {
        names["html"]: to_html(report).encode("utf-8"),
        names["markdown"]: to_markdown(report).encode("utf-8"),
        names["json"]: to_json(report).encode("utf-8"),
    }
    if pdf:
        from gpudecide.report.pdf import pdf_bytes

        names["pdf"] = "report.pdf"
        printed = Report(**{**report.__dict__, "expanded": True})
        files[names["pdf"]] = pdf_bytes(to_html(printed))
    atomic_write_set(out_dir, files)
    return {kind: out_dir / name for kind, name in names.items()}
