"""A profile run: the window asked for, the workspace's settings, the records written
(SPEC F1-F3, C2).

`profile_logs` is what `gpudecide profile` does between its options and its printout;
`run_profile` profiles logs already read (the demo, `assess`).

The logs are read once, together, and the lifecycle marks (`--marks`, else the workspace's
`marks/` folder) joined to their jobs once (`gpudecide.marks.apply`). Then one record per
option the logs come from (its logs only: the part of the work on that platform, `option`
and `contour` stated), and one for the team's workload (every log read, no option): the
profile the cost and the decision read. The team's record is left out only when every log
was given on the command line for an option: those logs are that option's, not the whole
of the team's work. The pool the busy share is of (C2) is the team's: an option's record
is compared with it too, a managed vendor's not (its jobs hold no pool of the team's).
Nothing is written before every record is made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gpudecide.errors import InputError
from gpudecide.jobs import bounds
from gpudecide.jobs import profile as prof
from gpudecide.jobs.log_command import (
    EVENT_LISTS,
    VENDOR_FORMATS,
    Loaded,
    LogCommand,
    NamedLog,
    check_platforms,
    executor_of,
    marks_folders,
)
from gpudecide.jobs.profile_figures import ProfileContour
from gpudecide.marks.apply import MarkedJobs, mark_jobs
from gpudecide.message import Message, message

__all__ = [
    "ProfileRun",
    "check_weeks",
    "parse_until",
    "profile_logs",
    "run_profile",
]


@dataclass
class ProfileRun:
    """What one record of a `profile` command computed and where it went; `option` is the
    option whose platform its logs come from (None: the team's workload)."""

    result: prof.ProfileResult
    written: Path | None
    option: str | None = None


@dataclass
class _Part:
    """The logs of one record: the option they come from (None: the team's workload)."""

    option: str | None
    paths: list[Path] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)


def parse_until(value: str | None) -> datetime | None:
    """The end of the window asked for (`--until`, ISO 8601; UTC when it names no zone)."""
    if value is None:
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise InputError(
            "{value} is not an ISO 8601 time",
            field="--until",
            hint="e.g. 2026-07-27T00:00:00Z",
            value=repr(value),
        ) from None
    stamp = stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp
    problem = bounds.stamp_problem(stamp)
    if problem:
        raise InputError(
            problem[0], field="--until", hint="give the end of the window to profile", **problem[1]
        )
    return stamp


def check_weeks(weeks: int | None) -> None:
    """A window longer than MAX_WEEKS is no profile of a job log (and overflows dates)."""
    if weeks is not None and not 1 <= weeks <= prof.MAX_WEEKS:
        raise InputError(
            "{weeks} weeks is outside 1-{most}",
            field="--weeks",
            hint="profile at most twenty years; 8 weeks is the usual window",
            weeks=weeks,
            most=prof.MAX_WEEKS,
        )


def _options(
    loaded: Loaded, weeks: int | None, pool_gpus: int | None, until: datetime | None
) -> prof.ProfileOptions:
    cfg = loaded.ws.config if loaded.ws else None
    check_weeks(weeks)
    options = prof.ProfileOptions(
        weeks=weeks or (cfg.profile.weeks if cfg else 8),
        pool_gpus=pool_gpus if pool_gpus is not None else (cfg.profile.pool_gpus if cfg else None),
        until=until,
    )
    if cfg:
        options.classify = cfg.classify
    return options


def run_profile(
    loaded: Loaded,
    *,
    weeks: int | None = None,
    pool_gpus: int | None = None,
    until: datetime | None = None,
) -> tuple[prof.ProfileResult, Path | None]:
    """Profile loaded logs as the team's workload (SPEC F1-F3, C2), with the marks of the
    workspace's marks/ folder as `gpudecide profile` reads them, and write the record."""
    folders = marks_folders(None, loaded.ws)
    marked = mark_jobs(loaded.log.attempts, folders)
    loaded.log.attempts = marked.attempts
    options = _options(loaded, weeks, pool_gpus, until)
    options.marks = marked.report if folders else None
    options.notes = _marks_notes(marked, folders)
    result = prof.build_profile(loaded.log, options)
    return result, loaded.write(prof.to_evidence(result, []))


def _parts(named: list[NamedLog], loaded: Loaded, from_workspace: bool) -> list[_Part]:
    """The team's workload first (every log), then each option in the order the logs name
    it (its logs, and the event lists of no option, which annotate whichever jobs they
    belong to)."""
    formats = loaded.log.formats
    shared = [n for n in named if n.option is None and formats[str(n.spec.path)] in EVENT_LISTS]
    options: list[str] = []
    for n in named:
        if n.option is not None and n.option not in options:
            options.append(n.option)
    parts: list[_Part] = []
    unnamed_jobs = any(
        n.option is None and formats[str(n.spec.path)] not in EVENT_LISTS for n in named
    )
    if not options or from_workspace or unnamed_jobs:
        parts.append(_Part(None))
        for n in named:
            parts[0].paths.append(n.spec.path)
            parts[0].formats.append(formats[str(n.spec.path)])
    for option in options:
        part = _Part(option)
        for n in [*(n for n in named if n.option == option), *shared]:
            part.paths.append(n.spec.path)
            part.formats.append(formats[str(n.spec.path)])
        parts.append(part)
    return parts


def _contour(part: _Part, loaded: Loaded) -> ProfileContour:
    """What one option's logs exercised: the platform that printed them and, for a Slurm log
    of one cluster, that cluster (sacct's Cluster)."""
    executor = executor_of(part.formats)
    cluster = ""
    if executor == "slurm":
        sites = {s for s in loaded.log.attempts.column("site").to_pylist() if s}
        cluster = sites.pop() if len(sites) == 1 else ""
    return ProfileContour(executor=executor, cluster=cluster)


def _vendor_note(named: list[NamedLog], formats: dict[str, str]) -> list[Message]:
    """A managed vendor's job log that names no option counts for the team's workload
    only: which vendor's jobs it holds is not said."""
    vendor = sorted(
        {formats[str(n.spec.path)] for n in named if n.option is None} & set(VENDOR_FORMATS)
    )
    if not vendor:
        return []
    return [
        message(
            "jobs",
            "a managed vendor's job log ({formats}) names no option: it counts for the "
            "team's workload only; name its option (--option ID, or logs[].option in "
            "gpudecide.yaml) to profile that vendor's jobs on their own",
            formats=", ".join(vendor),
        )
    ]


def _marks_notes(marked: MarkedJobs, folders: list[Path]) -> list[Message]:
    """What the marks' join says, for the record that holds it (none without marks)."""
    if not folders:
        return []
    return [marked.report.summary_message(), *marked.report.note_messages()]


def profile_logs(
    command: LogCommand,
    *,
    weeks: int | None = None,
    pool_gpus: int | None = None,
    until: str | None = None,
    option: str | None = None,
    marks: list[Path] | None = None,
) -> list[ProfileRun]:
    """The `profile` command's work: the workspace, the window asked for, the logs named
    for their options, the marks, every setting checked first; the logs read once and
    the marks joined once; one record per option and one for the team's workload, written
    once all are made (the team's last: readers of the newest profile read the whole
    workload)."""
    ws = command.workspace()
    check_weeks(weeks)
    end = parse_until(until)
    named = command.named(option)
    folders = marks_folders(marks, ws)
    loaded = command.read(named)
    check_platforms(named, loaded.log.formats, ws)
    marked = mark_jobs(loaded.log.attempts, folders)
    loaded.log.attempts = marked.attempts
    base = _options(loaded, weeks, pool_gpus, end)
    made: list[tuple[Loaded, prof.ProfileResult, str | None]] = []
    for part in _parts(named, loaded, not command.logs):
        own = loaded.part(part.paths)
        opts = prof.ProfileOptions(
            weeks=base.weeks, pool_gpus=base.pool_gpus, until=base.until, classify=base.classify
        )
        if part.option is None:
            opts.marks = marked.report if folders else None
            opts.notes = [*_marks_notes(marked, folders), *_vendor_note(named, loaded.log.formats)]
        else:
            opts.option, opts.contour = part.option, _contour(part, own)
            if opts.contour.executor == "vendor":
                opts.pool_gpus = None  # a managed vendor's jobs hold no pool of the team's
        made.append((own, prof.build_profile(own.log, opts), part.option))
    records = [(own, prof.to_evidence(result, []), result, o) for own, result, o in made]
    written: dict[int, Path | None] = {}
    for i in sorted(range(len(records)), key=lambda i: records[i][3] is None):
        own, record, _result, _o = records[i]
        written[i] = own.write(record)
    return [ProfileRun(result, written[i], o) for i, (_w, _r, result, o) in enumerate(records)]
