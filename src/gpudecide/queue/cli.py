"""`gpudecide queue` (SPEC Q1-Q5) and `gpudecide replay` (C8, D3): options, one library
call (`gpudecide.queue.runs`), the lines people read or the JSON machines read.

The queue's library (DuckDB, Arrow, NumPy behind it) is imported inside the commands and
the printers that read its figures, so that registering the commands loads none of it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpudecide.console import JsonOpt, WorkspaceOpt, emit_json, guard, out, print_written
from gpudecide.fmt import digits, not_available, pct, pct0
from gpudecide.i18n import translator
from gpudecide.jobs.log_command import (
    EvidenceDirOpt,
    FormatOpt,
    LogCommand,
    LogsArg,
    MarksOpt,
    OptionOpt,
    SacctFormatOpt,
    SkipBadOpt,
    TzOpt,
)
from gpudecide.jobs.words import reconciliation_text
from gpudecide.message import is_message, render
from gpudecide.queue.words import (
    CATEGORIES,
    CAUSES,
    PHASES,
    VERDICTS,
    cannot_hold,
    duration,
    reason,
    word,
)

if TYPE_CHECKING:
    from gpudecide.queue import runs
    from gpudecide.queue.figures import QueueFigures, ReplayFigures, SloFigures

__all__ = ["queue", "register", "replay"]

_ = translator("queue")
_n = _.n

_SloOpt = Annotated[
    Path | None, typer.Option("--slo", help="slo.yaml with the normal and urgent SLOs (Q3).")
]


def queue(
    logs: LogsArg = None,
    slo_opt: _SloOpt = None,
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
    option: OptionOpt = None,
    marks: MarksOpt = None,
) -> None:
    """Queue: lifecycle phases, wait reasons, SLOs, preemption and chains (Q1-Q5)."""
    # One record per option the logs come from (logs[].option), one for the logs of no
    # option; --json prints one object, or {"records": [...]} when there are several.
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
    from gpudecide.queue import runs

    with guard(as_json):
        made = runs.queue_runs(command, slo_opt, chain_pattern, option, marks)
    if as_json and len(made) > 1:
        emit_json({"records": [_with_written(r.figures, r.written) for r in made]})
    else:
        for run in made:
            _present(run.figures, run.written, as_json, _queue_lines(run, len(made) > 1))
    if any(run.failed for run in made):
        raise typer.Exit(1)


def _queue_lines(run: runs.QueueRun, several: bool) -> Callable[[], None]:
    """The lines of one queue record, under a heading naming its option (or the team's
    workload) when it names one or stands beside others."""

    def lines() -> None:
        from gpudecide.queue.figures import queue_figures

        if run.option is not None:
            out.print(_("queue of option {option}:").format(option=run.option), markup=False)
        elif several:
            out.print(_("queue of the team's workload (logs of no option):"), markup=False)
        _print_queue(queue_figures(run.record))

    return lines


def _with_written(figures: dict[str, Any], written: Path | None) -> dict[str, Any]:
    return {**figures, "evidence": str(written) if written else None}


def _present(
    figures: dict[str, Any], written: Path | None, as_json: bool, lines: Callable[[], None]
) -> None:
    """The figures for machines (--json, English) or their lines for people, then where the
    record went."""
    if as_json:
        emit_json(_with_written(figures, written))
        return
    lines()
    if written:
        print_written(written)


def _slo_lines(s: SloFigures, kinds: list[str]) -> list[str]:
    """One SLO's verdict, for an inconclusive one what would settle it, and what its
    selector selects (Q3); `kinds`: the job kinds of the log."""
    from gpudecide.queue.slo import selector_findings, selector_text

    args = {
        "name": s.name,
        "verdict": word(VERDICTS, s.verdict),
        "violations": digits(str(s.violations)),
        "measured": digits(str(s.measured)),
        "threshold": digits(f"{s.threshold_minutes:g}"),
        "measure": s.measure,
        "share": pct(s.violation_share),
        "allowed": pct0(s.allowed_violation_share),
    }
    if s.ci95:
        line = _(
            "SLO {name}: {verdict}: {violations}/{measured} over {threshold} min {measure} = "
            "{share} (95% CI {lo}-{hi}), allowed {allowed}"
        ).format(**args, lo=pct(s.ci95[0]), hi=pct(s.ci95[1]))
    else:
        line = _(
            "SLO {name}: {verdict}: {violations}/{measured} over {threshold} min {measure} = "
            "{share}, allowed {allowed}"
        ).format(**args)
    lines = [line]
    if s.verdict == "inconclusive":
        more = s.more_jobs_to_settle
        point = word(VERDICTS, str(s.point_estimate))
        if more:
            text = _n(
                "the interval holds the allowed share: point estimate {point}; about {more} "
                "more jobs would settle it",
                "the interval holds the allowed share: point estimate {point}; about {more} "
                "more jobs would settle it",
                more,
            ).format(point=point, more=digits(str(more)))
        else:
            text = _(
                "the interval holds the allowed share: point estimate {point}; no sample settles it"
            ).format(point=point)
        lines.append("  " + text)
    if s.selector is not None:
        by_kind = ", ".join(f"{k} {digits(str(n))}" for k, n in (s.selected_by_kind or {}).items())
        lines.append(
            "  "
            + _n(
                "selector {selector}: {n} job selected ({kinds})",
                "selector {selector}: {n} jobs selected ({kinds})",
                s.selected,
            ).format(
                selector=selector_text(s.selector), n=digits(str(s.selected)), kinds=by_kind or "-"
            )
        )
        lines += [f"    - {render(m)}" for m in selector_findings(s, kinds)]
    if s.violations:
        causes = s.violations_by_cause.model_dump()
        named = ", ".join(
            f"{digits(str(n))} {word(CAUSES, cause)}" for cause, n in causes.items() if n
        )
        lines.append("  " + _("violations by cause: {causes}").format(causes=named))
    return lines


def _skipped_lines(f: QueueFigures) -> list[str]:
    """The malformed rows skipped (--skip-bad-rows), ten at most: where, the log's own column
    name and why."""
    if not f.skipped_rows:
        return []
    lines = [_("{n} malformed row(s) skipped:").format(n=digits(str(f.skipped_rows)))]
    for b in f.skipped[:10]:
        why = render(b.message) if is_message(b.message) else b.reason
        where = f"{b.path}:{b.line}"
        if b.field:
            # A translation may mark the column as a name (`State`): it is the log's word.
            text = _("{where}: {column} {reason}").format(where=where, column=b.field, reason=why)
        else:
            text = _("{where}: {reason}").format(where=where, reason=why)
        lines.append(f"  {text}")
    return lines


def _marks_lines(f: QueueFigures) -> list[str]:
    """How the lifecycle marks were joined (their summary and notes), the first ten marks
    or files that could not be used, each named file:line, and what is still unmeasured per
    job kind (Q1)."""
    from gpudecide.queue.analysis import unmeasured_notes_of

    lines: list[str] = []
    note = _("note: {text}")
    if f.marks is not None:
        said = [f.marks.summary_message(), *f.marks.note_messages()]
        lines += [note.format(text=render(m)) for m in said]
        for problem in f.marks.problems[:10]:
            text = _("{where}: {reason}").format(
                where=str(problem.where), reason=render(problem.message)
            )
            lines.append(f"  {text}")
    lines += [note.format(text=render(m)) for m in unmeasured_notes_of(f)]
    return lines


def _queue_tail(f: QueueFigures) -> list[str]:
    """Preemption, findings, skipped rows, notes and chains, one line each (Q4, Q5)."""
    from gpudecide.queue import preemption, restarts
    from gpudecide.queue.analysis import source_notes_of

    p = f.preemption
    lines = [
        _(
            "preemption: {stops} stop(s); {minutes} GPU-minutes lost since measured checkpoints"
        ).format(
            stops=digits(str(p.stops)),
            minutes=digits(str(p.gpu_minutes_lost_since_checkpoint)),
        )
    ]
    finding = "  " + _("finding: {text}")
    zero = [e for e in f.restarts_from_zero.restarts if e.verdict == "restarted_from_zero"]
    found = [*preemption.findings_of(p), *(restarts.finding_of(e) for e in zero)]
    lines += [finding.format(text=render(m)) for m in found]
    lines += _skipped_lines(f)
    lines += _marks_lines(f)
    note = _("note: {text}")
    lines += [note.format(text=render(m)) for m in source_notes_of(f)]
    for c in f.chains:
        seconds = c.end_to_end_s
        lines.append(
            _("chain {chain}: {jobs} jobs, {e2e} to {last}; longest wait in {stage}").format(
                chain=c.chain,
                jobs=digits(str(c.jobs)),
                e2e=_("unfinished") if seconds is None else duration(seconds),
                last=c.last_stage,
                stage=c.longest_waiting_stage,
            )
        )
    return lines


def _print_queue(f: QueueFigures) -> None:
    if f.messages:
        out.print(render(f.messages.summary), markup=False)
    out.print(reconciliation_text(f.summary.reconciliation), markup=False)
    headers = [_("phase"), "n", "p50", "p90", "p99", _("max"), _("unmeasured")]
    from rich.table import Table

    table = Table(*headers, box=None)
    for phase, q in f.phases.items():
        cells = ["" if v is None else duration(v) for v in (q.p50, q.p90, q.p99, q.max)]
        table.add_row(word(PHASES, phase), digits(str(q.n)), *cells, digits(str(q.unmeasured)))
    out.print(table)
    if f.wait_reasons:
        out.print(_("wait reasons by total wait:"))
        for r in f.wait_reasons[:8]:
            text = _("{reason} ({category}, {n} jobs)").format(
                reason=reason(r.reason),
                category=word(CATEGORIES, r.category),
                n=digits(str(r.jobs)),
            )
            out.print(f"  {duration(r.total_wait_s):>8}  {text}", markup=False)
    for s in f.slo:
        for line in _slo_lines(s, list(f.phases_by_kind)):
            out.print(line, markup=False)
    for line in _queue_tail(f):
        out.print(line, markup=False)


def replay(
    logs: LogsArg = None,
    gpus: Annotated[
        str | None, typer.Option(help="Pool sizes, e.g. 8,16,32, or auto (needs an SLO).")
    ] = None,
    slo_opt: _SloOpt = None,
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
    option: OptionOpt = None,
    marks: MarksOpt = None,
) -> None:
    """Replay the log through a dedicated pool of N GPUs: waits, SLO, utilisation (C8, D3)."""
    # Every log is replayed together (a dedicated pool would hold all of the work); the
    # record names the option they come from when they all come from one.
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
    from gpudecide.queue import runs
    from gpudecide.queue.figures import replay_figures

    with guard(as_json):
        run = runs.replay_run(
            command,
            gpus=gpus,
            slo=slo_opt,
            slo_name=slo_name,
            policy=policy,
            window=window,
            checkpoint_minutes=checkpoint_minutes,
            option=option,
            marks=marks,
        )
    _present(run.figures, run.written, as_json, lambda: _print_replay(replay_figures(run.record)))
    if run.failed:
        raise typer.Exit(1)


def _print_replay(f: ReplayFigures) -> None:
    if f.messages:
        out.print(render(f.messages.summary), markup=False)
    from rich.table import Table

    table = Table(
        _("GPUs"),
        _("jobs"),
        "p50",
        "p95",
        "p99",
        _("max"),
        _("cannot hold"),
        _("SLO viol."),
        _("occupied util."),
        _("longest queue"),
        box=None,
    )
    for p in f.pools:
        waits = [
            duration(w or 0.0) for w in (p.wait_p50_s, p.wait_p95_s, p.wait_p99_s, p.wait_max_s)
        ]
        share = p.slo_violation_share
        table.add_row(
            str(p.gpus),
            digits(str(p.jobs)),
            *waits,
            cannot_hold(
                p.jobs_unplaceable,
                None if p.unplaceable is None else [(u.gpus, u.jobs) for u in p.unplaceable],
            ),
            not_available() if share is None else pct(share),
            not_available() if p.utilisation is None else pct0(p.utilisation),
            digits(str(p.longest_queue)),
        )
    out.print(table)
    note = _("note: {text}")
    for msg in f.messages.notes if f.messages else []:
        out.print(note.format(text=render(msg)), markup=False)


def register(app: typer.Typer) -> None:
    """Add `queue` and `replay` to the app."""
    app.command()(queue)
    app.command()(replay)
