"""The report in English, Russian and Kazakh: every word through the gettext catalogues.

One mechanism (`gpudecide.i18n`): the English text is the msgid, the translations live in
`locale/<lang>/LC_MESSAGES/<domain>.po`, and `docs/glossary.md` fixes the domain terms the
catalogues use. This module adds what the report needs on top of it:

- `t(key)`: the report frame's headings by key (the keys the renderer and the older
  section builders use), each key naming one English msgid of the "report" domain;
- a record's summary and notes in the reader's language: every analysis stores them as
  messages (`figures["messages"]`, `gpudecide.message.record_texts`) beside the English; a
  record written without them (by hand, or by another tool) reads as written;
- `install(env)`: the template globals `tr`, `summary_of`, `notes_of`, `verdict_label` of
  the HTML and Markdown templates.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gpudecide.fmt import moment
from gpudecide.i18n import Language, translator
from gpudecide.message import is_message, render

if TYPE_CHECKING:
    from gpudecide import evidence as ev

__all__ = [
    "KEYS",
    "N_",
    "VERDICTS",
    "Language",
    "command_lines",
    "install",
    "moment",
    "notes_of",
    "problems_of",
    "summary_of",
    "t",
    "tr",
    "verdict_label",
]

_ = translator("report")


def N_(msgid: str) -> str:
    """Mark an English msgid for extraction; it is translated where it is shown."""
    return msgid


# The report frame's headings by key (renderer and section builders call `t(key)`).
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


def t(key: str) -> str:
    """A heading of the report frame in the reader's language (English when missing).

    An unknown key is shown as it is rather than breaking the report."""
    return _(KEYS.get(key, key))


def tr(msgid: str, domain: str = "report") -> str:
    """`msgid` of `domain` in the reader's language (the templates' translator)."""
    return translator(domain)(msgid)


def verdict_label(verdict: str) -> str:
    """pass / warn / fail / info in the reader's language."""
    return _(VERDICTS.get(verdict, verdict))


def summary_of(record: ev.Evidence) -> str:
    """The record's summary in the reader's language: its stored message, else as written."""
    msgs = record.figures.get("messages") if isinstance(record.figures, dict) else None
    if isinstance(msgs, dict) and is_message(msgs.get("summary")):
        return render(msgs["summary"])
    return record.summary


def notes_of(record: ev.Evidence) -> list[str]:
    """The record's notes in the reader's language: its stored messages, else as written."""
    msgs = record.figures.get("messages") if isinstance(record.figures, dict) else None
    stored = msgs.get("notes") if isinstance(msgs, dict) else None
    if isinstance(stored, list) and len(stored) == len(record.notes):
        return [
            render(m) if is_message(m) else str(n)
            for m, n in zip(stored, record.notes, strict=True)
        ]
    return list(record.notes)


def command_lines(record: ev.Evidence) -> list[str]:
    """What a command prints for people about the record it wrote: the summary, then each
    note ("note: ..."), in the reader's language (English: the record's own lines)."""
    note = _("note: {text}")
    return [summary_of(record), *(note.format(text=n) for n in notes_of(record))]


def problems_of(problems: Iterable[object]) -> list[str]:
    """Why a record is not fresh, in the reader's language: each a stored message (paths
    as they are), or a text as written."""
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
