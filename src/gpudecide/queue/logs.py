"""Which job logs each queue record reads, and the option whose platform they come from
(SPEC Q1, Q3).

A log comes from one platform: the team's scheduler, a dedicated option's pool, a managed
vendor's job events (SageMaker, OpenAI: `gpudecide.jobs.managed`). Its queue measures the
start time of that option, so the record names it (`figures["option"]`); a log without an
option is the team's workload, not one option's. The logs of a workspace are grouped by the
option each names (`logs[].option`), one queue record per group; logs given on the command
line take `--option`, else the option of the same log in the workspace, else none.

    log_groups(command, option)   the groups, the settings checked before any log is read
    load_group(command, group)    one group read into a `Loaded`
    contour_of(group, loaded)     the contour the group's logs exercised (executor, cluster)

Event lists (Kubernetes events, OpenAI job events) annotate the jobs they belong to: one
without an option goes with every group, so its jobs find it whichever option they are of.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gpudecide import workspace
from gpudecide.console import progress
from gpudecide.errors import InputError, excerpt
from gpudecide.fsutil import require_regular_file
from gpudecide.i18n import translator
from gpudecide.inputs import node_line, yaml_root
from gpudecide.jobs.load import FORMATS, LogFormat, LogSpec, detect_format, load_logs
from gpudecide.jobs.log_command import (
    EVENT_LISTS,
    VENDOR_FORMATS,
    Loaded,
    LogCommand,
    executor_of,
)
from gpudecide.message import Message, message
from gpudecide.options import require_known
from gpudecide.queue.model import QueueContour

__all__ = [
    "LogGroup",
    "contour_of",
    "load_group",
    "log_groups",
    "shown",
    "unnamed_vendor_note",
    "workspace_file",
]

_ = translator("queue")


@dataclass(frozen=True)
class LogGroup:
    """The logs one record reads: the option they come from (None: the team's workload),
    each log with how to read it, its detected format and the setting that named it."""

    option: str | None
    specs: tuple[LogSpec, ...]
    formats: tuple[str, ...]
    # where the option was set: "--option" or "logs.<i>.option" (for errors)
    option_field: str = "--option"

    @property
    def jobs(self) -> tuple[LogSpec, ...]:
        """The logs of jobs (not event lists)."""
        pairs = zip(self.specs, self.formats, strict=True)
        return tuple(s for s, f in pairs if f not in EVENT_LISTS)


def workspace_file(
    ws: workspace.Workspace, rel: str, key: tuple[str | int, ...], hint: str
) -> Path:
    """A file a setting of gpudecide.yaml names, resolved; a file that is not there is the
    setting's error (issue 27): gpudecide.yaml, its line and key, and how to go without."""
    target = ws.root / rel
    if not os.path.lexists(target) or not target.exists():
        config = ws.root / workspace.CONFIG_NAME
        raise InputError(
            "names {file}, which does not exist",
            path=config,
            line=node_line(yaml_root(config), key),
            field=".".join(str(k) for k in key),
            hint=hint,
            file=excerpt(rel, 80),
        )
    return target


def shown(value: str) -> str:
    """A value from a flag or a file as an error quotes it (`{value!r}`): as written when it
    is short plain text, else `excerpt`'s masked form, so that no error line prints a
    credential pasted in the wrong place."""
    quoted = excerpt(value, 64)
    if quoted == f"'{value}'":
        return value
    if not quoted.endswith("'"):  # masked whole: it looks like a credential
        return "…"
    return quoted[1:-1]


def _format(spec: LogSpec) -> str:
    """The log's format as written, or detected from its content."""
    require_regular_file(spec.path, "job log")
    return str(detect_format(spec.path)) if spec.format == "auto" else spec.format


def _check_option(option: str | None, ws: workspace.Workspace | None) -> None:
    if option is None:
        return
    if ws is None:
        raise InputError(
            "names an option, and options are declared in a workspace; none is here",
            field="--option",
            hint="run inside the workspace, or pass --workspace DIR",
        )
    require_known(option, ws.config.options, path="", field="--option")


def _given(command: LogCommand, option: str | None) -> list[tuple[LogSpec, str | None, str]]:
    """Logs from the command line. A log the workspace lists too keeps what its entry says
    (its option unless --option names one, its format unless --format or --sacct-format
    says another)."""
    if command.fmt not in FORMATS:
        raise InputError(
            "{value} is not one of {choices}",
            field="--format",
            value=excerpt(command.fmt),
            choices=", ".join(FORMATS),
        )
    fmt: LogFormat = command.fmt  # type: ignore[assignment]
    ws = command.workspace()
    known: dict[Path, tuple[int, workspace.LogSource]] = {}
    if ws is not None:
        for i, src in enumerate(ws.config.logs):
            known.setdefault((ws.root / src.path).resolve(), (i, src))
    out: list[tuple[LogSpec, str | None, str]] = []
    for path in command.logs:
        spec = LogSpec(path, fmt, command.sacct_format)
        entry = known.get(path.resolve())
        if entry is None:
            out.append((spec, option, "--option"))
            continue
        i, src = entry
        if fmt == "auto" and command.sacct_format is None:
            spec = LogSpec(path, src.format, src.sacct_format)
        if option is None and src.option is not None:
            out.append((spec, src.option, f"logs.{i}.option"))
        else:
            out.append((spec, option, "--option"))
    return out


def _configured(ws: workspace.Workspace | None) -> list[tuple[LogSpec, str | None, str]]:
    """The workspace's logs, each checked to be there (the error names `logs.<i>.path`)."""
    if ws is None:
        raise InputError(
            "no job log given and no workspace here",
            hint="pass LOG files, or run inside a workspace (gpudecide init)",
        )
    if not ws.config.logs:
        raise InputError(
            "the workspace lists no logs", path=ws.root / workspace.CONFIG_NAME, field="logs"
        )
    out: list[tuple[LogSpec, str | None, str]] = []
    for i, src in enumerate(ws.config.logs):
        path = workspace_file(
            ws,
            src.path,
            ("logs", i, "path"),
            "correct the path, or remove this entry from logs; logs given on the command "
            "line are read instead of the workspace's",
        )
        out.append((LogSpec(path, src.format, src.sacct_format), src.option, f"logs.{i}.option"))
    return out


def log_groups(command: LogCommand, option: str | None = None) -> list[LogGroup]:
    """The logs the command reads, grouped by the option they come from: the team's
    workload first, then the options in the order the logs name them.

    Every setting is checked here, before a log is parsed: --option is a declared option,
    each configured log is there, and a log of a known platform is not named for an option
    that declares another (a SageMaker log is no Slurm pool's queue).
    """
    ws = command.workspace()
    _check_option(option, ws)
    named = _given(command, option) if command.logs else _configured(ws)
    formats = [_format(spec) for spec, _o, _f in named]
    shared = [
        (spec, fmt)
        for (spec, opt, _f), fmt in zip(named, formats, strict=True)
        if fmt in EVENT_LISTS and opt is None
    ]
    order: list[str | None] = []
    fields: dict[str | None, str] = {}
    for _spec, opt, where in named:
        if opt not in order:
            order.append(opt)
            fields[opt] = where
    order.sort(key=lambda o: o is not None)  # the team's workload first, then in order
    groups: list[LogGroup] = []
    for opt in order:
        own = [
            (spec, fmt)
            for (spec, o, _f), fmt in zip(named, formats, strict=True)
            if o == opt and (opt is not None or fmt not in EVENT_LISTS)
        ]
        members = own + [pair for pair in shared if pair not in own]
        group = LogGroup(
            opt, tuple(s for s, _f in members), tuple(f for _s, f in members), fields[opt]
        )
        if group.jobs:
            groups.append(group)
    if not groups:  # only event lists: the reader says so, naming them
        groups.append(LogGroup(option, tuple(s for s, _o, _f in named), tuple(formats), "--option"))
    for group in groups:
        _check_platform(group, ws)
    return groups


def _check_platform(group: LogGroup, ws: workspace.Workspace | None) -> None:
    """A log of a known platform named for an option that declares another contour."""
    if group.option is None or ws is None:
        return
    decl = ws.option(group.option)
    executor = executor_of(list(group.formats))
    if decl is None or executor is None:
        return
    declared = decl.contour.declared(decl.kind)
    if declared is not None and declared != executor:
        fmt = next(f for f in group.formats if f not in EVENT_LISTS)
        raise InputError(
            "a {format} log comes from {executor}, and option {option} runs on {declared} "
            "(options[].contour)",
            path=ws.root / workspace.CONFIG_NAME if group.option_field != "--option" else None,
            field=group.option_field,
            hint="name the option whose platform the log comes from",
            format=fmt,
            executor=executor,
            option=group.option,
            declared=declared,
        )


def load_group(command: LogCommand, group: LogGroup) -> Loaded:
    """Read one group's logs, with a progress bar for people."""
    ws = command.workspace()
    tz = command.tz or (ws.config.timezone if ws else "UTC")
    with progress(not command.as_json) as bar:
        task = bar.add_task(_("reading job logs"), total=1) if bar else None
        log = load_logs(list(group.specs), tz=tz, skip_bad_rows=command.skip_bad_rows)
        if bar is not None and task is not None:
            bar.update(task, completed=1)
    target = command.evidence_dir or (ws.evidence_dir if ws else Path("evidence"))
    return Loaded(log=log, paths=[s.path for s in group.specs], ws=ws, evidence_dir=target)


def contour_of(group: LogGroup, loaded: Loaded) -> QueueContour:
    """What the group's logs exercised: the scheduler (or vendor) that printed them and, for
    a Slurm log of one cluster, that cluster (sacct's Cluster)."""
    executor = executor_of(list(group.formats))
    cluster = ""
    if executor == "slurm":
        sites = {s for s in loaded.log.attempts.column("site").to_pylist() if s}
        cluster = sites.pop() if len(sites) == 1 else ""
    return QueueContour(executor=executor, cluster=cluster)


def unnamed_vendor_note(group: LogGroup) -> list[Message]:
    """A managed vendor's job log read as the team's workload: which option it measures is
    not said, so no option's start time is measured by it."""
    if group.option is not None:
        return []
    vendor = sorted({f for f in group.formats if f in VENDOR_FORMATS})
    if not vendor:
        return []
    return [
        message(
            "queue",
            "a managed vendor's job log ({formats}) is read as the team's workload: name its "
            "option (--option ID, or logs[].option in gpudecide.yaml) so that it measures "
            "that vendor's start time",
            formats=", ".join(vendor),
        )
    ]
