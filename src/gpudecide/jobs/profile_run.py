"""A profile run: the window asked for, the workspace's settings, the record written
(SPEC F1-F3, C2).

`profile_logs` is what `gpudecide profile` does between its options and its printout;
`run_profile` profiles logs already read (the demo, `assess`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from gpudecide.errors import InputError
from gpudecide.jobs import bounds
from gpudecide.jobs import profile as prof
from gpudecide.jobs.log_command import Loaded, LogCommand

__all__ = ["ProfileRun", "check_weeks", "parse_until", "profile_logs", "run_profile"]


@dataclass
class ProfileRun:
    """What one `profile` command computed and where its record went."""

    result: prof.ProfileResult
    written: Path | None


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


def run_profile(
    loaded: Loaded,
    *,
    weeks: int | None = None,
    pool_gpus: int | None = None,
    until: datetime | None = None,
) -> tuple[prof.ProfileResult, Path | None]:
    """Profile loaded logs (SPEC F1-F3, C2) and write the evidence record."""
    cfg = loaded.ws.config if loaded.ws else None
    check_weeks(weeks)
    options = prof.ProfileOptions(
        weeks=weeks or (cfg.profile.weeks if cfg else 8),
        pool_gpus=pool_gpus if pool_gpus is not None else (cfg.profile.pool_gpus if cfg else None),
        until=until,
    )
    if cfg:
        options.classify = cfg.classify
    result = prof.build_profile(loaded.log, options)
    return result, loaded.write(prof.to_evidence(result, []))


def profile_logs(
    command: LogCommand,
    *,
    weeks: int | None = None,
    pool_gpus: int | None = None,
    until: str | None = None,
) -> ProfileRun:
    """The `profile` command's work: the workspace, the window asked for, the logs read
    and profiled, the record written (errors in that order: the workspace first)."""
    command.workspace()
    check_weeks(weeks)
    end = parse_until(until)
    result, written = run_profile(command.load(), weeks=weeks, pool_gpus=pool_gpus, until=end)
    return ProfileRun(result, written)
