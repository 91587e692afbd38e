"""The library entry of `gpudecide queue` and `gpudecide replay`: settings and job logs in,
evidence records out (SPEC Q1-Q5, C8, D3).

    queue_settings(ws, slo, chain_pattern, marks)  the SLO file, the chain naming rule, marks
    replay_settings(ws, gpus, slo, ...)         pool sizes, policy, window, SLO, checkpoints
    run_queue(loaded, settings, ...)            -> QueueRun  (evidence kind "queue")
    run_replay(loaded, settings, ...)           -> ReplayRun (evidence kind "replay")
    queue_runs(command, ...)                    `gpudecide queue`: one record per option
    replay_run(command, ...)                    `gpudecide replay`: one record of every log

A setting comes from its flag, else from the workspace's gpudecide.yaml; a bad one is an
`InputError` naming the flag or the file, line and key it came from, raised before a log is
read. The logs are grouped by the option whose platform they come from (`queue.logs`): a
queue record per group, each naming its option; a replay replays every log together (a
dedicated pool would hold all of the work). Nothing is written until every group has been
read and analysed. The lifecycle marks (`--marks`, else the workspace's `marks/` folder) are
joined to the jobs of every log read, once (`queue.marked`). Nothing here prints: the
commands present the runs, the demo runs them on its workspace.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.errors import InputError
from gpudecide.inputs import node_line, yaml_root
from gpudecide.jobs.classify import ClassifyConfig
from gpudecide.jobs.log_command import Loaded, LogCommand, marks_folders
from gpudecide.marks.join import JoinReport
from gpudecide.message import Message, message
from gpudecide.queue import slo as slo_mod
from gpudecide.queue.analysis import (
    QueueOptions,
    analyse_queue,
    queue_evidence,
    replay_evidence,
    replay_input,
)
from gpudecide.queue.analysis import run_replay as replay_figures
from gpudecide.queue.figures import Policy
from gpudecide.queue.logs import (
    LogGroup,
    contour_of,
    load_group,
    log_groups,
    shown,
    unnamed_vendor_note,
    workspace_file,
)
from gpudecide.queue.marked import with_marks
from gpudecide.queue.replay import POLICIES, PoolSizeError, parse_sizes
from gpudecide.queue.slo import SLO, THRESHOLD_MAX_MINUTES, SLOFile
from gpudecide.workspace import ReplayConfig

__all__ = [
    "WINDOWS",
    "QueueRun",
    "QueueSettings",
    "ReplayRun",
    "ReplaySettings",
    "Window",
    "queue_runs",
    "queue_settings",
    "replay_run",
    "replay_settings",
    "run_queue",
    "run_replay",
    "slo_path_of",
]

Window = Literal["full", "peak"]
WINDOWS: tuple[Window, ...] = ("full", "peak")


@dataclass(frozen=True)
class QueueSettings:
    """What the queue analysis takes besides the logs: the SLO file (Q3), the rule that
    names a job's chain (Q5) and the lifecycle marks to read (Q1, Q4: `queue.marked`)."""

    slo_path: Path | None = None
    slos: SLOFile | None = None
    chain_pattern: str | None = None
    marks: tuple[Path, ...] = ()


@dataclass(frozen=True)
class ReplaySettings:
    """What a replay takes besides the logs (C8, D3): the pool sizes (or `auto`, the
    smallest meeting the SLO), the scheduling policy, the window, the SLO to meet and the
    checkpoint interval of priority preemption."""

    sizes: list[int] | Literal["auto"]
    policy: Policy = "fifo"
    window: Window = "full"
    slo: tuple[str, SLO] | None = None
    slo_path: Path | None = None
    checkpoint_s: float | None = None
    marks: tuple[Path, ...] = ()


@dataclass
class QueueRun:
    """One queue analysis: its figures, its record and where the record went."""

    figures: dict[str, Any]
    record: ev.Evidence
    written: Path | None

    @property
    def option(self) -> str | None:
        """The option whose platform the log comes from (None: the team's workload)."""
        option = self.figures.get("option")
        return option if isinstance(option, str) else None

    @property
    def failed(self) -> bool:
        """Whether an SLO failed with its whole interval above the allowed share (exit 1)."""
        return "fail" in self.figures["summary"]["slo_verdicts"].values()


@dataclass
class ReplayRun:
    """One replay: its figures, its record and where the record went."""

    figures: dict[str, Any]
    record: ev.Evidence
    written: Path | None

    @property
    def failed(self) -> bool:
        """Whether an SLO was given and no pool tried meets it (exit 1)."""
        return bool(self.figures["slo"]) and self.figures["recommended_gpus"] is None


def slo_path_of(path: Path | None, ws: workspace.Workspace | None) -> Path | None:
    """The SLO file given with --slo, else the workspace's `queue.slo` (which must be there:
    the error names the setting and how to go without), else None."""
    if path is not None:
        if not path.exists():
            raise InputError(
                "no such file",
                path=path,
                field="--slo",
                hint="give the SLO file (slo.yaml), or leave --slo out to use the workspace's "
                "queue.slo",
            )
        return path
    if ws is not None and ws.config.queue.slo:
        return workspace_file(
            ws,
            ws.config.queue.slo,
            ("queue", "slo"),
            "correct the path, or set queue.slo: null to analyse the queue without SLOs",
        )
    return None


def _where_set(
    flag: str, key: tuple[str, str], given: object, ws: workspace.Workspace | None
) -> dict[str, Any]:
    """Where a setting came from, for its error: the flag, or gpudecide.yaml's key and line."""
    if given is not None or ws is None:
        return {"field": flag}
    path = ws.root / workspace.CONFIG_NAME
    return {"path": path, "line": node_line(yaml_root(path), key), "field": ".".join(key)}


def _check_chain_pattern(pattern: str, where: dict[str, Any]) -> None:
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise InputError("not a regular expression: {exc}", exc=str(exc), **where) from None
    if "chain" not in compiled.groupindex:
        raise InputError("needs a named group (?P<chain>...)", **where)


def queue_settings(
    ws: workspace.Workspace | None,
    slo: Path | None = None,
    chain_pattern: str | None = None,
    marks: list[Path] | None = None,
) -> QueueSettings:
    """The queue's settings from its flags, else the workspace (the SLO file is read, the
    chain pattern and the marks paths checked here)."""
    slo_path = slo_path_of(slo, ws)
    slos = slo_mod.load(slo_path) if slo_path else None
    pattern = chain_pattern or (ws.config.queue.chain_pattern if ws else None)
    if pattern is not None:
        where = _where_set("--chain-pattern", ("queue", "chain_pattern"), chain_pattern, ws)
        _check_chain_pattern(pattern, where)
    return QueueSettings(
        slo_path=slo_path,
        slos=slos,
        chain_pattern=pattern,
        marks=tuple(marks_folders(marks, ws)),
    )


def _sizes(
    gpus: str | None, rcfg: ReplayConfig, ws: workspace.Workspace | None
) -> list[int] | Literal["auto"]:
    try:
        return parse_sizes(gpus or rcfg.gpus)
    except PoolSizeError as exc:
        where = _where_set("--gpus", ("replay", "gpus"), gpus, ws)
        raise InputError(
            "{part!r} is not a positive whole number of GPUs",
            hint="e.g. 8,16,32 or auto",
            part=shown(exc.part),
            **where,
        ) from None


def _policy(chosen: str) -> Policy:
    for policy in POLICIES:
        if policy == chosen:
            return policy
    raise InputError(
        "{policy!r} is not fifo, backfill or priority", field="--policy", policy=shown(chosen)
    )


def _window(chosen: str) -> Window:
    for window in WINDOWS:
        if window == chosen:
            return window
    raise InputError("{window!r} is not full or peak", field="--window", window=shown(chosen))


def _slo_named(
    slos: SLOFile | None, name: str | None, ws: workspace.Workspace | None
) -> tuple[str, SLO] | None:
    """The SLO a replay must meet: --slo-name, else the workspace's `replay.slo`."""
    if slos is None:
        return None
    chosen = name or (ws.config.replay.slo if ws else ReplayConfig().slo)
    if chosen not in slos.slos:
        raise InputError(
            "no SLO named {name!r} (have {names})",
            name=shown(chosen),
            names=", ".join(slos.slos),
            **_where_set("--slo-name", ("replay", "slo"), name, ws),
        )
    return chosen, slos.slos[chosen]


def replay_settings(
    ws: workspace.Workspace | None,
    *,
    gpus: str | None = None,
    slo: Path | None = None,
    slo_name: str | None = None,
    policy: str | None = None,
    window: str | None = None,
    checkpoint_minutes: float | None = None,
    marks: list[Path] | None = None,
) -> ReplaySettings:
    """The replay's settings from its flags, else the workspace's `replay` block (the marks
    as `queue` reads them)."""
    rcfg = ws.config.replay if ws else ReplayConfig()
    chosen_policy = _policy(policy or rcfg.policy)
    chosen_window = _window(window or rcfg.window)
    sizes = _sizes(gpus, rcfg, ws)
    slo_path = slo_path_of(slo, ws)
    slos = slo_mod.load(slo_path) if slo_path else None
    ckpt = checkpoint_minutes or rcfg.checkpoint_minutes
    if ckpt is not None and not (math.isfinite(ckpt) and ckpt <= THRESHOLD_MAX_MINUTES):
        raise InputError(
            "{minutes} minutes is no checkpoint interval (at most {most})",
            hint="give the minutes between two checkpoints of a job, e.g. 30",
            minutes=shown(str(ckpt)),
            most=THRESHOLD_MAX_MINUTES,
            **_where_set(
                "--checkpoint-minutes", ("replay", "checkpoint_minutes"), checkpoint_minutes, ws
            ),
        )
    return ReplaySettings(
        sizes=sizes,
        policy=chosen_policy,
        window=chosen_window,
        slo=_slo_named(slos, slo_name, ws),
        slo_path=slo_path,
        checkpoint_s=None if ckpt is None else ckpt * 60,
        marks=tuple(marks_folders(marks, ws)),
    )


def _with_slo_input(record: ev.Evidence, slo_path: Path | None, loaded: Loaded) -> ev.Evidence:
    if slo_path:
        record.inputs.append(ev.input_ref(slo_path, loaded.ws.root if loaded.ws else None))
    return record


def _queue_record(
    loaded: Loaded,
    settings: QueueSettings,
    group: LogGroup | None = None,
    marks: JoinReport | None = None,
) -> tuple[dict[str, Any], ev.Evidence]:
    """Queue figures of loaded logs (SPEC Q1-Q5) and their record, not written yet; `marks`:
    how the lifecycle marks were joined to them (None: none were read)."""
    options = QueueOptions(slos=settings.slos, chain_pattern=settings.chain_pattern, marks=marks)
    if loaded.ws:
        options.classify = loaded.ws.config.classify
    if group is not None:
        options.option = group.option
        options.contour = contour_of(group, loaded) if group.option is not None else None
        options.notes = unnamed_vendor_note(group)
    figures = analyse_queue(loaded.log, options)
    return figures, _with_slo_input(queue_evidence(figures, []), settings.slo_path, loaded)


def run_queue(loaded: Loaded, settings: QueueSettings, group: LogGroup | None = None) -> QueueRun:
    """Queue analysis of loaded logs (SPEC Q1-Q5) with the settings' marks, and its evidence
    record, written; with their group, the record names the option the logs come from."""
    (marked,), report = with_marks([loaded], settings.marks)
    figures, record = _queue_record(marked, settings, group, report)
    return QueueRun(figures=figures, record=record, written=marked.write(record))


def run_replay(
    loaded: Loaded,
    settings: ReplaySettings,
    option: str | None = None,
    notes: list[Message] | None = None,
) -> ReplayRun:
    """Replay loaded logs through pools of the given sizes (SPEC C8, D3) and write the
    evidence record (naming the option the logs come from, when given)."""
    classify = loaded.ws.config.classify if loaded.ws else ClassifyConfig()
    (marked,), report = with_marks([loaded], settings.marks)
    figures = replay_figures(
        replay_input(marked.log, classify, settings.window),
        settings.sizes,
        settings.policy,
        settings.slo,
        settings.checkpoint_s,
        option=option,
        notes=notes or [],
        marks=report,
    )
    record = _with_slo_input(replay_evidence(figures, []), settings.slo_path, loaded)
    return ReplayRun(figures=figures, record=record, written=loaded.write(record))


def queue_runs(
    command: LogCommand,
    slo: Path | None = None,
    chain_pattern: str | None = None,
    option: str | None = None,
    marks: list[Path] | None = None,
) -> list[QueueRun]:
    """`gpudecide queue`: its settings (checked before a log is read), then one record per
    option the logs come from (the team's workload first), the marks joined to the jobs of
    every log at once; written once all are made."""
    settings = queue_settings(command.workspace(), slo, chain_pattern, marks)
    groups = log_groups(command, option)
    read, report = with_marks([load_group(command, g) for g in groups], settings.marks)
    made = [
        (loaded, *_queue_record(loaded, settings, g, report))
        for loaded, g in zip(read, groups, strict=True)
    ]
    return [
        QueueRun(figures=figures, record=record, written=loaded.write(record))
        for loaded, figures, record in made
    ]


def _together(groups: list[LogGroup]) -> tuple[LogGroup, list[Message]]:
    """Every log in one replay, the option they come from when they all come from one, and
    a note naming the options when they do not."""
    specs: list[Any] = []
    formats: list[str] = []
    for g in groups:
        for spec, fmt in zip(g.specs, g.formats, strict=True):
            if spec not in specs:
                specs.append(spec)
                formats.append(fmt)
    options = [g.option for g in groups]
    one = options[0] if len(options) == 1 else None
    notes: list[Message] = []
    if len(options) > 1:
        named = ", ".join(o for o in options if o is not None)
        notes.append(
            message(
                "queue",
                "the replay holds the jobs of every log together, those of options {options} "
                "and of the team's workload alike: a dedicated pool would hold them all",
                options=named,
            )
            if None in options
            else message(
                "queue",
                "the replay holds the jobs of every log together, those of options "
                "{options} alike: a dedicated pool would hold them all",
                options=named,
            )
        )
    notes += [n for g in groups if g.option is None for n in unnamed_vendor_note(g)]
    return LogGroup(one, tuple(specs), tuple(formats)), notes


def replay_run(
    command: LogCommand,
    *,
    gpus: str | None = None,
    slo: Path | None = None,
    slo_name: str | None = None,
    policy: str | None = None,
    window: str | None = None,
    checkpoint_minutes: float | None = None,
    option: str | None = None,
    marks: list[Path] | None = None,
) -> ReplayRun:
    """`gpudecide replay`: its settings (as `replay_settings` takes them, checked before a
    log is read), every log together, the run."""
    settings = replay_settings(
        command.workspace(),
        gpus=gpus,
        slo=slo,
        slo_name=slo_name,
        policy=policy,
        window=window,
        checkpoint_minutes=checkpoint_minutes,
        marks=marks,
    )
    group, notes = _together(log_groups(command, option))
    return run_replay(load_group(command, group), settings, group.option, notes)
