"""`gpudecide profile` and `columns`, and the prologue every log-reading command shares.

`LogCommand` holds the options all log commands take (logs, time zone, format, bad rows,
evidence folder, workspace, --json) and does what each of them does first: find the
workspace and read the logs. `queue/cli.py` uses it too; a new log analysis does the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.console import JsonOpt, WorkspaceOpt, emit_json, guard, open_workspace, out, progress
from gpudecide.errors import InputError
from gpudecide.jobs import bounds
from gpudecide.jobs import profile as prof
from gpudecide.jobs.figures import reconciliation_line
from gpudecide.jobs.load import FORMATS, JobLog, LogSpec, load_logs
from gpudecide.jobs.schema import CANONICAL_COLUMNS


def _parse_until(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise InputError(
            f"{value!r} is not an ISO 8601 time", field="--until", hint="e.g. 2026-07-27T00:00:00Z"
        ) from None
    stamp = stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp
    problem = bounds.time_problem(stamp)
    if problem:
        raise InputError(problem, field="--until", hint="give the end of the window to profile")
    return stamp


def _check_weeks(weeks: int | None) -> None:
    """A window longer than MAX_WEEKS is no profile of a job log (and overflows dates)."""
    if weeks is not None and not 1 <= weeks <= prof.MAX_WEEKS:
        raise InputError(
            f"{weeks} weeks is outside 1-{prof.MAX_WEEKS}",
            field="--weeks",
            hint="profile at most twenty years; 8 weeks is the usual window",
        )


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
    typer.Option("--format", help="auto | sacct | csv | jsonl | kubernetes | sagemaker | openai."),
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
            raise InputError(f"{self.fmt!r} is not one of {', '.join(FORMATS)}", field="--format")
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
            task = bar.add_task("reading job logs", total=1) if bar else None
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


def run_profile(
    loaded: Loaded,
    *,
    weeks: int | None = None,
    pool_gpus: int | None = None,
    until: datetime | None = None,
) -> tuple[prof.ProfileResult, Path | None]:
    """Profile loaded logs (SPEC F1-F3, C2) and write the evidence record."""
    cfg = loaded.ws.config if loaded.ws else None
    _check_weeks(weeks)
    options = prof.ProfileOptions(
        weeks=weeks or (cfg.profile.weeks if cfg else 8),
        pool_gpus=pool_gpus if pool_gpus is not None else (cfg.profile.pool_gpus if cfg else None),
        until=until,
    )
    if cfg:
        options.classify = cfg.classify
    result = prof.build_profile(loaded.log, options)
    return result, loaded.write(prof.to_evidence(result, []))


def _print_profile(f: dict[str, Any]) -> None:
    out.print(prof.summary_line(f))
    table = Table("kind", "jobs", "GPU-hours", box=None)
    for k, n in f["jobs_by_kind"].items():
        table.add_row(k, str(n), f"{f['gpu_hours_by_kind'][k]:.1f}")
    out.print(table)
    burst, pred = f["burstiness"], f["predictability"]
    out.print(reconciliation_line(f["reconciliation"]), markup=False)
    sources = ", ".join(f"{n} from {src}" for src, n in f["gpu_count_sources"].items())
    out.print(f"GPU counts of started attempts: {sources or 'none'}", markup=False)
    out.print(
        f"window {f['window']['start']} .. {f['window']['end']} ({f['window']['weeks']} weeks); "
        f"attempts {f['attempts_total']}, restarts {f['restarts']}, never started "
        f"{f['never_started']}, unsuccessful {f['unsuccessful_share']}"
    )
    out.print(
        f"peak concurrent GPUs {f['peak_concurrent_gpus']}; jobs/week {f['jobs_per_week_mean']}; "
        f"duration p50 {f['duration_hours']['p50']} h, p90 {f['duration_hours']['p90']} h"
    )
    out.print(
        f"shape: {burst['shape']} (weekly GPU-hours CV {burst['weekly_gpu_hours_cv']}, "
        f"bursty at >= {burst['thresholds']['bursty_cv_min']}; top "
        f"{burst['top_jobs_fraction']:.0%} of jobs hold {burst['top_jobs_gpu_hours_share']} of "
        f"GPU-hours, bursty at >= {burst['thresholds']['bursty_top_share_min']})"
    )
    out.print(
        f"predictability: {pred['verdict']} (WAPE {pred['wape']}; predictable <= "
        f"{pred['thresholds']['predictable_wape_max']}, partly <= "
        f"{pred['thresholds']['partly_predictable_wape_max']}): {pred['meaning']}; lead-time "
        f"share {pred['lead_time_share']}"
    )
    if f["pool_gpus"]:
        out.print(
            f"busy share of a {f['pool_gpus']}-GPU pool: {f['busy_share']} useful, "
            f"{f['occupied_share']} occupied (of {f['available_gpu_hours']} GPU-hours)"
        )
    if f["skipped_rows"]:
        out.print(f"{f['skipped_rows']} malformed row(s) skipped:", style="yellow")
        for b in f["skipped"][:10]:
            out.print(f"  {b['path']}:{b['line']}: {b['field'] or ''} {b['reason']}", markup=False)
    for note in f["notes"]:
        out.print(f"note: {note}", markup=False)


def profile(
    logs: LogsArg = None,
    weeks: Annotated[int | None, typer.Option(help="Weeks to profile (default 8).")] = None,
    pool_gpus: Annotated[
        int | None, typer.Option(min=1, help="Pool size for the busy share (SPEC C2).")
    ] = None,
    tz: TzOpt = None,
    log_format: FormatOpt = "auto",
    sacct_format: SacctFormatOpt = None,
    skip_bad_rows: SkipBadOpt = False,
    until: Annotated[
        str | None, typer.Option(help="End of the window (ISO 8601); default: last event.")
    ] = None,
    evidence_dir: EvidenceDirOpt = None,
    workspace_dir: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Profile the workload: all related jobs, shape, predictability, busy share (F1-F3)."""
    command = LogCommand(
        list(logs or []),
        tz,
        log_format,
        sacct_format,
        skip_bad_rows,
        evidence_dir,
        workspace_dir,
        as_json,
    )
    with guard(as_json):
        command.workspace()
        _check_weeks(weeks)
        end = _parse_until(until)
        result, written = run_profile(command.load(), weeks=weeks, pool_gpus=pool_gpus, until=end)
    if as_json:
        body = dict(result.figures)
        body["evidence"] = str(written) if written else None
        emit_json(body)
        return
    _print_profile(result.figures)
    if written:
        out.print(f"evidence: {written}")


def columns(as_json: JsonOpt = False) -> None:
    """List the canonical job-log columns (for CSV and JSONL logs)."""
    if as_json:
        emit_json(CANONICAL_COLUMNS)
        return
    table = Table("column", "meaning", box=None)
    for name, doc in CANONICAL_COLUMNS.items():
        table.add_row(name, doc)
    out.print(table)


def register(app: typer.Typer) -> None:
    """Add `profile` and `columns` to the app."""
    app.command()(profile)
    app.command()(columns)
