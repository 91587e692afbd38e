"""Render the evidence of a workspace as HTML, Markdown and JSON.

The renderer knows no analysis by name: the caller passes the section builders, in report
order (`gpudecide.sections.SECTIONS` lists every package's). The HTML is a single file with
inline CSS and inline SVG: no script, font or stylesheet is fetched, so it opens the same in
an air-gapped network.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import BaseModel, Field

from gpudecide import __version__
from gpudecide import evidence as ev
from gpudecide.fsutil import atomic_write_set
from gpudecide.jsonio import utc_iso
from gpudecide.report.i18n import Language, t
from gpudecide.report.i18n import install as install_i18n
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
    superseded: list[ev.Evidence] = field(default_factory=list)
    damaged: list[ev.Damaged] = field(default_factory=list)


def build(
    records: list[ev.Evidence],
    root: Path,
    builders: Mapping[str, SectionBuilder],
    *,
    team: str = "",
    decision: str = "",
    language: Language = "en",
    now: datetime | None = None,
    damaged: Sequence[ev.Damaged] = (),
) -> Report:
    """Sections for the newest record of every kind and option, each with its freshness.

    Kinds appear in the order of `builders`; kinds without a builder follow in record order.
    Records a newer one replaces, and damaged files, are listed apart (never mixed in).
    """
    newest = ev.current(records)
    rank = {kind: i for i, kind in enumerate(builders)}
    order = sorted(newest, key=lambda s: (rank.get(s[0], len(rank)), s[1] or ""))
    kinds = [s[0] for s in order]
    sections: list[Section] = []
    for kind, option in order:
        record = newest[(kind, option)]
        state, problems = ev.freshness(record, root)
        section = Section(
            anchor=kind if kinds.count(kind) == 1 else f"{kind}-{option or 'all'}",
            title=record.title,
            record=record,
            freshness=state.value,
            freshness_label=t(state.value, language),
            problems=problems,
        )
        builder = builders.get(kind)
        if builder is not None:
            _fill(builder, section, language)
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
        superseded=[r for r in records if r.id in ev.superseded(records)],
        damaged=list(damaged),
    )


def _fill(builder: SectionBuilder, section: Section, language: Language) -> None:
    """Run a section builder; a record whose figures do not have the shape its analysis
    writes is shown as damaged, and the rest of the report still renders."""
    try:
        # Transitional: a builder not yet reading the run's language takes it as an argument.
        if len(inspect.signature(builder).parameters) > 1:
            builder(section, language)  # type: ignore[call-arg]
        else:
            builder(section)  # type: ignore[call-arg]
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        section.tables.clear()
        section.charts.clear()
        section.problems.append(
            f"figures damaged ({type(exc).__name__}: {str(exc)[:80]}): re-run the analysis"
        )


_ENV = Environment(
    loader=PackageLoader("gpudecide.report", "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
install_i18n(_ENV)


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
    """Write index.html, report.md and report.json as one unit: a reader sees the old three
    or the new three, never a mix or a part (the folder is swapped in one rename)."""
    names = {"html": "index.html", "markdown": "report.md", "json": "report.json"}
    atomic_write_set(
        out_dir,
        {
            names["html"]: to_html(report).encode("utf-8"),
            names["markdown"]: to_markdown(report).encode("utf-8"),
            names["json"]: to_json(report).encode("utf-8"),
        },
    )
    return {kind: out_dir / name for kind, name in names.items()}
