"""The options every log-reading command takes, declared once, and its prologue.

`LogCommand` holds the options all log commands take (logs, time zone, format, bad rows,
evidence folder, workspace, --json) and does what each of them does first: find the
workspace and read the logs (`Loaded`). `profile` and `queue` use it; a new log analysis
does the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.console import open_workspace, progress
from gpudecide.errors import InputError
from gpudecide.i18n import translator
from gpudecide.jobs.load import FORMATS, JobLog, LogSpec, load_logs

__all__ = [
    "EvidenceDirOpt",
    "FormatOpt",
    "Loaded",
    "LogCommand",
    "LogsArg",
    "SacctFormatOpt",
    "SkipBadOpt",
    "TzOpt",
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


@dataclass
class Loaded:
    """Logs read, plus where the result goes."""

    log: JobLog
    paths: list[Path]
    ws: workspace.Workspace | None
    evidence_dir: Path | None

    def write(self, record: ev.Evidence) -> Path | None:
        """Write the record to the evidence folder (nowhere when there is none)."""
        if self.evidence_dir is None:
            return None
        root = self.ws.root if self.ws else None
        record.inputs = [ev.input_ref(p, root) for p in self.paths] + record.inputs
        return ev.write(record, self.evidence_dir)


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
    _ws: workspace.Workspace | None = field(default=None, init=False, repr=False)
    _ws_opened: bool = field(default=False, init=False, repr=False)

    def workspace(self) -> workspace.Workspace | None:
        """The workspace given with --workspace or found from here up (None outside one)."""
        if not self._ws_opened:
            self._ws = open_workspace(self.workspace_dir, required=False)
            self._ws_opened = True
        return self._ws

    def load(self) -> Loaded:
        """Read the given logs (or the workspace's), with a progress bar for people."""
        ws = self.workspace()
        if self.fmt not in FORMATS:
            raise InputError(
                "{value} is not one of {choices}",
                field="--format",
                value=repr(self.fmt),
                choices=", ".join(FORMATS),
            )
        specs: list[LogSpec]
        if self.logs:
            specs = [LogSpec(p, self.fmt, self.sacct_format) for p in self.logs]  # type: ignore[arg-type]
        else:
            if ws is None:
                raise InputError(
                    "no job log given and no workspace here",
                    hint="pass LOG files, or run inside a workspace (gpudecide init)",
                )
            if not ws.config.logs:
                raise InputError(
                    "the workspace lists no logs",
                    path=ws.root / workspace.CONFIG_NAME,
                    field="logs",
                )
            specs = [LogSpec(ws.root / s.path, s.format, s.sacct_format) for s in ws.config.logs]
        tz = self.tz or (ws.config.timezone if ws else "UTC")
        with progress(not self.as_json) as bar:
            task = bar.add_task(_("reading job logs"), total=1) if bar else None
            log = load_logs(specs, tz=tz, skip_bad_rows=self.skip_bad_rows)
            if bar is not None and task is not None:
                bar.update(task, completed=1)
        target = self.evidence_dir or (ws.evidence_dir if ws else Path("evidence"))
        return Loaded(log=log, paths=[s.path for s in specs], ws=ws, evidence_dir=target)


def workspace_logs(ws: workspace.Workspace) -> Loaded:
    """The workspace's own logs, read without a progress bar (demo, assess)."""
    command = LogCommand(workspace_dir=ws.root, as_json=True)
    command._ws, command._ws_opened = ws, True
    return command.load()
