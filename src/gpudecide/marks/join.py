"""Runs joined to the attempts of a job log, and what their marks say about each attempt.

A run is joined to a job (SPEC Q1):

1. by a job id it carries: the id the team set, the Slurm array task (`<array>_<task>`),
   the Slurm job id, the SageMaker training job, the pod (a pod name is the attempt itself);
   an id the log does not list is an unknown job (unmatched, named file:line);
2. else by the name of a folder it sits in (an output directory named `4711`, `job-4711`,
   `slurm-4711`), when exactly one job of the log has that id;
3. else by host and time: its first moment inside exactly one attempt's start..end on a host
   the log names for that attempt (the `node`/`host`/`nodelist` the source kept; Slurm
   host lists such as `gpu[01-04]` are expanded). Two or more: ambiguous; none: unmatched.

Within the job, a Slurm restart count (`SLURM_RESTART_COUNT` n is attempt n+1), a pod or a
host-and-time join pins the attempt; otherwise each mark goes to the attempt whose
start..end holds it (a folder of checkpoints spans the requeues of one job). A mark before
its attempt's start or after its end, by more than the tolerance (the scheduler's times are
whole seconds and the clocks of two machines differ a little), is not used and is named.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from gpudecide.figure_model import StoredMessage
from gpudecide.marks.model import (
    MAX_LISTED,
    Mark,
    MarkSet,
    Problem,
    ProblemKind,
    Problems,
    Run,
    SourceKind,
    Where,
    host_names,
)
from gpudecide.message import Message, message, nmessage

__all__ = [
    "FILLED_FIELDS",
    "TOLERANCE_S",
    "Attempt",
    "AttemptRef",
    "FieldCounts",
    "FilledField",
    "JoinOutcome",
    "JoinReport",
    "JoinedBy",
    "RunJoin",
    "RunRef",
    "attempts_from_rows",
    "expand_hostlist",
    "join_runs",
]

TOLERANCE_S = 2.0
FilledField = Literal["prep_start", "first_step", "last_checkpoint"]
FILLED_FIELDS: tuple[FilledField, ...] = ("prep_start", "first_step", "last_checkpoint")
JoinOutcome = Literal["matched", "ambiguous", "unmatched"]
JoinedBy = Literal["job_id", "folder", "host_time"]

# Keys of a row's `extras` that name the machines it ran on (lower case).
_HOST_KEYS = (
    "node",
    "nodes",
    "nodelist",
    "node_list",
    "host",
    "hosts",
    "hostname",
    "exec_host",
    "nodename",
)
_FOLDER_PREFIX = re.compile(r"^(?:job|slurm|run)[-_]", re.IGNORECASE)
_MAX_HOSTS = 4096


def expand_hostlist(text: str) -> list[str]:
    """A Slurm host list (`gpu[01-03,07],cpu5`) as host names; at most 4096 names."""
    out: list[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\][^,\[]*)*", text):
        part = part.strip()
        if not part:
            continue
        match = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", part)
        if match is None:
            out.append(part)
            continue
        prefix, ranges, suffix = match.groups()
        for piece in ranges.split(","):
            bounds = piece.split("-", 1)
            if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
                lo, hi = int(bounds[0]), int(bounds[1])
                width = len(bounds[0])
                for n in range(lo, min(hi, lo + _MAX_HOSTS) + 1):
                    out.append(f"{prefix}{n:0{width}d}{suffix}")
            elif piece:
                out.append(f"{prefix}{piece}{suffix}")
            if len(out) >= _MAX_HOSTS:
                return out[:_MAX_HOSTS]
    return out[:_MAX_HOSTS]


@dataclass(frozen=True)
class Attempt:
    """One row of the job log, as the join needs it."""

    index: int
    job_id: str
    attempt: int
    start: datetime | None
    end: datetime | None
    site: str | None = None
    pod: str | None = None
    hosts: frozenset[str] = field(default_factory=frozenset)

    def holds(self, at: datetime, tolerance: timedelta) -> bool:
        """Whether `at` falls in start..end (an attempt still running has no end)."""
        if self.start is None:
            return False
        if at < self.start - tolerance:
            return False
        return self.end is None or at <= self.end + tolerance


def _extras(text: object) -> dict[str, Any]:
    if not isinstance(text, str) or not text:
        return {}
    try:
        doc = json.loads(text)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def attempts_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[Attempt]:
    """Attempts from canonical rows (`job_id`, `attempt`, `start`, `end`, `site`, `extras`:
    its `pod` and the host keys)."""
    out: list[Attempt] = []
    for index, row in enumerate(rows):
        extras = _extras(row.get("extras"))
        lowered = {str(k).lower(): v for k, v in extras.items()}
        names: list[str] = []
        for key in _HOST_KEYS:
            value = lowered.get(key)
            if isinstance(value, str):
                names.extend(expand_hostlist(value))
            elif isinstance(value, list):
                names.extend(str(v) for v in value[:_MAX_HOSTS] if isinstance(v, str))
        pod = lowered.get("pod")
        out.append(
            Attempt(
                index=index,
                job_id=str(row["job_id"]),
                attempt=int(row.get("attempt") or 1),
                start=row.get("start"),
                end=row.get("end"),
                site=row.get("site"),
                pod=pod if isinstance(pod, str) and pod else None,
                hosts=frozenset(host_names(names)),
            )
        )
    return out


class AttemptRef(BaseModel):
    """One attempt of a job, by id and number."""

    job_id: str
    attempt: int


class RunRef(BaseModel):
    """A run as the join report names it."""

    source: SourceKind
    name: str
    where: Where
    says: str


class RunJoin(BaseModel):
    """How one run was joined: to which job (and attempts), by what, or why not."""

    run: RunRef
    outcome: JoinOutcome
    by: JoinedBy | None = None
    job_id: str | None = None
    attempts: list[int] = Field(default_factory=list)
    candidates: list[AttemptRef] = Field(default_factory=list)
    message: StoredMessage


class FieldCounts(BaseModel):
    """For one field: attempts it was filled for from marks, and attempts whose log had a
    value already (kept, never overwritten)."""

    filled: int = 0
    kept: int = 0


class JoinReport(Problems):
    """The join of runs to jobs: counts exact, runs listed up to MAX_LISTED per outcome,
    and every problem of reading and joining (listed up to MAX_LISTED per kind), with the
    marks files and lines read."""

    files: int = 0
    lines: int = 0
    runs: int = 0
    matched: int = 0
    ambiguous: int = 0
    unmatched: int = 0
    joins: list[RunJoin] = Field(default_factory=list)
    fields: dict[FilledField, FieldCounts] = Field(
        default_factory=lambda: {name: FieldCounts() for name in FILLED_FIELDS}
    )

    def summary_message(self) -> Message:
        """One sentence: how many runs were joined, and how many were not."""
        return message(
            "marks",
            "marks: {matched}; {ambiguous}; {unmatched}",
            matched=nmessage(
                "marks",
                "{n} run joined to its job",
                "{n} runs joined to their jobs",
                n=self.matched,
            ),
            ambiguous=nmessage("marks", "{n} ambiguous", "{n} ambiguous", n=self.ambiguous),
            unmatched=nmessage("marks", "{n} unmatched", "{n} unmatched", n=self.unmatched),
        )

    def note_messages(self) -> list[Message]:
        """What a reader of the figures should know: the fields measured from marks, and
        the input that could not be used."""
        notes: list[Message] = []
        filled = self.fields
        words = {
            "prep_start": nmessage(
                "marks",
                "preparation start measured from marks for {n} attempt",
                "preparation start measured from marks for {n} attempts",
                n=filled["prep_start"].filled,
            ),
            "first_step": nmessage(
                "marks",
                "first training step measured from marks for {n} attempt",
                "first training step measured from marks for {n} attempts",
                n=filled["first_step"].filled,
            ),
            "last_checkpoint": nmessage(
                "marks",
                "last checkpoint measured from marks for {n} attempt",
                "last checkpoint measured from marks for {n} attempts",
                n=filled["last_checkpoint"].filled,
            ),
        }
        for name in FILLED_FIELDS:
            if filled[name].filled:
                notes.append(words[name])
        if self.problems_total:
            notes.append(
                nmessage(
                    "marks",
                    "{n} mark or file could not be used (named file:line in the join report)",
                    "{n} marks or files could not be used (named file:line in the join report)",
                    n=self.problems_total,
                )
            )
        return notes


@dataclass
class _Index:
    by_id: dict[str, list[Attempt]]
    by_pod: dict[str, Attempt]
    by_host: dict[str, list[Attempt]]
    any_hosts: bool


def _index(attempts: list[Attempt]) -> _Index:
    by_id: dict[str, list[Attempt]] = {}
    by_pod: dict[str, Attempt] = {}
    by_host: dict[str, list[Attempt]] = {}
    for a in attempts:
        by_id.setdefault(a.job_id, []).append(a)
        if a.pod:
            by_pod[a.pod] = a
        for host in a.hosts:
            by_host.setdefault(host, []).append(a)
    for rows in by_id.values():
        rows.sort(key=lambda a: a.attempt)
    return _Index(by_id, by_pod, by_host, any(a.hosts for a in attempts))


@dataclass
class _Joined:
    """A run's job: its attempts, and the one attempt it belongs to when that is known."""

    by: JoinedBy
    job_id: str
    attempts: list[Attempt]
    pinned: Attempt | None


def _ref(run: Run) -> RunRef:
    return RunRef(source=run.source, name=run.name, where=run.where, says=run.identity.says())


def _at(at: datetime | None) -> str:
    return at.isoformat() if at is not None else "-"


class _Join:
    def __init__(self, attempts: list[Attempt], tolerance_s: float) -> None:
        self.index = _index(attempts)
        self.tolerance = timedelta(seconds=tolerance_s)
        self.report = JoinReport()
        self.values: dict[int, dict[FilledField, datetime]] = {}

    def problem(self, kind: ProblemKind, where: Where, msg: Message) -> None:
        self.report.add(Problem(kind=kind, where=where, message=msg))

    def listed(self, join: RunJoin) -> None:
        count = getattr(self.report, join.outcome)
        setattr(self.report, join.outcome, count + 1)
        if count < MAX_LISTED:
            self.report.joins.append(join)

    def unmatched(self, run: Run, kind: ProblemKind, msg: Message) -> None:
        self.problem(kind, run.where, msg)
        self.listed(RunJoin(run=_ref(run), outcome="unmatched", message=msg))

    def ambiguous(self, run: Run, by: JoinedBy, cands: list[Attempt], msg: Message) -> None:
        self.problem("ambiguous", run.where, msg)
        refs = [AttemptRef(job_id=a.job_id, attempt=a.attempt) for a in cands[:20]]
        self.listed(
            RunJoin(run=_ref(run), outcome="ambiguous", by=by, candidates=refs, message=msg)
        )

    def _by_id(self, run: Run) -> _Joined | Literal[False] | None:
        """The run's job by the ids it carries; None without ids; False when it was said."""
        ident = run.identity
        ids = ident.job_ids()
        if not ids:
            return None
        for key in ids:
            pod = self.index.by_pod.get(key)
            if pod is not None:
                return _Joined("job_id", pod.job_id, [pod], pod)
            rows = self.index.by_id.get(key)
            if not rows:
                continue
            if ident.cluster and any(a.site for a in rows):
                rows = [a for a in rows if a.site in (None, ident.cluster)] or rows
            pinned = rows[0] if len(rows) == 1 else None
            if pinned is None and ident.slurm_restart_count is not None:
                pinned = next((a for a in rows if a.attempt == ident.slurm_restart_count + 1), None)
            return _Joined("job_id", key, rows, pinned)
        self.unmatched(
            run,
            "unknown_job",
            message("marks", "job {job} is not in the job log: its marks are not used", job=ids[0]),
        )
        return False

    def _by_folder(self, run: Run) -> _Joined | Literal[False] | None:
        found: dict[str, list[Attempt]] = {}
        for name in run.folders:
            for key in (name, _FOLDER_PREFIX.sub("", name)):
                rows = self.index.by_id.get(key)
                if rows:
                    found[key] = rows
        if not found:
            return None
        if len(found) > 1:
            cands = [rows[0] for rows in found.values()]
            self.ambiguous(
                run,
                "folder",
                cands,
                nmessage(
                    "marks",
                    "the folders above it name {n} job of the log: {jobs}",
                    "the folders above it name {n} jobs of the log: {jobs}",
                    n=len(found),
                    jobs=", ".join(sorted(found)),
                ),
            )
            return False
        key, rows = next(iter(found.items()))
        return _Joined("folder", key, rows, rows[0] if len(rows) == 1 else None)

    def _by_host(self, run: Run) -> _Joined | Literal[False] | None:
        hosts = run.identity.hosts()
        anchor = run.anchor()
        if not hosts:
            self.unmatched(
                run,
                "no_identity",
                message(
                    "marks",
                    "no job id, no job-named folder and no host: it cannot be joined to a job",
                ),
            )
            return False
        if not self.index.any_hosts:
            self.unmatched(
                run,
                "no_identity",
                message(
                    "marks",
                    "no job id, and the job log names no hosts: it cannot be joined to a "
                    "job by host and time",
                ),
            )
            return False
        assert anchor is not None
        seen: dict[int, Attempt] = {}
        for host in hosts:
            for a in self.index.by_host.get(host, []):
                if a.holds(anchor, self.tolerance):
                    seen[a.index] = a
        cands = sorted(seen.values(), key=lambda a: (a.job_id, a.attempt))
        host = run.identity.node or run.identity.host or "-"
        if not cands:
            self.unmatched(
                run,
                "unknown_job",
                message(
                    "marks", "no job of the log ran on {host} at {at}", host=host, at=_at(anchor)
                ),
            )
            return False
        if len(cands) > 1:
            self.ambiguous(
                run,
                "host_time",
                cands,
                nmessage(
                    "marks",
                    "{n} job ran on {host} at {at}",
                    "{n} jobs ran on {host} at {at}",
                    n=len(cands),
                    host=host,
                    at=_at(anchor),
                ),
            )
            return False
        only = cands[0]
        return _Joined("host_time", only.job_id, [only], only)

    def run(self, run: Run) -> None:
        self.report.runs += 1
        if not run.marks:
            self.unmatched(
                run,
                "no_identity",
                message("marks", "no time in this run: it cannot be joined to a job"),
            )
            return
        joined = self._by_id(run)
        if joined is None:
            joined = self._by_folder(run)
        if joined is None:
            joined = self._by_host(run)
        if not joined:
            return
        used = self.assign(run, joined)
        self.listed(
            RunJoin(
                run=_ref(run),
                outcome="matched",
                by=joined.by,
                job_id=joined.job_id,
                attempts=sorted(used),
                message=message("marks", "joined to job {job}", job=joined.job_id),
            )
        )

    def assign(self, run: Run, joined: _Joined) -> set[int]:
        """Each mark to its attempt; the marks that fit none are named."""
        used: set[int] = set()
        if joined.pinned is not None and joined.pinned.start is None:
            a = joined.pinned
            self.problem(
                "not_started",
                run.where,
                message(
                    "marks",
                    "the job log says attempt {attempt} of job {job} never started: its "
                    "marks are not used",
                    attempt=a.attempt,
                    job=a.job_id,
                ),
            )
            return used
        for mark in run.marks:
            if mark.kind in ("seen", "end"):
                continue
            target = self.attempt_of(mark, joined)
            if target is not None:
                used.add(target.attempt)
                self.take(target, mark)
        return used

    def attempt_of(self, mark: Mark, joined: _Joined) -> Attempt | None:
        tol = self.tolerance
        rows = [joined.pinned] if joined.pinned is not None else joined.attempts
        holding = [a for a in rows if a.holds(mark.at, tol)]
        if len(holding) == 1:
            return holding[0]
        started = [a for a in rows if a.start is not None]
        if holding:
            self.problem(
                "ambiguous",
                mark.where,
                message(
                    "marks",
                    "{kind} mark at {at} falls in several attempts of job {job}",
                    kind=mark.kind,
                    at=_at(mark.at),
                    job=joined.job_id,
                ),
            )
        elif started and all(mark.at < a.start - tol for a in started if a.start):
            first = min(started, key=lambda a: a.start or mark.at)
            self.problem(
                "before_start",
                mark.where,
                message(
                    "marks",
                    "{kind} mark at {at} is before attempt {attempt} of job {job} "
                    "started ({start}): not used",
                    kind=mark.kind,
                    at=_at(mark.at),
                    attempt=first.attempt,
                    job=first.job_id,
                    start=_at(first.start),
                ),
            )
        elif started:
            last = max(started, key=lambda a: a.start or mark.at)
            self.problem(
                "after_end",
                mark.where,
                message(
                    "marks",
                    "{kind} mark at {at} is after attempt {attempt} of job {job} ended "
                    "({end}) or between its attempts: not used",
                    kind=mark.kind,
                    at=_at(mark.at),
                    attempt=last.attempt,
                    job=last.job_id,
                    end=_at(last.end),
                ),
            )
        else:
            self.problem(
                "not_started",
                mark.where,
                message(
                    "marks",
                    "the job log says job {job} never started: its marks are not used",
                    job=joined.job_id,
                ),
            )
        return None

    def take(self, target: Attempt, mark: Mark) -> None:
        values = self.values.setdefault(target.index, {})
        if mark.kind == "checkpoint":
            old = values.get("last_checkpoint")
            if old is None or mark.at > old:
                values["last_checkpoint"] = mark.at
        elif mark.kind in ("prep_start", "first_step"):
            name: FilledField = "prep_start" if mark.kind == "prep_start" else "first_step"
            old = values.get(name)
            if old is None or mark.at < old:
                values[name] = mark.at


def join_runs(
    attempts: list[Attempt], marks: MarkSet, *, tolerance_s: float = TOLERANCE_S
) -> tuple[dict[int, dict[FilledField, datetime]], JoinReport]:
    """Join every run to the attempts; the values the marks give per attempt (by row
    index) and the report. The reading problems of `marks` are carried into the report."""
    join = _Join(attempts, tolerance_s)
    join.report.files = marks.files
    join.report.lines = marks.lines
    join.report.add_all(marks)
    for run in marks.runs:
        join.run(run)
    return join.values, join.report
