"""Command line: parse, call the library, print, exit (0 ok, 1 a check failed, 2 bad input)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from gpudecide import __version__, workspace
from gpudecide import evidence as ev
from gpudecide.errors import InputError
from gpudecide.jobs import profile as prof
from gpudecide.jobs.load import JobLog, LogFormat, load_logs
from gpudecide.jobs.schema import CANONICAL_COLUMNS
from gpudecide.report import render

app = typer.Typer(
    name="gpudecide",
    help="Decide where to fine-tune (dedicated GPUs, a managed endpoint or a hybrid) "
    "from evidence your team produces itself.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object for machines.")]
WorkspaceOpt = Annotated[
    Path | None,
    typer.Option("--workspace", "-w", help="Workspace folder (default: found from here up)."),
]

F = TypeVar("F", bound=Callable[..., Any])


def _fail(error: InputError, as_json: bool) -> NoReturn:
    if as_json:
        print(json.dumps(error.as_dict(), ensure_ascii=False))
    err.print(f"error: {error.one_line()}", markup=False)
    raise typer.Exit(2)


def _emit_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


@contextmanager
def _guard(as_json: bool) -> Iterator[None]:
    """Bad input of any kind becomes one line and exit code 2, never a traceback."""
    try:
        yield
    except InputError as exc:
        _fail(exc, as_json)
    except PermissionError as exc:
        _fail(InputError("permission denied", path=exc.filename), as_json)
    except IsADirectoryError as exc:
        _fail(InputError("is a directory, not a file", path=exc.filename), as_json)
    except FileNotFoundError as exc:
        _fail(InputError("no such file or directory", path=exc.filename), as_json)


@contextmanager
def _progress(enabled: bool) -> Iterator[Progress | None]:
    if not enabled or not err.is_terminal:
        yield None
        return
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        yield bar


def _version(value: bool) -> None:
    if value:
        print(f"gpudecide {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """gpudecide: evidence for the GPU decision."""


def _workspace(path: Path | None, required: bool) -> workspace.Workspace | None:
    root = path if path is not None else workspace.find_root(Path.cwd())
    if root is None:
        if required:
            raise InputError(
                "not inside a gpudecide workspace",
                hint="pass --workspace DIR, or create one with `gpudecide init DIR`",
            )
        return None
    return workspace.load(root)


@app.command()
def init(
    directory: Annotated[Path, typer.Argument(help="Folder to create the workspace in.")],
    force: Annotated[bool, typer.Option(help="Overwrite template files that exist.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Create a commented template workspace (gpudecide.yaml, logs/, evidence/, report/)."""
    with _guard(as_json):
        written = workspace.init(directory, force=force)
    if as_json:
        _emit_json({"workspace": str(directory), "written": [str(p) for p in written]})
        return
    out.print(f"workspace created in {directory}")
    for p in written:
        out.print(f"  {p}")
    out.print("next: put your job logs in logs/, edit gpudecide.yaml, run `gpudecide profile`")


@app.command()
def columns(as_json: JsonOpt = False) -> None:
    """List the canonical job-log columns (for CSV and JSONL logs)."""
    if as_json:
        _emit_json(CANONICAL_COLUMNS)
        return
    table = Table("column", "meaning", box=None)
    for name, doc in CANONICAL_COLUMNS.items():
        table.add_row(name, doc)
    out.print(table)


def _parse_until(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise InputError(
            f"{value!r} is not an ISO 8601 time", field="--until", hint="e.g. 2026-07-27T00:00:00Z"
        ) from None
    return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp


def _load(
    paths: list[Path],
    *,
    fmt: LogFormat,
    tz: str,
    sacct_format: str | None,
    skip_bad_rows: bool,
    show_progress: bool,
) -> JobLog:
    with _progress(show_progress) as bar:
        task = bar.add_task("reading job logs", total=1) if bar else None
        log = load_logs(
            paths, fmt=fmt, tz=tz, sacct_format=sacct_format, skip_bad_rows=skip_bad_rows
        )
        if bar is not None and task is not None:
            bar.update(task, completed=1)
    return log


def run_profile(
    logs: list[Path],
    ws: workspace.Workspace | None,
    *,
    weeks: int | None = None,
    pool_gpus: int | None = None,
    tz: str | None = None,
    fmt: LogFormat = "auto",
    sacct_format: str | None = None,
    skip_bad_rows: bool = False,
    until: datetime | None = None,
    evidence_dir: Path | None = None,
    show_progress: bool = False,
) -> tuple[prof.ProfileResult, Path | None]:
    """Load logs (given, or the workspace's), profile them, write the evidence record."""
    cfg = ws.config if ws else None
    if not logs:
        if ws is None:
            raise InputError(
                "no job log given and no workspace here",
                hint="pass LOG files, or run inside a workspace (gpudecide init)",
            )
        if not ws.config.logs:
            raise InputError(
                "the workspace lists no logs", path=ws.root / workspace.CONFIG_NAME, field="logs"
            )
        logs = ws.log_paths()
        if sacct_format is None:
            sacct_format = ws.config.logs[0].sacct_format
        if fmt == "auto":
            fmt = ws.config.logs[0].format
    options = prof.ProfileOptions(
        weeks=weeks or (cfg.profile.weeks if cfg else 8),
        pool_gpus=pool_gpus if pool_gpus is not None else (cfg.profile.pool_gpus if cfg else None),
        until=until,
    )
    if cfg:
        options.classify = cfg.classify
    log = _load(
        logs,
        fmt=fmt,
        tz=tz or (cfg.timezone if cfg else "UTC"),
        sacct_format=sacct_format,
        skip_bad_rows=skip_bad_rows,
        show_progress=show_progress,
    )
    result = prof.build_profile(log, options)
    target = evidence_dir or (ws.evidence_dir if ws else None)
    written = None
    if target is not None:
        root = ws.root if ws else None
        record = prof.to_evidence(result, [ev.input_ref(p, root) for p in logs])
        written = ev.write(record, target)
    return result, written


def _print_profile(f: dict[str, Any]) -> None:
    out.print(prof.summary_line(f))
    table = Table("kind", "jobs", "GPU-hours", box=None)
    for k, n in f["jobs_by_kind"].items():
        table.add_row(k, str(n), f"{f['gpu_hours_by_kind'][k]:.1f}")
    out.print(table)
    burst, pred = f["burstiness"], f["predictability"]
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
        out.print(f"[yellow]{f['skipped_rows']} malformed row(s) skipped:[/yellow]")
        for b in f["skipped"][:10]:
            out.print(f"  {b['path']}:{b['line']}: {b['field'] or ''} {b['reason']}", markup=False)
    for note in f["notes"]:
        out.print(f"note: {note}", markup=False)


@app.command()
def profile(
    logs: Annotated[
        list[Path] | None,
        typer.Argument(help="Job logs (sacct --parsable2, CSV, JSONL); default: the workspace's."),
    ] = None,
    weeks: Annotated[int | None, typer.Option(min=1, help="Weeks to profile (default 8).")] = None,
    pool_gpus: Annotated[
        int | None, typer.Option(min=1, help="Pool size for the busy share (SPEC C2).")
    ] = None,
    tz: Annotated[
        str | None, typer.Option(help="Time zone sacct printed times in (IANA name).")
    ] = None,
    log_format: Annotated[
        str, typer.Option("--format", help="auto | sacct | csv | jsonl.")
    ] = "auto",
    sacct_format: Annotated[
        str | None,
        typer.Option(help="The --format list given to sacct, for output without a header."),
    ] = None,
    skip_bad_rows: Annotated[
        bool, typer.Option(help="Count and report malformed rows instead of stopping.")
    ] = False,
    until: Annotated[
        str | None, typer.Option(help="End of the window (ISO 8601); default: last event.")
    ] = None,
    evidence_dir: Annotated[
        Path | None, typer.Option(help="Where to write the evidence record.")
    ] = None,
    workspace_dir: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Profile the workload: all related jobs, shape, predictability, busy share (F1-F3)."""
    with _guard(as_json):
        if log_format not in ("auto", "sacct", "csv", "jsonl"):
            raise InputError(f"{log_format!r} is not auto, sacct, csv or jsonl", field="--format")
        ws = _workspace(workspace_dir, required=False)
        if ws is None and evidence_dir is None:
            evidence_dir = Path("evidence")
        result, written = run_profile(
            list(logs or []),
            ws,
            weeks=weeks,
            pool_gpus=pool_gpus,
            tz=tz,
            fmt=log_format,  # type: ignore[arg-type]
            sacct_format=sacct_format,
            skip_bad_rows=skip_bad_rows,
            until=_parse_until(until),
            evidence_dir=evidence_dir,
            show_progress=not as_json,
        )
    if as_json:
        body = dict(result.figures)
        body["evidence"] = str(written) if written else None
        _emit_json(body)
        return
    _print_profile(result.figures)
    if written:
        out.print(f"evidence: {written}")


def build_report(ws: workspace.Workspace, out_dir: Path | None = None) -> dict[str, Path]:
    """Render the workspace's evidence into report/ (HTML, Markdown, JSON)."""
    records = ev.load_all(ws.evidence_dir)
    report = render.build(
        records,
        ws.root,
        team=ws.config.team,
        decision=ws.config.decision,
        language=ws.config.report.language,
    )
    return render.write(report, out_dir or ws.report_dir)


@app.command()
def report(
    workspace_dir: WorkspaceOpt = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Folder to write to.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Write report/index.html, report.md and report.json from the workspace's evidence."""
    with _guard(as_json):
        ws = _workspace(workspace_dir, required=True)
        assert ws is not None
        paths = build_report(ws, out_dir)
    if as_json:
        _emit_json({k: str(v) for k, v in paths.items()})
        return
    for kind, path in paths.items():
        out.print(f"{kind}: {path}")


@app.command("evidence")
def evidence_cmd(workspace_dir: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """List evidence records and whether each still matches its inputs (exit 1 if not)."""
    with _guard(as_json):
        ws = _workspace(workspace_dir, required=True)
        assert ws is not None
        records = ev.load_all(ws.evidence_dir)
        rows = []
        for record in records:
            state, problems = ev.freshness(record, ws.root)
            rows.append(
                {
                    "id": record.id,
                    "kind": record.kind,
                    "verdict": record.verdict,
                    "created_at_utc": record.created_at_utc,
                    "freshness": state.value,
                    "problems": problems,
                }
            )
    bad = [r for r in rows if r["freshness"] != "fresh"]
    if as_json:
        _emit_json({"records": rows, "all_fresh": not bad})
    else:
        table = Table("id", "kind", "verdict", "created", "freshness", box=None)
        for r in rows:
            table.add_row(
                *(str(r[k]) for k in ("id", "kind", "verdict", "created_at_utc", "freshness"))
            )
        out.print(table if rows else "no evidence records yet")
        for r in bad:
            for p in r["problems"]:
                out.print(f"{r['id']}: {p}", markup=False)
    if bad:
        raise typer.Exit(1)


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the demo workspace.")] = Path(
        "gpudecide-demo"
    ),
    force: Annotated[bool, typer.Option(help="Reuse a folder that is not empty.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Build the demo workspace (a fictional team, 8 weeks of sacct log) and its report."""
    from gpudecide import demo as demo_mod

    with _guard(as_json):
        ws = demo_mod.create(out_dir, force=force)
        result, written = run_profile([], ws, show_progress=not as_json)
        paths = build_report(ws)
    if as_json:
        _emit_json(
            {
                "workspace": str(out_dir),
                "evidence": [str(written)] if written else [],
                "report": {k: str(v) for k, v in paths.items()},
                "profile": {k: v for k, v in result.figures.items() if k != "weeks"},
            }
        )
        return
    out.print(prof.summary_line(result.figures))
    out.print(f"demo workspace: {out_dir}")
    for kind, path in paths.items():
        out.print(f"{kind}: {path}")


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
