"""Command line: parse, call the library, print, exit (0 ok, 1 a check failed, 2 bad input)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.table import Table

from gpudecide import __version__, workspace
from gpudecide import evidence as ev
from gpudecide.artifacts import demo as artifacts_demo
from gpudecide.artifacts.cli import register as register_artifacts
from gpudecide.console import (
    JsonOpt,
    WorkspaceOpt,
    emit_json,
    err,
    guard,
    open_workspace,
    out,
    progress,
)
from gpudecide.cost import analysis as cost_analysis
from gpudecide.cost.cli import register as register_cost
from gpudecide.cost.cli import run_cost
from gpudecide.errors import InputError
from gpudecide.jobs import profile as prof
from gpudecide.jobs.classify import ClassifyConfig
from gpudecide.jobs.load import FORMATS, JobLog, LogSpec, load_logs
from gpudecide.jobs.schema import CANONICAL_COLUMNS
from gpudecide.queue import slo as slo_mod
from gpudecide.queue.analysis import (
    QueueOptions,
    analyse_queue,
    queue_evidence,
    queue_summary_line,
    replay_evidence,
    replay_input,
    replay_summary_line,
    run_replay,
)
from gpudecide.queue.replay import POLICIES, Policy, parse_sizes
from gpudecide.queue.slo import SLO, SLOFile
from gpudecide.report import render
from gpudecide.workspace import ReplayConfig

app = typer.Typer(
    name="gpudecide",
    help="Decide where to fine-tune (dedicated GPUs, a managed endpoint or a hybrid) "
    "from evidence your team produces itself.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


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


@app.command()
def init(
    directory: Annotated[Path, typer.Argument(help="Folder to create the workspace in.")],
    force: Annotated[bool, typer.Option(help="Overwrite template files that exist.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Create a commented template workspace (gpudecide.yaml, logs/, evidence/, report/)."""
    with guard(as_json):
        written = workspace.init(directory, force=force)
    if as_json:
        emit_json({"workspace": str(directory), "written": [str(p) for p in written]})
        return
    out.print(f"workspace created in {directory}")
    for p in written:
        out.print(f"  {p}")
    out.print("next: put your job logs in logs/, edit gpudecide.yaml, run `gpudecide profile`")


@app.command()
def columns(as_json: JsonOpt = False) -> None:
    """List the canonical job-log columns (for CSV and JSONL logs)."""
    if as_json:
        emit_json(CANONICAL_COLUMNS)
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


# Options every log-reading command shares.
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
class LogArgs:
    """What the user said about the logs to read."""

    logs: list[Path]
    tz: str | None = None
    fmt: str = "auto"
    sacct_format: str | None = None
    skip_bad_rows: bool = False


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


def load_for_command(
    args: LogArgs,
    ws: workspace.Workspace | None,
    evidence_dir: Path | None,
    *,
    show_progress: bool = False,
) -> Loaded:
    """Read the given logs (or the workspace's) the way every analysis command does."""
    if args.fmt not in FORMATS:
        raise InputError(f"{args.fmt!r} is not one of {', '.join(FORMATS)}", field="--format")
    specs: list[LogSpec]
    if args.logs:
        specs = [LogSpec(p, args.fmt, args.sacct_format) for p in args.logs]  # type: ignore[arg-type]
    else:
        if ws is None:
            raise InputError(
                "no job log given and no workspace here",
                hint="pass LOG files, or run inside a workspace (gpudecide init)",
            )
        if not ws.config.logs:
            raise InputError(
                "the workspace lists no logs", path=ws.root / workspace.CONFIG_NAME, field="logs"
            )
        specs = [LogSpec(ws.root / s.path, s.format, s.sacct_format) for s in ws.config.logs]
    tz = args.tz or (ws.config.timezone if ws else "UTC")
    with progress(show_progress) as bar:
        task = bar.add_task("reading job logs", total=1) if bar else None
        log = load_logs(specs, tz=tz, skip_bad_rows=args.skip_bad_rows)
        if bar is not None and task is not None:
            bar.update(task, completed=1)
    target = evidence_dir or (ws.evidence_dir if ws else Path("evidence"))
    return Loaded(log=log, paths=[s.path for s in specs], ws=ws, evidence_dir=target)


def run_profile(
    loaded: Loaded,
    *,
    weeks: int | None = None,
    pool_gpus: int | None = None,
    until: datetime | None = None,
) -> tuple[prof.ProfileResult, Path | None]:
    """Profile loaded logs (SPEC F1-F3, C2) and write the evidence record."""
    cfg = loaded.ws.config if loaded.ws else None
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
    logs: LogsArg = None,
    weeks: Annotated[int | None, typer.Option(min=1, help="Weeks to profile (default 8).")] = None,
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
    with guard(as_json):
        ws = open_workspace(workspace_dir, required=False)
        end = _parse_until(until)
        loaded = load_for_command(
            LogArgs(list(logs or []), tz, log_format, sacct_format, skip_bad_rows),
            ws,
            evidence_dir,
            show_progress=not as_json,
        )
        result, written = run_profile(loaded, weeks=weeks, pool_gpus=pool_gpus, until=end)
    if as_json:
        body = dict(result.figures)
        body["evidence"] = str(written) if written else None
        emit_json(body)
        return
    _print_profile(result.figures)
    if written:
        out.print(f"evidence: {written}")


def _slo_path(path: Path | None, ws: workspace.Workspace | None) -> Path | None:
    if path is not None:
        return path
    if ws is not None and ws.config.queue.slo:
        return Path(ws.root / ws.config.queue.slo)
    return None


SloOpt = Annotated[
    Path | None, typer.Option("--slo", help="slo.yaml with the normal and urgent SLOs (Q3).")
]


def _check_chain_pattern(pattern: str) -> None:
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise InputError(f"not a regular expression: {exc}", field="--chain-pattern") from None
    if "chain" not in compiled.groupindex:
        raise InputError("needs a named group (?P<chain>...)", field="--chain-pattern")


@app.command()
def queue(
    logs: LogsArg = None,
    slo_opt: SloOpt = None,
    chain_pattern: Annotated[
        str | None,
        typer.Option(help="Regex with a named group `chain` taken from job names (Q5)."),
    ] = None,
    tz: TzOpt = None,
    log_format: FormatOpt = "auto",
    sacct_format: SacctFormatOpt = None,
    skip_bad_rows: SkipBadOpt = False,
    evidence_dir: EvidenceDirOpt = None,
    workspace_dir: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Queue: lifecycle phases, wait reasons, SLOs, preemption and chains (Q1-Q5)."""
    with guard(as_json):
        ws = open_workspace(workspace_dir, required=False)
        slo_path = _slo_path(slo_opt, ws)
        slos = slo_mod.load(slo_path) if slo_path else None
        pattern = chain_pattern or (ws.config.queue.chain_pattern if ws else None)
        if pattern is not None:
            _check_chain_pattern(pattern)
        loaded = load_for_command(
            LogArgs(list(logs or []), tz, log_format, sacct_format, skip_bad_rows),
            ws,
            evidence_dir,
            show_progress=not as_json,
        )
        figures, written = run_queue(loaded, slo_path, slos, pattern)
    if as_json:
        emit_json({**figures, "evidence": str(written) if written else None})
    else:
        _print_queue(figures)
        if written:
            out.print(f"evidence: {written}")
    if "fail" in figures["summary"]["slo_verdicts"].values():
        raise typer.Exit(1)


def run_queue(
    loaded: Loaded, slo_path: Path | None, slos: SLOFile | None, pattern: str | None
) -> tuple[dict[str, Any], Path | None]:
    """Queue analysis of loaded logs (SPEC Q1-Q5) and its evidence record."""
    options = QueueOptions(slos=slos, chain_pattern=pattern)
    if loaded.ws:
        options.classify = loaded.ws.config.classify
    figures = analyse_queue(loaded.log, options)
    record = queue_evidence(figures, [])
    if slo_path:
        record.inputs.append(ev.input_ref(slo_path, loaded.ws.root if loaded.ws else None))
    return figures, loaded.write(record)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 86400:.1f}d"


def _print_queue(f: dict[str, Any]) -> None:
    out.print(queue_summary_line(f), markup=False)
    table = Table("phase", "n", "p50", "p90", "p99", "max", "unmeasured", box=None)
    for phase, q in f["phases"].items():
        cells = ["" if q[k] is None else _duration(q[k]) for k in ("p50", "p90", "p99", "max")]
        table.add_row(phase, str(q["n"]), *cells, str(q["unmeasured"]))
    out.print(table)
    if f["wait_reasons"]:
        out.print("wait reasons by total wait:")
        for r in f["wait_reasons"][:8]:
            out.print(
                f"  {_duration(r['total_wait_s']):>8}  {r['reason']} ({r['category']}, "
                f"{r['jobs']} jobs)",
                markup=False,
            )
    for s in f["slo"]:
        share = "n/a" if s["violation_share"] is None else f"{s['violation_share']:.1%}"
        ci = "" if not s["ci95"] else f" (95% CI {s['ci95'][0]:.1%}-{s['ci95'][1]:.1%})"
        out.print(
            f"SLO {s['name']}: {s['verdict']}: {s['violations']}/{s['measured']} over "
            f"{s['threshold_minutes']:g} min {s['measure']} = {share}{ci}, allowed "
            f"{s['allowed_violation_share']:.0%}",
            markup=False,
        )
    p = f["preemption"]
    out.print(
        f"preemption: {p['stops']} stop(s); {p['gpu_minutes_lost_since_checkpoint']} "
        "GPU-minutes lost since measured checkpoints",
        markup=False,
    )
    for finding in p["findings"]:
        out.print(f"  finding: {finding}", markup=False)
    for note in f["summary"]["source_notes"]:
        out.print(f"note: {note}", markup=False)
    for c in f["chains"]:
        e2e = "unfinished" if c["end_to_end_s"] is None else _duration(c["end_to_end_s"])
        out.print(
            f"chain {c['chain']}: {c['jobs']} jobs, {e2e} to {c['last_stage']}; longest "
            f"wait in {c['longest_waiting_stage']}",
            markup=False,
        )


@app.command()
def replay(
    logs: LogsArg = None,
    gpus: Annotated[
        str | None, typer.Option(help="Pool sizes, e.g. 8,16,32, or auto (needs an SLO).")
    ] = None,
    slo_opt: SloOpt = None,
    slo_name: Annotated[
        str | None, typer.Option(help="Which SLO of the file to meet (default normal).")
    ] = None,
    policy: Annotated[
        str | None, typer.Option(help="fifo | backfill | priority (default fifo).")
    ] = None,
    window: Annotated[str | None, typer.Option(help="full | peak (the busiest 4 weeks).")] = None,
    checkpoint_minutes: Annotated[
        float | None, typer.Option(min=0.1, help="Checkpoint interval for priority preemption.")
    ] = None,
    tz: TzOpt = None,
    log_format: FormatOpt = "auto",
    sacct_format: SacctFormatOpt = None,
    skip_bad_rows: SkipBadOpt = False,
    evidence_dir: EvidenceDirOpt = None,
    workspace_dir: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Replay the log through a dedicated pool of N GPUs: waits, SLO, utilisation (C8, D3)."""
    with guard(as_json):
        ws = open_workspace(workspace_dir, required=False)
        rcfg = ws.config.replay if ws else ReplayConfig()
        chosen_policy = policy or rcfg.policy
        if chosen_policy not in POLICIES:
            raise InputError(
                f"{chosen_policy!r} is not fifo, backfill or priority", field="--policy"
            )
        chosen_window = window or rcfg.window
        if chosen_window not in ("full", "peak"):
            raise InputError(f"{chosen_window!r} is not full or peak", field="--window")
        try:
            sizes = parse_sizes(gpus or rcfg.gpus)
        except ValueError as exc:
            raise InputError(str(exc), field="--gpus", hint="e.g. --gpus 8,16,32 or auto") from None
        slo_path = _slo_path(slo_opt, ws)
        slos = slo_mod.load(slo_path) if slo_path else None
        name = slo_name or rcfg.slo
        chosen_slo = None
        if slos is not None:
            if name not in slos.slos:
                raise InputError(
                    f"no SLO named {name!r} (have {', '.join(slos.slos)})", field="--slo-name"
                )
            chosen_slo = (name, slos.slos[name])
        loaded = load_for_command(
            LogArgs(list(logs or []), tz, log_format, sacct_format, skip_bad_rows),
            ws,
            evidence_dir,
            show_progress=not as_json,
        )
        ckpt = checkpoint_minutes or rcfg.checkpoint_minutes
        figures, written = run_replay_for(
            loaded,
            sizes,
            chosen_policy,
            "peak" if chosen_window == "peak" else "full",
            chosen_slo,
            slo_path,
            None if ckpt is None else ckpt * 60,
        )
    if as_json:
        emit_json({**figures, "evidence": str(written) if written else None})
    else:
        _print_replay(figures)
        if written:
            out.print(f"evidence: {written}")
    if figures["slo"] and figures["recommended_gpus"] is None:
        raise typer.Exit(1)


def run_replay_for(
    loaded: Loaded,
    sizes: list[int] | Literal["auto"],
    policy: Policy,
    window: Literal["full", "peak"],
    slo: tuple[str, SLO] | None,
    slo_path: Path | None,
    checkpoint_s: float | None = None,
) -> tuple[dict[str, Any], Path | None]:
    """Replay loaded logs through pools of the given sizes and write the evidence record."""
    classify = loaded.ws.config.classify if loaded.ws else ClassifyConfig()
    figures = run_replay(
        replay_input(loaded.log, classify, window), sizes, policy, slo, checkpoint_s
    )
    record = replay_evidence(figures, [])
    if slo_path:
        record.inputs.append(ev.input_ref(slo_path, loaded.ws.root if loaded.ws else None))
    return figures, loaded.write(record)


def _print_replay(figures: dict[str, Any]) -> None:
    out.print(replay_summary_line(figures), markup=False)
    table = Table(
        "GPUs",
        "jobs",
        "p50",
        "p95",
        "p99",
        "max",
        "SLO viol.",
        "util.",
        "longest queue",
        box=None,
    )
    for p in figures["pools"]:
        waits = [
            _duration(p[k] or 0.0) for k in ("wait_p50_s", "wait_p95_s", "wait_p99_s", "wait_max_s")
        ]
        share = p["slo_violation_share"]
        table.add_row(
            str(p["gpus"]),
            str(p["jobs"]),
            *waits,
            "n/a" if share is None else f"{share:.1%}",
            f"{(p['utilisation'] or 0):.0%}",
            str(p["longest_queue"]),
        )
    out.print(table)
    for note in figures["notes"]:
        out.print(f"note: {note}", markup=False)


register_cost(app)  # `gpudecide cost` (SPEC C1-C10, V2), listed after `replay`
register_artifacts(app)  # `gpudecide hash`, `manifest ...`, `audit` (SPEC A1-A8, E2, E5)


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
    with guard(as_json):
        ws = open_workspace(workspace_dir, required=True)
        assert ws is not None
        paths = build_report(ws, out_dir)
    if as_json:
        emit_json({k: str(v) for k, v in paths.items()})
        return
    for kind, path in paths.items():
        out.print(f"{kind}: {path}")


@app.command("evidence")
def evidence_cmd(workspace_dir: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """List evidence records and whether each still matches its inputs (exit 1 if not)."""
    with guard(as_json):
        ws = open_workspace(workspace_dir, required=True)
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
        emit_json({"records": rows, "all_fresh": not bad})
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

    with guard(as_json):
        ws = demo_mod.create(out_dir, force=force)
        loaded = load_for_command(LogArgs([]), ws, None, show_progress=not as_json)
        result, written = run_profile(loaded)
        slo_path = _slo_path(None, ws)
        slos = slo_mod.load(slo_path) if slo_path else None
        queue_figures, queue_written = run_queue(loaded, slo_path, slos, None)
        replay_figures, replay_written = run_replay_for(
            loaded,
            [4, 8, 12, 16, 24],
            "fifo",
            "peak",
            ("normal", slos.slos["normal"]) if slos else None,
            slo_path,
        )
        cost = run_cost(ws.root)
        audited = artifacts_demo.run(ws)
        paths = build_report(ws)
    records = [p for p in (written, queue_written, replay_written, cost.written, audited) if p]
    if as_json:
        emit_json(
            {
                "workspace": str(out_dir),
                "evidence": [str(p) for p in records],
                "report": {k: str(v) for k, v in paths.items()},
                "profile": {k: v for k, v in result.figures.items() if k != "weeks"},
                "queue": queue_figures["summary"],
                "replay": {k: v for k, v in replay_figures.items() if k != "notes"},
                "cost": cost_analysis.summary_line(cost.result.figures),
                "audit": ev.load(audited).summary,
            }
        )
        return
    out.print(prof.summary_line(result.figures), markup=False)
    out.print(queue_summary_line(queue_figures), markup=False)
    out.print(replay_summary_line(replay_figures), markup=False)
    out.print(cost_analysis.summary_line(cost.result.figures), markup=False)
    out.print(ev.load(audited).summary, markup=False)
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
