"""`gpudecide queue` (SPEC Q1-Q5) and `gpudecide replay` (C8, D3): commands and printers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.table import Table

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.console import JsonOpt, WorkspaceOpt, emit_json, guard, language, out, print_written
from gpudecide.errors import InputError
from gpudecide.i18n import translator
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
    reconciliation_text,
    skipped_lines,
)
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
from gpudecide.queue.report import CATEGORIES, LOST_BY, PHASES, VERDICTS
from gpudecide.queue.slo import SLO, SLOFile
from gpudecide.report.fmt import localize_digits, not_available
from gpudecide.report.i18n import N_, localize, notes_of, summary_of, verdict_label
from gpudecide.workspace import ReplayConfig

_ = translator("queue")


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
        lang = language(command.workspace())
        _print_queue(figures, lang)
        if written:
            print_written(written, lang)
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


_UNITS = {"s": N_("{n}s"), "m": N_("{n}m"), "h": N_("{n}h"), "d": N_("{n}d")}


def _duration(seconds: float, lang: str = "en") -> str:
    """A wait or run time in the unit that reads best: 45s, 12m, 3.5h, 2.5d."""
    if seconds < 120:
        n, unit = f"{seconds:.0f}", "s"
    elif seconds < 7200:
        n, unit = f"{seconds / 60:.0f}", "m"
    elif seconds < 172800:
        n, unit = f"{seconds / 3600:.1f}", "h"
    else:
        n, unit = f"{seconds / 86400:.1f}", "d"
    return _(_UNITS[unit], lang).format(n=localize_digits(n, lang))


def _pct(value: float, places: int, lang: str) -> str:
    return localize_digits(f"{value:.{places}%}", lang)


def _verdict_word(verdict: str, lang: str) -> str:
    """An SLO verdict (pass, fail, inconclusive, not measurable) in `lang`."""
    if lang == "en":
        return verdict
    if verdict in VERDICTS:
        return _(VERDICTS[verdict], lang)
    return verdict_label(verdict, lang)


def _category(key: str, lang: str) -> str:
    """A wait-reason category or violation cause in `lang` (English: as the analysis wrote it)."""
    if lang == "en" or key not in CATEGORIES:
        return key
    return _(CATEGORIES[key], lang)


def _slo_lines(s: dict[str, Any], lang: str) -> list[str]:
    """One SLO's verdict, and for an inconclusive one what would settle it (Q3)."""
    share = (
        not_available(lang) if s["violation_share"] is None else _pct(s["violation_share"], 1, lang)
    )
    args = {
        "name": s["name"],
        "verdict": _verdict_word(str(s["verdict"]), lang),
        "violations": localize_digits(str(s["violations"]), lang),
        "measured": localize_digits(str(s["measured"]), lang),
        "threshold": localize_digits(f"{s['threshold_minutes']:g}", lang),
        "measure": s["measure"],
        "share": share,
        "allowed": _pct(s["allowed_violation_share"], 0, lang),
    }
    if s["ci95"]:
        line = _(
            "SLO {name}: {verdict}: {violations}/{measured} over {threshold} min {measure} = "
            "{share} (95% CI {lo}-{hi}), allowed {allowed}",
            lang,
        ).format(**args, lo=_pct(s["ci95"][0], 1, lang), hi=_pct(s["ci95"][1], 1, lang))
    else:
        line = _(
            "SLO {name}: {verdict}: {violations}/{measured} over {threshold} min {measure} = "
            "{share}, allowed {allowed}",
            lang,
        ).format(**args)
    lines = [line]
    if s["verdict"] == "inconclusive":
        more = s.get("more_jobs_to_settle")
        point = _verdict_word(str(s["point_estimate"]), lang)
        if more:
            lines.append(
                "  "
                + _(
                    "the interval holds the allowed share: point estimate {point}; about {more} "
                    "more jobs would settle it",
                    lang,
                ).format(point=point, more=localize_digits(str(more), lang))
            )
        else:
            lines.append(
                "  "
                + _(
                    "the interval holds the allowed share: point estimate {point}; no sample "
                    "settles it",
                    lang,
                ).format(point=point)
            )
    causes = s.get("violations_by_cause") or {}
    if s["violations"]:
        named = ", ".join(
            f"{localize_digits(str(n), lang)} {_cause(cause, lang)}"
            for cause, n in causes.items()
            if n
        )
        lines.append("  " + _("violations by cause: {causes}", lang).format(causes=named))
    return lines


_CAUSES = {
    "capacity": N_("capacity"),
    "own_limits": N_("own limits"),
    "team_choice": N_("team choice"),
    "other": N_("other"),
}


def _cause(cause: str, lang: str) -> str:
    """A cause of SLO violations (capacity, the team's own limits, ...) in `lang`."""
    if lang == "en" or cause not in _CAUSES:
        return cause.replace("_", " ")
    return _(_CAUSES[cause], lang)


def _restart_findings(f: dict[str, Any], lang: str) -> list[str]:
    """The runs restarted from zero (G1): the analysis's English, or rebuilt in `lang`."""
    found = f["restarts_from_zero"]
    if lang == "en":
        return list(found["findings"])
    zero = [e for e in found.get("restarts", []) if e["verdict"] == "restarted_from_zero"]
    if len(zero) != len(found["findings"]):
        return [localize(x, lang, _DOMAINS) for x in found["findings"]]
    lost_by = {k: _(v, lang) for k, v in LOST_BY.items()}
    return [
        _(
            "{job} ({name}) lost its run after {hours} h ({state}) and restarted from zero: "
            "{gpu_hours} GPU-hours lost; checkpoint time known: {known}",
            lang,
        ).format(
            job=e["job_id"],
            name=e["name"],
            hours=localize_digits(f"{e['lost_attempt_s'] / 3600:.1f}", lang),
            state=lost_by.get(str(e["state"]), str(e["state"])),
            gpu_hours=localize_digits(f"{e['gpu_hours_lost'] or 0.0:.1f}", lang),
            known=_("yes", lang) if e["checkpoint_known"] else _("no", lang),
        )
        for e in zero
    ]


# Where the English the analyses wrote (findings, notes) is looked up for ru and kk.
_DOMAINS = ("queue", "jobs", "report")


def _english(text: str, lang: str) -> str:
    return text if lang == "en" else localize(text, lang, _DOMAINS)


def _queue_tail(f: dict[str, Any], lang: str) -> list[str]:
    """Preemption, findings, skipped rows, notes and chains, one line each (Q4, Q5)."""
    p = f["preemption"]
    lines = [
        _(
            "preemption: {stops} stop(s); {minutes} GPU-minutes lost since measured checkpoints",
            lang,
        ).format(
            stops=localize_digits(str(p["stops"]), lang),
            minutes=localize_digits(str(p["gpu_minutes_lost_since_checkpoint"]), lang),
        )
    ]
    finding = "  " + _("finding: {text}", lang)
    lines += [finding.format(text=_english(x, lang)) for x in p["findings"]]
    lines += [finding.format(text=x) for x in _restart_findings(f, lang)]
    lines += skipped_lines(f, lang)
    note = _("note: {text}", lang)
    lines += [note.format(text=_english(x, lang)) for x in f["summary"]["source_notes"]]
    for c in f["chains"]:
        seconds = c["end_to_end_s"]
        e2e = _("unfinished", lang) if seconds is None else _duration(seconds, lang)
        lines.append(
            _(
                "chain {chain}: {jobs} jobs, {e2e} to {last}; longest wait in {stage}", lang
            ).format(
                chain=c["chain"],
                jobs=localize_digits(str(c["jobs"]), lang),
                e2e=e2e,
                last=c["last_stage"],
                stage=c["longest_waiting_stage"],
            )
        )
    return lines


def _summary(kind: str, english: str, f: dict[str, Any], lang: str) -> str:
    """A record's summary line in `lang` (the analysis's English line as it is in English)."""
    record = ev.Evidence(
        kind=kind, title="", spec_ids=[], verdict="info", summary=english, figures=f
    )
    return summary_of(record, lang)


def _print_queue(f: dict[str, Any], lang: str) -> None:
    out.print(_summary("queue", queue_summary_line(f), f, lang), markup=False)
    out.print(reconciliation_text(f["summary"]["reconciliation"], lang), markup=False)
    headers = [_("phase", lang), "n", "p50", "p90", "p99", _("max", lang), _("unmeasured", lang)]
    table = Table(*headers, box=None)
    for phase, q in f["phases"].items():
        cells = [
            "" if q[k] is None else _duration(q[k], lang) for k in ("p50", "p90", "p99", "max")
        ]
        name = phase if lang == "en" else _(PHASES.get(phase, phase), lang)
        n, unmeasured = (localize_digits(str(q[k]), lang) for k in ("n", "unmeasured"))
        table.add_row(name, n, *cells, unmeasured)
    out.print(table)
    if f["wait_reasons"]:
        out.print(_("wait reasons by total wait:", lang))
        for r in f["wait_reasons"][:8]:
            reason = str(r["reason"])
            if lang != "en" and reason == "(none given)":
                reason = _("(none given)", lang)
            text = _("{reason} ({category}, {n} jobs)", lang).format(
                reason=reason,
                category=_category(str(r["category"]), lang),
                n=localize_digits(str(r["jobs"]), lang),
            )
            out.print(f"  {_duration(r['total_wait_s'], lang):>8}  {text}", markup=False)
    for s in f["slo"]:
        for line in _slo_lines(s, lang):
            out.print(line, markup=False)
    for line in _queue_tail(f, lang):
        out.print(line, markup=False)


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
        lang = language(command.workspace())
        _print_replay(figures, lang)
        if written:
            print_written(written, lang)
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


def _print_replay(figures: dict[str, Any], lang: str) -> None:
    english = replay_summary_line(figures)
    out.print(_summary("replay", english, figures, lang), markup=False)
    table = Table(
        _("GPUs", lang),
        _("jobs", lang),
        "p50",
        "p95",
        "p99",
        _("max", lang),
        _("SLO viol.", lang),
        _("util.", lang),
        _("longest queue", lang),
        box=None,
    )
    for p in figures["pools"]:
        waits = [
            _duration(p[k] or 0.0, lang)
            for k in ("wait_p50_s", "wait_p95_s", "wait_p99_s", "wait_max_s")
        ]
        share = p["slo_violation_share"]
        table.add_row(
            str(p["gpus"]),
            localize_digits(str(p["jobs"]), lang),
            *waits,
            not_available(lang) if share is None else _pct(share, 1, lang),
            _pct(p["utilisation"] or 0, 0, lang),
            localize_digits(str(p["longest_queue"]), lang),
        )
    out.print(table)
    record = ev.Evidence(
        kind="replay",
        title="",
        spec_ids=[],
        verdict="info",
        summary=english,
        figures=figures,
        notes=list(figures["notes"]),
    )
    for note in notes_of(record, lang):
        out.print(_("note: {text}", lang).format(text=note), markup=False)


def register(app: typer.Typer) -> None:
    """Add `queue` and `replay` to the app."""
    app.command()(queue)
    app.command()(replay)
