"""The report in English, Russian and Kazakh: every word through the gettext catalogues.

One mechanism (`gpudecide.i18n`): the English text is the msgid, the translations live in
`locale/<lang>/LC_MESSAGES/<domain>.po`, and `docs/glossary.md` fixes the domain terms the
catalogues use. This module adds what the report needs on top of it:

- `t(key, lang)`: the report frame's headings by key (the keys the renderer and the older
  section builders use), each key naming one English msgid of the "report" domain;
- messages: a figure that a person reads is stored in the evidence as a message id and its
  arguments (`message(...)`) next to the English text, and rendered in the reader's language
  (`render_message`), numbers, percentages and money formatted per locale by Babel;
- `localize`: text an analysis wrote in English without a message id (summaries and notes
  of older records) is matched against the catalogue's patterns and translated, its numbers
  re-formatted; text that matches nothing stays as written;
- `install(env)`: the template globals `tr`, `summary_of`, `notes_of`, `verdict_label` of
  the HTML and Markdown templates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from importlib import resources
from typing import Any

from gpudecide import evidence as ev
from gpudecide.fmt import when
from gpudecide.i18n import (
    Language,
    babel_locale,
    catalogue,
    current_language,
    is_language,
    speaking,
    translator,
)
from gpudecide.message import is_message, render
from gpudecide.message import message as _message

__all__ = [
    "Language",
    "command_lines",
    "install",
    "localize",
    "message",
    "moment",
    "notes_of",
    "problems_of",
    "render_message",
    "say",
    "summary_of",
    "t",
    "tr",
    "verdict_label",
]

_ = translator("report")


def N_(msgid: str) -> str:
    """Mark an English msgid for extraction; it is translated where it is shown."""
    return msgid


_PATTERN_IDS: set[str] = set()


def P_(msgid: str) -> str:
    """Mark an English msgid as a pattern: text an analysis wrote without a message id is
    matched against it (`localize`). Only marked msgids are patterns, so a generic format
    string ("{gpus} at {time}") never half-translates a sentence it happens to fit."""
    _PATTERN_IDS.add(msgid)
    return msgid


# The report frame's headings by key (renderer and section builders call `t(key, lang)`).
KEYS: dict[str, str] = {
    "report_title": N_("GPU decision report"),
    "generated": N_("Generated"),
    "evidence_index": N_("Evidence on record"),
    "kind": N_("Analysis"),
    "verdict": N_("Verdict"),
    "status": N_("Status"),
    "inputs": N_("Inputs"),
    "notes": N_("Not measured / notes"),
    "fresh": N_("fresh"),
    "stale": N_("STALE: an input changed"),
    "missing_input": N_("STALE: an input is gone"),
    "tampered": N_("TAMPERED: the record was edited"),
    "bad_input": N_("STALE: an input cannot be read"),
    "no_evidence": N_("No evidence yet: run an analysis (for example `gpudecide profile`)."),
    "profile": N_("Workload profile"),
    "jobs_by_kind": N_("Jobs by kind"),
    "key_figures": N_("Key figures"),
    "per_week": N_("Per week"),
    "chart_jobs_week": N_("Jobs per week, by kind"),
    "chart_gpu_day": N_("GPU-hours per day"),
    "chart_concurrency": N_("GPUs in use over time"),
    "figure": N_("Figure"),
    "value": N_("Value"),
    "jobs": N_("Jobs"),
    "gpu_hours": N_("GPU-hours"),
    "week": N_("Week"),
    "queue": N_("Queue: waits, SLOs, preemption, chains"),
    "replay": N_("Dedicated pool replay"),
    "chart_wait_cdf": N_("Queue waits against the SLO thresholds"),
    "chart_phases": N_("Median phase durations by job kind"),
    "chart_chains": N_("Chains: waiting (light) and running (dark)"),
    "chart_pool_curve": N_("p95 wait and utilisation against pool size"),
    "phases": N_("Lifecycle phases (Q1)"),
    "wait_reasons": N_("Wait reasons by total wait (Q2)"),
    "chains": N_("Chains (Q5)"),
    "pools": N_("Pool sizes"),
}

VERDICTS: dict[str, str] = {
    "pass": N_("pass"),
    "warn": N_("warn"),
    "fail": N_("fail"),
    "info": N_("info"),
}

# Why a record is not fresh (gpudecide.evidence.freshness), translated by pattern.
PROBLEMS = (
    P_("the record was edited after it was written"),
    P_("{path}: input is gone"),
    P_("{path}: input changed since the evidence was computed"),
    P_("{path}: bad input: {reason}"),
    P_("{path}: bad input: cannot read ({reason})"),
    P_("figures damaged ({error}): re-run the analysis"),
    P_("{path}: cites a record that is {state}: {why}"),
    P_("stale"),
    P_("tampered"),
    P_("missing_input"),
    P_("bad_input"),
)

# The catalogue domain of each evidence kind, for summaries and notes written in English.
KIND_DOMAINS: dict[str, tuple[str, ...]] = {
    "profile": ("jobs", "report"),
    "queue": ("queue", "report"),
    "replay": ("queue", "report"),
    "cost": ("cost", "report"),
    "audit": ("artifacts", "report"),
}


def t(key: str, lang: Language | None = None) -> str:
    """A heading of the report frame in the report's language (English when missing).

    An unknown key is shown as it is rather than breaking the report."""
    lang = lang or current_language()
    return _(KEYS.get(key, key), lang)


def tr(msgid: str, lang: str | None = None, domain: str = "report") -> str:
    """`msgid` of `domain` in `lang` (the templates' translator)."""
    lang = lang or current_language()
    return translator(domain)(msgid, lang)


def verdict_label(verdict: str, lang: str | None = None) -> str:
    """pass / warn / fail / info in the reader's language."""
    lang = lang or current_language()
    return _(VERDICTS.get(verdict, verdict), lang)


# --- messages: a message id and its arguments, stored in the evidence, rendered per reader ---


def message(domain: str, msgid: str, **args: Any) -> dict[str, Any]:
    """Transitional: `gpudecide.message.message`, typed as the plain dict older callers hold."""
    return dict(_message(domain, msgid, **args))


def render_message(msg: Mapping[str, Any], lang: str) -> str:
    """Transitional: `gpudecide.message.render` in `lang`."""
    with speaking(lang if is_language(lang) else "en"):  # type: ignore[arg-type]
        return render(msg)


def say(text: str, msg: Mapping[str, Any] | None, lang: str, domains: Iterable[str] = ()) -> str:
    """A text that an analysis stored in English and, where it could, as a message: the
    message in `lang` when there is one, else the English matched against the catalogues of
    `domains` (every catalogue when none are named)."""
    if lang == "en":
        return text
    if msg:
        return render_message(msg, lang)
    return localize(text, lang, tuple(domains) or _all_domains(lang))


# --- English text without a message id: catalogue patterns, numbers re-formatted ---

_FIELD = re.compile(r"\{(\w+)(?::[^}]*)?\}")
_NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})*(?:\.\d+)?%?|-?\d+(?:\.\d+)?%?")


# Catalogues whose every msgid with fields is a pattern: "errors" holds the messages written
# at each InputError(...) (tests/test_error_i18n.py extracts them), none of them marked.
MATCHED_WHOLE = frozenset({"errors"})


def _patterns(domain: str, lang: str) -> list[tuple[re.Pattern[str], int, str]]:
    return _compiled(domain, lang, len(_PATTERN_IDS))


@lru_cache(maxsize=64)
def _compiled(domain: str, lang: str, _marked: int) -> list[tuple[re.Pattern[str], int, str]]:
    """The catalogue's pattern msgids (`P_`) with fields as anchored regular expressions,
    their literal length, and their translation. A field never spans "; " (the parts of a
    summary). `_marked` keys the cache: a module marking more patterns refreshes it."""
    out: list[tuple[re.Pattern[str], int, str]] = []
    entries = catalogue(domain, lang)
    # A domain that marks its patterns uses only those; one that marks none (a package that
    # stores no English to match) offers every msgid with fields, and so does a catalogue
    # written to be matched whole (the errors: a msgid marked elsewhere must not narrow it).
    marked = domain not in MATCHED_WHOLE and any(m in _PATTERN_IDS for m in entries)
    for msgid, translated in entries.items():
        if "{" not in msgid or (marked and msgid not in _PATTERN_IDS):
            continue
        parts = _FIELD.split(msgid)
        seen: set[str] = set()
        regex = ""
        for i, part in enumerate(parts):
            if i % 2 == 0:
                regex += re.escape(part)
            elif part in seen:  # the same field twice: the same text twice
                regex += f"(?P={part})"
            else:
                seen.add(part)
                regex += f"(?P<{part}>(?:(?!; ).)+?)"
        literal = sum(len(p) for p in parts[::2])
        if literal == 0:
            continue  # "{text}" alone matches every sentence and would translate nothing
        try:
            out.append((re.compile(f"^{regex}$", re.DOTALL), literal, translated))
        except re.error:
            continue
    return out


def _number(text: str, lang: str) -> str:
    """An English-formatted number (or percentage) captured from text, in `lang`'s format."""
    percent = text.endswith("%")
    raw = text.rstrip("%").replace(",", "")
    try:
        value = Decimal(raw)
    except InvalidOperation:
        return text
    places = len(raw.split(".")[1]) if "." in raw else 0
    # Babel's number tables load here, on the first translated number: an English run and
    # `--help` never need them.
    from babel.numbers import format_decimal, format_percent

    loc = babel_locale(lang)
    if percent:
        pattern = "#,##0" + ("." + "0" * places if places else "") + "%"
        return str(format_percent(value / 100, format=pattern, locale=loc))
    pattern = "#,##0" + ("." + "0" * places if places else "")
    return str(format_decimal(value, format=pattern, locale=loc))


def _value(text: str, lang: str, domains: tuple[str, ...]) -> str:
    """A captured field: a number re-formatted, a phrase translated, anything else as is."""
    if _NUMBER.fullmatch(text):
        return _number(text, lang)
    return localize(text, lang, domains)


def _fill(translated: str, args: Mapping[str, str]) -> str:
    """The translated pattern with the captured (and localized) fields put back."""
    return _FIELD.sub(lambda f: args.get(f.group(1), f.group(0)), translated)


def localize(text: str, lang: str, domains: Iterable[str]) -> str:
    """English `text` in `lang` via the catalogues of `domains`: exact, pattern, or parts.

    Of the patterns that match, the one leaving the fewest English words wins (then the one
    with the most literal text): "base {option}: {label}" beats "{role}: {hours} h x {rate}"
    on "base kz-2: pool: 2 GPUs x 730 h x 1,150". A field never spans "; " unless no
    pattern matches the parts; a text made of parts joined by "; " is then translated part by
    part. What matches nothing stays as written (ids, file names, the team's own words).
    """
    domains = tuple(domains)
    if lang == "en" or not text:
        return text
    for domain in domains:
        exact = catalogue(domain, lang).get(text)
        if exact is not None:
            return exact
    best: tuple[int, int, str] | None = None
    for domain in domains:
        for regex, literal, translated in _patterns(domain, lang):
            m = regex.match(text)
            if m is None:
                continue
            out = _fill(translated, {k: _value(v, lang, domains) for k, v in m.groupdict().items()})
            score = (len(_ENGLISH.findall(out)), -literal, out)
            if best is None or score[:2] < best[:2]:
                best = score
            if score[0] == 0:
                break
    if best is not None and best[0] == 0:
        return best[2]
    if "; " in text:
        parts = "; ".join(localize(p, lang, domains) for p in text.split("; "))
        if best is None or len(_ENGLISH.findall(parts)) <= best[0]:
            return parts
    return best[2] if best is not None else text


_ENGLISH = re.compile(r"(?<![\w./\[-])[a-z]{2,}(?![\w./\[-])")


@lru_cache(maxsize=8)
def _all_domains(lang: str) -> tuple[str, ...]:
    """Every catalogue domain of `lang` ("report" last)."""
    folder = resources.files("gpudecide") / "locale" / lang / "LC_MESSAGES"
    if not folder.is_dir():
        return ("report",)
    names = sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".po"))
    return (*[n for n in names if n != "report"], "report")


def _domains(kind: str, lang: str) -> tuple[str, ...]:
    """The catalogues a record's English text is looked up in: its kind's, else every one."""
    return KIND_DOMAINS.get(kind) or _all_domains(lang)


SummaryRenderer = Callable[[ev.Evidence, str], str]
_SUMMARIES: dict[str, SummaryRenderer] = {}


def register_summary(kind: str, renderer: SummaryRenderer) -> None:
    """Let a section module say a record's summary in ru/kk from its figures.

    For records whose analysis stores no message id: the renderer rebuilds the sentence from
    the figures in the reader's language (English keeps the record's own summary).
    """
    _SUMMARIES[kind] = renderer


def summary_of(record: ev.Evidence, lang: str | None = None) -> str:
    """The record's summary in `lang`: its stored message, a registered renderer, or the
    catalogue patterns; in English the record's own summary."""
    lang = lang or current_language()
    msgs = record.figures.get("messages") if isinstance(record.figures, dict) else None
    if isinstance(msgs, dict) and isinstance(msgs.get("summary"), dict):
        return render_message(msgs["summary"], lang)
    if lang != "en" and record.kind in _SUMMARIES:
        try:
            return _SUMMARIES[record.kind](record, lang)
        except (KeyError, TypeError, ValueError):
            pass  # figures of an older shape: fall back to the patterns
    return localize(record.summary, lang, _domains(record.kind, lang))


def notes_of(record: ev.Evidence, lang: str | None = None) -> list[str]:
    """The record's notes in `lang` (stored messages first, else the catalogue patterns)."""
    lang = lang or current_language()
    msgs = record.figures.get("messages") if isinstance(record.figures, dict) else None
    stored = msgs.get("notes") if isinstance(msgs, dict) else None
    if isinstance(stored, list) and len(stored) == len(record.notes):
        return [render_message(m, lang) for m in stored]
    domains = _domains(record.kind, lang)
    return [localize(n, lang, domains) for n in record.notes]


def command_lines(record: ev.Evidence, lang: str | None = None) -> list[str]:
    """What a command prints for people about the record it wrote: the summary, then each
    note ("note: ..."), in `lang` (English: the record's own lines, unchanged)."""
    lang = lang or current_language()
    note = _("note: {text}", lang)
    return [summary_of(record, lang), *(note.format(text=n) for n in notes_of(record, lang))]


def moment(iso: str, lang: str | None = None) -> str:
    """A UTC time of the record ("2026-06-04T08:12:00Z") in the reader's locale, UTC kept.

    English keeps the ISO form; an unreadable value is shown as it is.
    """
    lang = lang or current_language()
    if lang == "en" or not iso:
        return iso
    try:
        parsed = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    with speaking(lang if is_language(lang) else "en"):  # type: ignore[arg-type]
        return f"{when(parsed)} UTC"


def problems_of(problems: Iterable[object], lang: str | None = None) -> list[str]:
    """Why a record is not fresh, in the reader's language: each a stored message (paths
    as they are), or a text as written."""
    with speaking(lang if is_language(lang) else current_language()):  # type: ignore[arg-type]
        return [render(p) if is_message(p) else str(p) for p in problems]


def install(env: Any) -> None:
    """Give the templates `tr`, `summary_of`, `notes_of`, `problems_of`, `verdict_label`
    and `moment`."""
    env.globals.update(
        tr=tr,
        problems_of=problems_of,
        summary_of=summary_of,
        notes_of=notes_of,
        verdict_label=verdict_label,
        moment=moment,
    )
