"""What a report section is made of: formatted tables, inline SVG charts, the evidence."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gpudecide import evidence as ev
from gpudecide.message import Message

__all__ = ["Chart", "Overview", "OverviewBuilder", "Section", "SectionBuilder", "Table"]


@dataclass
class Table:
    """A captioned table of already formatted cells."""

    caption: str
    headers: list[str]
    rows: list[list[str]]
    # Columns shown verbatim (in <code>): commands, paths, ids that must not be translated.
    verbatim: frozenset[int] = frozenset()


@dataclass
class Chart:
    """An inline SVG chart."""

    title: str
    svg: str


@dataclass
class Section:
    """One analysis as shown in the report; a builder fills title, tables and charts."""

    anchor: str
    title: str
    record: ev.Evidence
    freshness: str
    freshness_label: str
    problems: list[Message]
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    # The option the record is about (None: the whole workload), for the index by option.
    option: str | None = None


@dataclass
class Overview:
    """The first screen of the report: the decision in plain words, from its record.

    `status` is decided, provisional, tie or no_option_passes; each list holds sentences
    already in the reader's language; `actions` are (command, what it settles) pairs."""

    status: str
    status_label: str
    verdict: str
    headline: str
    option: str | None
    why: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)
    actions: list[tuple[str, str]] = field(default_factory=list)
    # The order of the options in the evidence index (the leader first) and their names.
    options: list[tuple[str, str]] = field(default_factory=list)


OverviewBuilder = Callable[[ev.Evidence], Overview]


# Transitional: `(section, lang)` until every builder reads the run's language.
SectionBuilder = Callable[[Section], None]
