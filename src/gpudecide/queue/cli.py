"""`gpudecide queue` (SPEC Q1-Q5) and `gpudecide replay` (C8, D3): commands and printers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.table import Table

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.console import JsonOpt, WorkspaceOpt, emit_json, guard, out
from gpudecide.errors import InputError
from gpudecide.inputs import node_line, yaml_root
from gpudecide.jobs.classify import ClassifyConfig
from gpudecide.jobs.cli import (
    EvidenceDirOpt,
    FormatOpt,
    Loaded,
    LogCommand,
    LogsArg,
    SacctFormatOpt,
    SkipBadOpt,
    TzOpt,
)
from gpudecide.jobs.figures import reconciliation_line
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
from gpudecide.workspace import ReplayConfig


def slo_path_of(path: Path | None, ws: workspace.Workspace | None) -> Path | None:
    """The SLO file given with --slo, else the workspace's `queue.slo`, else None."""
    if path is not None:
        return path
    if ws is not None and ws.config.queue.slo:
        return Path(ws.root / ws.config.queue.slo)
    return None


SloOpt = Annotated[
    Path | None, typer.Option("--slo", help="slo.yaml with the normal and urgent SLOs (Q3).")
]


def where_set(
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
        raise InputError(f"not a regular expression: {exc}", **where) from None
    if "chain" not in compiled.groupindex:
        raise InputError("needs a named group (?P<chain>...)", **where)


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
        ws = command.workspace()
        slo_path = slo_path_of(slo_opt, ws)
        slos = slo_mod.load(slo_path) if slo_path else None
        pattern = chain_pattern or (ws.config.queue.chain_pattern if ws else None)
        if pattern is not None:
            where = where_set("--chain-pattern", ("queue", "chain_pattern"), chain_pattern, ws)
            _check_chain_pattern(pattern, where)
        loaded = command.load()
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


def _print_slo(s: dict[str, Any]) -> None:
    share = "n/a" if s["violation_share"] is None else f"{s['violation_share']:.1%}"
    ci = "" if not s["ci95"] else f" (95% CI {s['ci95'][0]:.1%}-{s['ci95'][1]:.1%})"
    out.print(
        f"SLO {s['name']}: {s['verdict']}: {s['violations']}/{s['measured']} over "
        f"{s['threshold_minutes']:g} min {s['measure']} = {share}{ci}, allowed "
        f"{s['allowed_violation_share']:.0%}",
        markup=False,
    )
    if s["verdict"] == "inconclusive":
        more = s.get("more_jobs_to_settle")
        out.print(
            f"  the interval holds the allowed share: point estimate {s['point_estimate']}; "
            + (f"about {more} more jobs would settle it" if more else "no sample settles it"),
            markup=False,
        )
    causes = s.get("violations_by_cause") or {}
    if s["violations"]:
        out.print(
            "  violations by cause: "
            + ", ".join(f"{n} {cause.replace('_', ' ')}" for cause, n in causes.items() if n),
            markup=False,
        )


def _print_skipped(f: dict[str, Any]) -> None:
    if not f["skipped_rows"]:
        return
    out.print(f"{f['skipped_rows']} malformed row(s) skipped:", markup=False)
    for b in f["skipped"][:10]:
        out.print(f"  {b['path']}:{b['line']}: {b['field'] or ''} {b['reason']}", markup=False)


def _print_queue(f: dict[str, Any]) -> None:
    out.print(queue_summary_line(f), markup=False)
    out.print(reconciliation_line(f["summary"]["reconciliation"]), markup=False)
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
        _print_slo(s)
    p = f["preemption"]
    out.print(
        f"preemption: {p['stops']} stop(s); {p['gpu_minutes_lost_since_checkpoint']} "
        "GPU-minutes lost since measured checkpoints",
        markup=False,
    )
    for finding in p["findings"]:
        out.print(f"  finding: {finding}", markup=False)
    for finding in f["restarts_from_zero"]["findings"]:
        out.print(f"  finding: {finding}", markup=False)
    _print_skipped(f)
    for note in f["summary"]["source_notes"]:
        out.print(f"note: {note}", markup=False)
    for c in f["chains"]:
        e2e = "unfinished" if c["end_to_end_s"] is None else _duration(c["end_to_end_s"])
        out.print(
            f"chain {c['chain']}: {c['jobs']} jobs, {e2e} to {c['last_stage']}; longest "
            f"wait in {c['longest_waiting_stage']}",
            markup=False,
        )


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
        ws = command.workspace()
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
            where = where_set("--gpus", ("replay", "gpus"), gpus, ws)
            raise InputError(str(exc), hint="e.g. 8,16,32 or auto", **where) from None
        slo_path = slo_path_of(slo_opt, ws)
        slos = slo_mod.load(slo_path) if slo_path else None
        name = slo_name or rcfg.slo
        chosen_slo = None
        if slos is not None:
            if name not in slos.slos:
                raise InputError(
                    f"no SLO named {name!r} (have {', '.join(slos.slos)})", field="--slo-name"
                )
            chosen_slo = (name, slos.slos[name])
        loaded = command.load()
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


def register(app: typer.Typer) -> None:
    """Add `queue` and `replay` to the app."""
    app.command()(queue)
    app.command()(replay)
