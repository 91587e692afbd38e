"""Render the evidence of a workspace as HTML, Markdown and JSON.

The renderer knows no analysis by name: the caller passes the section builders, in report
order (`gpudecide.sections.SECTIONS` lists every package's). The HTML is a single file with
inline CSS and inline SVG: no script, font or stylesheet is fetched, so it opens the same in
an air-gapped network.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import BaseModel, Field

from gpudecide import __version__
from gpudecide import evidence as ev
from gpudecide.fsutil import atomic_write_text
from gpudecide.jsonio import utc_iso
from gpudecide.report.i18n import Language, t
from gpudecide.report.model import Section, SectionBuilder


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


def build(
    records: list[ev.Evidence],
    root: Path,
    builders: Mapping[str, SectionBuilder],
    *,
    team: str = "",
    decision: str = "",
    language: Language = "en",
    now: datetime | None = None,
) -> Report:
    """Sections for the newest record of every kind, each with its freshness.

    Kinds appear in the order of `builders`; kinds without a builder follow in record order.
    """
    newest: dict[str, ev.Evidence] = {}
    for record in records:
        newest[record.kind] = record
    order = [k for k in builders if k in newest] + [k for k in newest if k not in builders]
    sections: list[Section] = []
    for kind in order:
        record = newest[kind]
        state, problems = ev.freshness(record, root)
        section = Section(
            anchor=kind,
            title=record.title,
            record=record,
            freshness=state.value,
            freshness_label=t(state.value, language),
            problems=problems,
        )
        builder = builders.get(kind)
        if builder is not None:
            builder(section, language)
        sections.append(section)
    stamp = utc_iso(now or datetime.now(UTC)) or ""
    labels = {
        k: t(k, language)
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
    return Report(
        title=t("report_title", language),
        team=team,
        decision=decision,
        language=language,
        generated_at_utc=stamp,
        sections=sections,
        labels=labels,
    )


_ENV = Environment(
    loader=PackageLoader("gpudecide.report", "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


def to_html(report: Report) -> str:
    """The single self-contained HTML file."""
    return _ENV.get_template("report.html.j2").render(r=report, version=__version__)


def to_markdown(report: Report) -> str:
    """The same content as Markdown (charts left out; their numbers are in the tables)."""
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
                problems=s.problems,
                evidence=s.record,
            )
            for s in report.sections
        ],
    )
    return json.dumps(body.model_dump(), indent=2, ensure_ascii=False) + "\n"


def write(report: Report, out_dir: Path) -> dict[str, Path]:
    """Write index.html, report.md and report.json atomically."""
    paths = {
        "html": out_dir / "index.html",
        "markdown": out_dir / "report.md",
        "json": out_dir / "report.json",
    }
    atomic_write_text(paths["html"], to_html(report))
    atomic_write_text(paths["markdown"], to_markdown(report))
    atomic_write_text(paths["json"], to_json(report))
    return paths
