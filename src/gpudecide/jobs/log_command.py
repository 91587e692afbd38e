"""The options every log-reading command takes, declared once, and its prologue.

`LogCommand` holds the options all log commands take (logs, time zone, format, bad rows,
evidence folder, workspace, --json) and does what each of them does first: find the
workspace, say which option each log comes from (`named`, every setting checked before a
log is parsed) and read the logs (`Loaded`). `profile` and `queue` use it; a new log
analysis does the same.

A log comes from one platform: the team's scheduler, a dedicated option's pool, a managed
vendor's job events (SageMaker, OpenAI). The workspace names the option of each of its
logs (`logs[].option`); logs given on the command line take `--option`, else the option of
the same log in the workspace, else none (the team's workload, not one option's).

The options load no parser: the readers (`gpudecide.jobs.load`, DuckDB, Arrow) are imported
where logs are read, so that every command's `--help` and the option types stay light.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpudecide.console import open_workspace, progress
from gpudecide.errors import InputError, excerpt
from gpudecide.i18n import translator
from gpudecide.log_formats import FORMATS, LogFormat

if TYPE_CHECKING:
    # The evidence and workspace models load where a log is read or a record written, not
    # with the options (every command's --help imports this module).
    from gpudecide import evidence as ev
    from gpudecide.jobs.load import JobLog, LogSpec
    from gpudecide.workspace import LogSource, Workspace

__all__ = [
    "EVENT_LISTS",
    "EXECUTORS",
    "MARKS_FOLDER",
    "VENDOR_FORMATS",
    "EvidenceDirOpt",
    "FormatOpt",
    "Loaded",
    "LogCommand",
    "LogsArg",
    "MarksOpt",
    "NamedLog",
    "OptionOpt",
    "SacctFormatOpt",
    "SkipBadOpt",
    "TzOpt",
    "check_platforms",
    "executor_of",
    "marks_folders",
    "workspace_logs",
]

_ = translator("jobs")


LogsArg = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Job logs: sacct --parsable2, CSV, JSONL, kubectl pods/events JSON, SageMaker or "
        "OpenAI fine-tuning job JSON; default: the workspace's."
    ),
]


TzOpt = Annotated[str | None, typer.Option(help="Time zone sacct printed times in (IANA name).")]


FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        help="auto | sacct | slurm-json | csv | jsonl | kubernetes | sagemaker | openai.",
    ),
]


SacctFormatOpt = Annotated[
    str | None,
    typer.Option(help="The --format list given to sacct, for output without a header."),
]


SkipBadOpt = Annotated[
    bool, typer.Option(help="Count and report malformed rows instead of stopping.")
]


EvidenceDirOpt = Annotated[
    Path | None, typer.Option(help="Where to write the evidence record (default: workspace).")
]


OptionOpt = Annotated[
    str | None,
    typer.Option(
        "--option",
        help="Option whose platform these logs come from (its scheduler, or a managed "
        "vendor's job log); default: the workspace's logs[].option, else the team's workload.",
    ),
]


MarksOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--marks",
        help="Folder (or file) of lifecycle marks the training jobs wrote (marks JSONL, "
        "TensorBoard, MLflow, checkpoint-N folders); repeatable; default: the workspace's "
        "marks/ folder when there is one.",
    ),
]


# The workspace's folder of lifecycle marks, read when it exists and no --marks is given.
MARKS_FOLDER = "marks"


def marks_folders(given: Sequence[Path] | None, ws: Workspace | None) -> list[Path]:
    """The marks to read: every `--marks` path (each must be there: the error names the
    flag), else the workspace's `marks/` folder when it has one, else none."""
    if given:
        for path in given:
            if not path.exists():
                raise InputError(
                    "no such file or directory",
                    path=path,
                    field="--marks",
                    hint="give the folder the training scripts write marks to",
                )
        return list(given)
    if ws is not None and (ws.root / MARKS_FOLDER).is_dir():
        return [ws.root / MARKS_FOLDER]
    return []


# The platform each format of job log is printed by (an option's `contour.executor`); CSV
# and JSON Lines are the team's own exports, from anywhere.
EXECUTORS: dict[str, str] = {
    "sacct": "slurm",
    "slurm-json": "slurm",
    "kubernetes": "k8s",
    "sagemaker": "vendor",
    "openai": "vendor",
}
VENDOR_FORMATS = ("sagemaker", "openai")
# Lists that annotate the jobs of other logs (a pod's events, a fine-tuning job's events).
EVENT_LISTS = ("kubernetes-events", "openai-events")


@dataclass(frozen=True)
class NamedLog:
    """One log to read, the option whose platform it comes from (None: the team's
    workload), and the setting that named that option ("--option" or "logs.<i>.option")."""

    spec: LogSpec
    option: str | None
    option_field: str = "--option"


def executor_of(formats: list[str]) -> str | None:
    """The one platform job logs of these formats are printed by (None: mixed, unknown, or
    the team's own CSV/JSONL export)."""
    found = {EXECUTORS.get(f) for f in formats if f not in EVENT_LISTS}
    return found.pop() if len(found) == 1 else None


def check_platforms(named: list[NamedLog], formats: dict[str, str], ws: Workspace | None) -> None:
    """A log of a known platform named for an option that declares another (a SageMaker
    log is no Slurm pool's job log); checked once the logs' formats are known."""
    if ws is None:
        return
    for log in named:
        fmt = formats.get(str(log.spec.path))
        executor = EXECUTORS.get(fmt or "")
        decl = ws.option(log.option) if log.option else None
        if decl is None or executor is None:
            continue
        declared = decl.contour.declared(decl.kind)
        if declared is not None and declared != executor:
            from gpudecide.workspace import CONFIG_NAME

            raise InputError(
                "a {format} log comes from {executor}, and option {option} runs on {declared} "
                "(options[].contour)",
                path=ws.root / CONFIG_NAME if log.option_field != "--option" else None,
                field=log.option_field,
                hint="name the option whose platform the log comes from",
                format=fmt,
                executor=executor,
                option=log.option,
                declared=declared,
            )


@dataclass
class Loaded:
    """Logs read, plus where the result goes."""

    log: JobLog
    paths: list[Path]
    ws: Workspace | None
    evidence_dir: Path | None

    def write(self, record: ev.Evidence) -> Path | None:
        """Write the record to the evidence folder (nowhere when there is none)."""
        if self.evidence_dir is None:
            return None
        from gpudecide import evidence as ev

        root = self.ws.root if self.ws else None
        record.inputs = [ev.input_ref(p, root) for p in self.paths] + record.inputs
        return ev.write(record, self.evidence_dir)

    def part(self, paths: list[Path]) -> Loaded:
        """The logs of these paths only (one option's), written with them as inputs."""
        return Loaded(self.log.part(paths), list(paths), self.ws, self.evidence_dir)


@dataclass
class LogCommand:
    """The options every log-reading command takes, and its prologue (workspace, logs)."""

    logs: list[Path] = field(default_factory=list)
    tz: str | None = None
    fmt: str = "auto"
    sacct_format: str | None = None
    skip_bad_rows: bool = False
    evidence_dir: Path | None = None
    workspace_dir: Path | None = None
    as_json: bool = False
    _ws: Workspace | None = field(default=None, init=False, repr=False)
    _ws_opened: bool = field(default=False, init=False, repr=False)

    def workspace(self) -> Workspace | None:
        """The workspace given with --workspace or found from here up (None outside one)."""
        if not self._ws_opened:
            self._ws = open_workspace(self.workspace_dir, required=False)
            self._ws_opened = True
        return self._ws

    def named(self, option: str | None = None) -> list[NamedLog]:
        """The logs to read, each with the option it comes from; the settings are checked
        here, before a log is parsed: --format, --option (a declared option), and that each
        log the workspace lists is there (the error names its `logs.<i>.path`)."""
        ws = self.workspace()
        if self.fmt not in FORMATS:
            raise InputError(
                "{value} is not one of {choices}",
                field="--format",
                value=excerpt(self.fmt),
                choices=", ".join(FORMATS),
            )
        if option is not None:
            if ws is None:
                raise InputError(
                    "names an option, and options are declared in a workspace; none is here",
                    field="--option",
                    hint="run inside the workspace, or pass --workspace DIR",
                )
            from gpudecide.options import require_known

            require_known(option, ws.config.options, path="", field="--option")
        return self._given(ws, option) if self.logs else _configured(ws)

    def _given(self, ws: Workspace | None, option: str | None) -> list[NamedLog]:
        """Logs from the command line. A log the workspace lists too keeps what its entry
        says: its option unless --option names one, its format unless --format or
        --sacct-format says another."""
        from gpudecide.jobs.load import LogSpec

        fmt: LogFormat = self.fmt  # type: ignore[assignment]
        known: dict[Path, tuple[int, LogSource]] = {}
        if ws is not None:
            for i, src in enumerate(ws.config.logs):
                known.setdefault((ws.root / src.path).resolve(), (i, src))
        out: list[NamedLog] = []
        for path in self.logs:
            spec = LogSpec(path, fmt, self.sacct_format)
            entry = known.get(path.resolve())
            if entry is None:
                out.append(NamedLog(spec, option))
                continue
            i, src = entry
            if fmt == "auto" and self.sacct_format is None:
                spec = LogSpec(path, src.format, src.sacct_format)
            if option is None and src.option is not None:
                out.append(NamedLog(spec, src.option, f"logs.{i}.option"))
            else:
                out.append(NamedLog(spec, option))
        return out

    def read(self, named: list[NamedLog]) -> Loaded:
        """Read these logs together, with a progress bar for people."""
        from gpudecide.jobs.load import load_logs

        ws = self.workspace()
        tz = self.tz or (ws.config.timezone if ws else "UTC")
        specs = [n.spec for n in named]
        with progress(not self.as_json) as bar:
            task = bar.add_task(_("reading job logs"), total=1) if bar else None
            log = load_logs(specs, tz=tz, skip_bad_rows=self.skip_bad_rows)
            if bar is not None and task is not None:
                bar.update(task, completed=1)
        target = self.evidence_dir or (ws.evidence_dir if ws else Path("evidence"))
        return Loaded(log=log, paths=[s.path for s in specs], ws=ws, evidence_dir=target)

    def load(self) -> Loaded:
        """Read the given logs (or the workspace's), with a progress bar for people."""
        return self.read(self.named())


def _configured(ws: Workspace | None) -> list[NamedLog]:
    """The workspace's logs, each checked to be there: a missing one is the error of the
    setting that names it (gpudecide.yaml, its line, `logs.<i>.path`) and says what to do."""
    if ws is None:
        raise InputError(
            "no job log given and no workspace here",
            hint="pass LOG files, or run inside a workspace (gpudecide init)",
        )
    from gpudecide.workspace import CONFIG_NAME

    config = ws.root / CONFIG_NAME
    if not ws.config.logs:
        raise InputError("the workspace lists no logs", path=config, field="logs")
    from gpudecide.inputs import node_line, yaml_root
    from gpudecide.jobs.load import LogSpec

    out: list[NamedLog] = []
    for i, src in enumerate(ws.config.logs):
        path = ws.root / src.path
        if not os.path.lexists(path) or not path.exists():
            raise InputError(
                "names {file}, which does not exist",
                path=config,
                line=node_line(yaml_root(config), ("logs", i, "path")),
                field=f"logs.{i}.path",
                hint="put the log at that path, correct the path, or remove this entry from "
                "logs; logs given on the command line are read instead of the workspace's",
                file=excerpt(src.path, 80),
            )
        spec = LogSpec(path, src.format, src.sacct_format)
        out.append(NamedLog(spec, src.option, f"logs.{i}.option"))
    return out


def workspace_logs(ws: Workspace) -> Loaded:
    """The workspace's own logs, read without a progress bar (demo, assess)."""
    command = LogCommand(workspace_dir=ws.root, as_json=True)
    command._ws, command._ws_opened = ws, True
    return command.load()
