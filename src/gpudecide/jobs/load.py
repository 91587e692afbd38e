"""Load any number of job logs into one canonical attempt table.

The formats a log may be read as and the time-zone type are settings of the workspace too:
they are declared in `gpudecide.log_settings` and named here for the readers of logs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from gpudecide.errors import InputError
from gpudecide.fsutil import open_regular, require_regular_file
from gpudecide.jobs import kubernetes, managed, slurm_json, sql
from gpudecide.jobs.sacct import BadRow, ParseResult, read_sacct
from gpudecide.jobs.schema import ATTEMPTS_SCHEMA
from gpudecide.jobs.tabular import read_tabular
from gpudecide.jsonio import read_json
from gpudecide.log_formats import FORMATS, LogFormat
from gpudecide.log_settings import IanaZone, is_zone
from gpudecide.message import Message, english

__all__ = [
    "FORMATS",
    "Detected",
    "IanaZone",
    "JobLog",
    "LogFormat",
    "LogSpec",
    "check_timezone",
    "detect_format",
    "load_logs",
    "log_span",
]


@dataclass(frozen=True)
class LogSpec:
    """One log with how to read it (a workspace's `logs:` entry)."""

    path: Path
    format: LogFormat = "auto"
    sacct_format: str | None = None


@dataclass
class JobLog:
    """Attempts from every source, plus what had to be skipped and why.

    Each attempt names its source (the `source` column: the log's path as given); the
    detected format, the notes and the duplicate rows dropped are kept per source too, so
    that `part` gives the log of some of the sources as if they had been read alone (the
    logs of one option, read with all of the team's).
    """

    attempts: pa.Table
    sources: list[Path]
    bad_rows: list[BadRow] = field(default_factory=list)
    duplicate_rows: int = 0
    # what a reader of the figures must know about the sources, as messages
    note_messages: list[Message] = field(default_factory=list)
    # the source (path as given) of each note, in the same order
    note_sources: list[str] = field(default_factory=list)
    # the format each source was read as (detected or given), event lists included
    formats: dict[str, str] = field(default_factory=dict)
    # duplicate rows dropped per source (a row repeated in a later log counts for that log)
    duplicates_by_source: dict[str, int] = field(default_factory=dict)

    @property
    def notes(self) -> list[str]:
        """The notes in English."""
        return [english(m) for m in self.note_messages]

    def part(self, paths: list[Path]) -> JobLog:
        """The attempts, skipped rows, notes and formats of these sources only."""
        keep = [str(p) for p in paths]
        wanted = set(keep)
        mask = pc.is_in(self.attempts.column("source"), value_set=pa.array(keep, pa.string()))
        notes = [
            (m, s)
            for m, s in zip(self.note_messages, self.note_sources, strict=True)
            if s in wanted
        ]
        return JobLog(
            attempts=self.attempts.filter(mask),
            sources=[p for p in self.sources if str(p) in wanted],
            bad_rows=[b for b in self.bad_rows if b.path in wanted],
            duplicate_rows=sum(n for s, n in self.duplicates_by_source.items() if s in wanted),
            note_messages=[m for m, _s in notes],
            note_sources=[s for _m, s in notes],
            formats={s: f for s, f in self.formats.items() if s in wanted},
            duplicates_by_source={
                s: n for s, n in self.duplicates_by_source.items() if s in wanted
            },
        )


def check_timezone(tz: str) -> str:
    """Validate an IANA zone name (sacct prints local time; --tz says which)."""
    if not is_zone(tz):
        raise InputError(
            "unknown time zone {tz}",
            field="--tz",
            hint="use an IANA name such as Asia/Almaty",
            tz=repr(tz),
        )
    return tz


# Formats of lists that annotate the jobs of other logs and hold no jobs themselves.
_EVENTS = ("kubernetes-events", "openai-events")

Detected = Literal[
    "sacct",
    "slurm-json",
    "csv",
    "jsonl",
    "kubernetes",
    "sagemaker",
    "openai",
    "kubernetes-events",
    "openai-events",
]


def _detect_json(path: Path, docs: dict[Path, Any] | None) -> Detected:
    doc = read_json(path)
    if docs is not None:
        docs[path] = doc  # parsed once: the reader takes it from here
    if slurm_json.is_slurm_json(doc):
        return "slurm-json"
    kind = kubernetes.list_kind(doc)
    if kind == "pods":
        return "kubernetes"
    if kind == "events":
        return "kubernetes-events"
    if managed.is_sagemaker(doc):
        return "sagemaker"
    if managed.openai_jobs(doc) is not None:
        return "openai"
    if managed.is_openai_events(doc):
        return "openai-events"
    raise InputError(
        "JSON of no known job source",
        path=path,
        hint="expected `sacct --json`, `kubectl get pods -o json` or `kubectl get events -o "
        "json`, SageMaker DescribeTrainingJob, or OpenAI fine_tuning.job objects",
    )


def detect_format(path: Path, docs: dict[Path, Any] | None = None) -> Detected:
    """Format from the extension and content (JSON sources by their shape). A JSON document
    read to tell its shape is put in `docs` under its path, so it is parsed only once."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        return _detect_json(path, docs)
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    with open_regular(path) as handle:
        try:
            head = handle.read(4096)
        except OSError as exc:
            raise InputError("cannot read: {strerror}", path=path, strerror=exc.strerror) from None
    first = next((ln.strip() for ln in head.splitlines() if ln.strip()), b"")
    if first == b"{":
        # a lone brace opens one indented JSON document (sacct --json saved under any
        # name); a JSON Lines record holds a whole object on its line
        return _detect_json(path, docs)
    if first.startswith(b"{"):
        return "jsonl"
    if first.startswith(b"["):
        return _detect_json(path, docs)
    if b"|" in first or not first:
        return "sacct"
    if b"," in first:
        return "csv"
    return "sacct"


def _existing_files(specs: list[LogSpec]) -> None:
    for spec in specs:
        require_regular_file(spec.path, "job log")


def _read_events(
    specs: list[LogSpec], kinds: list[Detected], docs: dict[Path, Any]
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """Kubernetes events by pod and OpenAI events by fine-tuning job."""
    # Event lists are not job logs: they annotate the pods / fine-tuning jobs read with them.
    k8s_events: dict[str, list[dict[str, Any]]] = {}
    openai_events: dict[str, list[dict[str, Any]]] = {}
    for spec, kind in zip(specs, kinds, strict=True):
        if kind == "kubernetes-events":
            for key, evs in kubernetes.index_events(spec.path, docs.pop(spec.path, None)).items():
                k8s_events.setdefault(key, []).extend(evs)
        elif kind == "openai-events":
            job_id = spec.path.name.removesuffix(".json").removesuffix(".events")
            doc = docs.pop(spec.path, None)
            openai_events[job_id] = (read_json(spec.path) if doc is None else doc)["data"]
    return k8s_events, openai_events


def _read_jobs(
    specs: list[LogSpec],
    kinds: list[Detected],
    docs: dict[Path, Any],
    *,
    tz: str,
    skip_bad_rows: bool,
) -> list[ParseResult]:
    k8s_events, openai_events = _read_events(specs, kinds, docs)
    results: list[ParseResult] = []
    for spec, kind in zip(specs, kinds, strict=True):
        path = spec.path
        doc = docs.pop(path, None)  # the JSON detection parsed, if it did
        if kind == "sacct":
            results.append(
                read_sacct(path, tz=tz, sacct_format=spec.sacct_format, skip_bad_rows=skip_bad_rows)
            )
        elif kind == "slurm-json":
            results.append(slurm_json.read_slurm_json(path, doc))
        elif kind in ("csv", "jsonl"):
            results.append(read_tabular(path, fmt=kind, tz=tz, skip_bad_rows=skip_bad_rows))
        elif kind == "kubernetes":
            results.append(kubernetes.read_kubernetes(path, k8s_events, doc))
        elif kind == "sagemaker":
            results.append(managed.read_sagemaker(path, doc))
        elif kind == "openai":
            results.append(managed.read_openai(path, openai_events, doc))
    if not results:
        raise InputError(
            "only event lists given, no jobs",
            hint="pass the pods (or fine-tuning jobs) the events belong to",
        )
    return results


def _require_rows_left(merged: pa.Table, bad_rows: list[BadRow]) -> None:
    if merged.num_rows == 0 and bad_rows:
        # Nothing left to analyse: the figures would describe an empty log "as of" now.
        first = bad_rows[0]
        raise InputError(
            "every job row was skipped ({count} bad row(s)); the first: {reason}",
            path=first.path,
            line=first.line,
            field=first.field,
            hint="fix the rows: nothing is left to analyse",
            count=len(bad_rows),
            reason=first.reason,
        )


def _drop_repeated_attempts(merged: pa.Table) -> pa.Table:
    """The same attempt listed in several (overlapping) logs, kept once."""
    con = sql.connect(merged=merged)
    deduped = (
        con.sql(
            "SELECT * EXCLUDE (_k) FROM (SELECT *, row_number() OVER (PARTITION BY job_id, "
            "attempt, submit, start, state ORDER BY source) AS _k FROM merged) WHERE _k = 1"
        )
        .to_arrow_table()
        .cast(ATTEMPTS_SCHEMA)
    )
    con.close()
    return deduped


def load_logs(
    paths: list[Path] | list[LogSpec],
    *,
    fmt: LogFormat = "auto",
    tz: str = "UTC",
    sacct_format: str | None = None,
    skip_bad_rows: bool = False,
) -> JobLog:
    """Read every log; identical attempts listed in overlapping dumps are kept once.

    Plain paths use `fmt` and `sacct_format`; a LogSpec carries its own.
    """
    if not paths:
        raise InputError("no job log given", hint="pass one or more sacct/CSV/JSONL files")
    check_timezone(tz)
    specs = [p if isinstance(p, LogSpec) else LogSpec(p, fmt, sacct_format) for p in paths]
    _existing_files(specs)
    docs: dict[Path, Any] = {}
    kinds = [detect_format(s.path, docs) if s.format == "auto" else s.format for s in specs]
    results = _read_jobs(specs, kinds, docs, tz=tz, skip_bad_rows=skip_bad_rows)
    # the readers' results are in the order of the job logs (event lists read none)
    job_sources = [str(s.path) for s, k in zip(specs, kinds, strict=True) if k not in _EVENTS]
    merged = pa.concat_tables([r.table for r in results]).cast(ATTEMPTS_SCHEMA)
    bad_rows = [b for r in results for b in r.bad_rows]
    _require_rows_left(merged, bad_rows)
    duplicates = {s: r.duplicate_rows for s, r in zip(job_sources, results, strict=True)}
    if len(results) > 1:
        before = _rows_by_source(merged)
        merged = _drop_repeated_attempts(merged)
        after = _rows_by_source(merged)
        for source, n in before.items():
            duplicates[source] = duplicates.get(source, 0) + n - after.get(source, 0)
    return JobLog(
        attempts=merged,
        sources=[s.path for s in specs],
        bad_rows=bad_rows,
        duplicate_rows=sum(duplicates.values()),
        note_messages=[n for r in results for n in r.note_messages],
        note_sources=[
            s for s, r in zip(job_sources, results, strict=True) for _n in r.note_messages
        ],
        formats={str(s.path): k for s, k in zip(specs, kinds, strict=True)},
        duplicates_by_source=duplicates,
    )


def _rows_by_source(table: pa.Table) -> dict[str, int]:
    counts = table.group_by("source").aggregate([("source", "count")]).to_pylist()
    return {str(c["source"]): int(c["source_count"]) for c in counts}


def log_span(attempts: pa.Table) -> tuple[datetime | None, datetime | None]:
    """Earliest submission and latest event of a log, in UTC (None for an empty log).

    The latest event ends the profile window and is the "as of" time of queue waits.
    """
    con = sql.connect(attempts=attempts)
    first, last = con.execute(
        "SELECT min(least(coalesce(submit, start), coalesce(start, submit))), "
        'max(greatest(coalesce("end", start, submit), coalesce(start, submit), submit)) '
        "FROM attempts"
    ).fetchall()[0]
    con.close()
    return (
        first.astimezone(UTC) if first else None,
        last.astimezone(UTC) if last else None,
    )
