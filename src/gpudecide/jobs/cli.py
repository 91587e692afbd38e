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
from gpudecide import fmt, workspace
from gpudecide.console import (
    JsonOpt,
    WorkspaceOpt,
    emit_json,
    guard,
    language,
    open_workspace,
    out,
    print_written,
    progress,
)
from gpudecide.errors import InputError
from gpudecide.fmt import moment
from gpudecide.i18n import translator
from gpudecide.jobs import bounds
from gpudecide.jobs import profile as prof
from gpudecide.jobs.load import FORMATS, JobLog, LogSpec, load_logs
from gpudecide.jobs.schema import CANONICAL_COLUMNS, COLUMN_DOCS, KINDS, STATES
from gpudecide.jobs.words import (
    figure,
    meaning_text,
    reconciliation_text,
    shape_word,
    skipped_lines,
    verdict_word,
)
from gpudecide.message import render

_ = translator("jobs")
_n = _.n


def _parse_until(value: str | None) -> datetime | None:
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


def _check_weeks(weeks: int | None) -> None:
    """A window longer than MAX_WEEKS is no profile of a job log (and overflows dates)."""
    if weeks is not None and not 1 <= weeks <= prof.MAX_WEEKS:
        raise InputError(
            "{weeks} weeks is outside 1-{most}",
            field="--weeks",
            hint="profile at most twenty years; 8 weeks is the usual window",
            weeks=weeks,
            most=prof.MAX_WEEKS,
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


def _profile_lines(f: dict[str, Any]) -> list[str]:
    """The profile's figures after its table, one sentence each (F1-F3, C2)."""
    burst, pred = f["burstiness"], f["predictability"]
    sources = ", ".join(
        _("{n} from {source}").format(n=figure(n), source=src)
        for src, n in f["gpu_count_sources"].items()
    )
    w, d = f["window"], f["duration_hours"]
    lines = [
        reconciliation_text(f["reconciliation"]),
        _("GPU counts of started attempts: {sources}").format(sources=sources or _("none")),
        _(
            "window {start} .. {end} ({weeks} weeks); attempts {attempts}, restarts {restarts}, "
            "never started {never}, unsuccessful {unsuccessful}"
        ).format(
            start=moment(w["start"]),
            end=moment(w["end"]),
            weeks=figure(w["weeks"]),
            attempts=figure(f["attempts_total"]),
            restarts=figure(f["restarts"]),
            never=figure(f["never_started"]),
            unsuccessful=figure(f["unsuccessful_share"]),
        ),
        _(
            "peak concurrent GPUs {peak}; jobs/week {per_week}; duration p50 {p50} h, p90 {p90} h"
        ).format(
            peak=figure(f["peak_concurrent_gpus"]),
            per_week=figure(f["jobs_per_week_mean"]),
            p50=figure(d["p50"]),
            p90=figure(d["p90"]),
        ),
        _(
            "shape: {shape} (weekly GPU-hours CV {cv}, bursty at >= {cv_min}; top {top} of jobs "
            "hold {share} of GPU-hours, bursty at >= {share_min})"
        ).format(
            shape=shape_word(burst["shape"]),
            cv=figure(burst["weekly_gpu_hours_cv"]),
            cv_min=figure(burst["thresholds"]["bursty_cv_min"]),
            top=fmt.pct0(burst["top_jobs_fraction"]),
            share=figure(burst["top_jobs_gpu_hours_share"]),
            share_min=figure(burst["thresholds"]["bursty_top_share_min"]),
        ),
        _(
            "predictability: {verdict} (WAPE {wape}; predictable <= {max}, partly <= {partly}): "
            "{meaning}; lead-time share {lead}"
        ).format(
            verdict=verdict_word(pred["verdict"]),
            wape=figure(pred["wape"]),
            max=figure(pred["thresholds"]["predictable_wape_max"]),
            partly=figure(pred["thresholds"]["partly_predictable_wape_max"]),
            meaning=meaning_text(pred),
            lead=figure(pred["lead_time_share"]),
        ),
    ]
    if f["pool_gpus"]:
        lines.append(
            _n(
                "busy share of a {gpus}-GPU pool: {useful} useful, {occupied} occupied "
                "(of {hours} GPU-hour)",
                "busy share of a {gpus}-GPU pool: {useful} useful, {occupied} occupied "
                "(of {hours} GPU-hours)",
                f["available_gpu_hours"],
            ).format(
                gpus=f["pool_gpus"],
                useful=figure(f["busy_share"]),
                occupied=figure(f["occupied_share"]),
                hours=figure(f["available_gpu_hours"]),
            )
        )
    return lines


def _print_profile(result: prof.ProfileResult) -> None:
    """The profile for people: its summary, the kinds, one line per figure, then the rows
    skipped and the notes, in the reader's language."""
    f = result.figures
    out.print(render(f["messages"]["summary"]))
    table = Table(_("kind"), _("jobs"), _("GPU-hours"), box=None)
    for k, n in f["jobs_by_kind"].items():
        table.add_row(k, figure(n), fmt.digits(f"{f['gpu_hours_by_kind'][k]:.1f}"))
    out.print(table)
    for line in _profile_lines(f):
        out.print(line, markup=False)
    for i, line in enumerate(skipped_lines(f)):
        out.print(line, style="yellow" if i == 0 else None, markup=False)
    note = _("note: {text}")
    for msg in result.notes:  # the skipped rows are printed on their own above
        out.print(note.format(text=render(msg)), markup=False)


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
    _print_profile(result)
    if written:
        print_written(written)


def columns(as_json: JsonOpt = False) -> None:
    """List the canonical job-log columns (for CSV and JSONL logs)."""
    if as_json:
        emit_json(CANONICAL_COLUMNS)
        return
    _speak_workspace_language()
    # Column names and listed values stand out as what they are: names to type as is.
    values = {
        "kinds": ", ".join(f"`{k}`" for k in KINDS),
        "states": ", ".join(f"`{s}`" for s in STATES),
    }
    table = Table(_("column"), _("meaning"), box=None)
    for name, doc in COLUMN_DOCS.items():
        table.add_row(f"`{name}`", _(doc).format(**values))
    out.print(table)


def _speak_workspace_language() -> None:
    """Speak the language of the workspace found from here up, unless `--lang` or
    $GPUDECIDE_LANG chose one (none is needed, and a broken one is no reason to refuse a
    list of columns: then English)."""
    try:
        open_workspace(None, required=False)
    except (InputError, OSError):
        language(None)


def register(app: typer.Typer) -> None:
    """Add `profile` and `columns` to the app."""
    app.command()(profile)
    app.command()(columns)
