"""`gpudecide profile` and `columns`: options, one library call, one printout.

The options every log command shares and its prologue live in `jobs.log_command`
(re-exported here for the commands of other packages); the profile run in
`jobs.profile_run`, imported by the command when it runs (it loads DuckDB, Arrow and
NumPy); what the lines say in `jobs.words`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpudecide import fmt
from gpudecide.console import (
    JsonOpt,
    WorkspaceOpt,
    emit_json,
    guard,
    language,
    open_workspace,
    out,
    print_written,
)
from gpudecide.errors import InputError
from gpudecide.fmt import moment
from gpudecide.i18n import translator
from gpudecide.jobs.columns import CANONICAL_COLUMNS, COLUMN_DOCS, KINDS, STATES
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
from gpudecide.jobs.words import (
    figure,
    meaning_text,
    reconciliation_text,
    shape_word,
    skipped_lines,
    utilisation_name,
    verdict_word,
    wape_text,
)
from gpudecide.message import render

if TYPE_CHECKING:
    from gpudecide.jobs import profile as prof
    from gpudecide.jobs.profile_figures import ProfileFigures
    from gpudecide.jobs.profile_run import ProfileRun

__all__ = ["columns", "profile", "register"]

_ = translator("jobs")
_n = _.n


def _profile_lines(f: ProfileFigures) -> list[str]:
    """The profile's figures after its table, one sentence each (F1-F3, C2)."""
    burst, conc, pred = f.burstiness, f.concentration, f.predictability
    sources = ", ".join(
        _("{n} from {source}").format(n=figure(n), source=src)
        for src, n in f.gpu_count_sources.items()
    )
    w, d = f.window, f.duration_hours
    lines = [
        reconciliation_text(f.reconciliation),
        _("GPU counts of started attempts: {sources}").format(sources=sources or _("none")),
        _(
            "window {start} .. {end} ({weeks} weeks); attempts {attempts}, restarts {restarts}, "
            "never started {never}, unsuccessful {unsuccessful}"
        ).format(
            start=moment(w.start),
            end=moment(w.end),
            weeks=figure(w.weeks),
            attempts=figure(f.attempts_total),
            restarts=figure(f.restarts),
            never=figure(f.never_started),
            unsuccessful=figure(f.unsuccessful_share),
        ),
        _(
            "peak concurrent GPUs {peak}; jobs/week {per_week}; duration p50 {p50} h, p90 {p90} h"
        ).format(
            peak=figure(f.peak_concurrent_gpus),
            per_week=figure(f.jobs_per_week_mean),
            p50=figure(d.p50),
            p90=figure(d.p90),
        ),
        _(
            "shape: {shape} (weekly GPU-hours CV {cv}, bursty at >= {cv_min}; {busiest} GPUs "
            "in use in the busiest {share} of the window, {ratio} times the mean of {mean}, "
            "bursty at >= {ratio_min})"
        ).format(
            shape=shape_word(burst.shape),
            cv=figure(burst.weekly_gpu_hours_cv),
            cv_min=figure(burst.thresholds.bursty_cv_min),
            busiest=figure(burst.busiest_gpus_in_use),
            share=fmt.pct0(burst.busiest_share),
            ratio=figure(burst.busiest_to_mean),
            mean=figure(burst.mean_gpus_in_use),
            ratio_min=figure(burst.thresholds.bursty_busiest_to_mean_min),
        ),
        _(
            "concentration: the largest {top} of jobs hold {share} of GPU-hours, the largest "
            "job {largest} (how the work is spread over jobs, not a burst)"
        ).format(
            top=fmt.pct0(conc.top_jobs_fraction),
            share=fmt.pct(conc.top_jobs_gpu_hours_share),
            largest=fmt.pct(conc.largest_job_gpu_hours_share),
        ),
        _(
            "predictability: {verdict} (WAPE {wape}; predictable <= {max}, partly <= {partly}): "
            "{meaning}; lead-time share {lead}"
        ).format(
            verdict=verdict_word(pred.verdict),
            wape=figure(pred.wape),
            max=figure(pred.thresholds.predictable_wape_max),
            partly=figure(pred.thresholds.partly_predictable_wape_max),
            meaning=meaning_text(pred),
            lead=figure(pred.lead_time_share),
        ),
        "  " + wape_text(),
    ]
    if f.pool_gpus and f.available_gpu_hours is not None:
        weeks = f.window.weeks
        # the pool's GPU-hours around the clock: whole hours (GPUs x weeks x 168)
        available = round(f.available_gpu_hours)
        lines += [
            _n(
                "{name}: {share} (completed attempts, of {hours} GPU-hour around the clock)",
                "{name}: {share} (completed attempts, of {hours} GPU-hours around the clock)",
                available,
            ).format(
                name=utilisation_name("useful", f.pool_gpus, weeks),
                share=fmt.pct(f.busy_share),
                hours=fmt.fmt(available),
            ),
            _("{name}: {share} (every attempt, lost ones included)").format(
                name=utilisation_name("occupied", f.pool_gpus, weeks),
                share=fmt.pct(f.occupied_share),
            ),
        ]
    return lines


def _print_profile(result: prof.ProfileResult) -> None:
    """The profile for people: its summary, the kinds, one line per figure, then the rows
    skipped and the notes, in the reader's language."""
    f = result.model
    out.print(render(f.messages.summary))
    from rich.table import Table

    table = Table(_("kind"), _("jobs"), _("GPU-hours"), box=None)
    for k, n in f.jobs_by_kind.items():
        table.add_row(k, figure(n), fmt.digits(f"{f.gpu_hours_by_kind[k]:.1f}"))
    out.print(table)
    for line in _profile_lines(f):
        out.print(line, markup=False)
    # the shape profile and queue records share (words.skipped_lines reads both)
    for i, line in enumerate(skipped_lines(result.figures)):
        out.print(line, style="yellow" if i == 0 else None, markup=False)
    note = _("note: {text}")
    for msg in result.notes:  # the skipped rows are printed on their own above
        out.print(note.format(text=render(msg)), markup=False)


def _body(run: ProfileRun) -> dict[str, Any]:
    """One record's figures for machines, with where it went."""
    return {**run.result.figures, "evidence": str(run.written) if run.written else None}


def _emit(runs: list[ProfileRun], as_json: bool) -> None:
    """The runs as JSON (one object, or {"records": [...]} when there are several: the
    team's workload first, then each option), or for people, each under a heading naming
    its option (or the team's workload) when it names one or stands beside others."""
    if as_json:
        emit_json(_body(runs[0]) if len(runs) == 1 else {"records": [_body(r) for r in runs]})
        return
    for run in runs:
        if run.option is not None:
            out.print(_("profile of option {option}:").format(option=run.option), markup=False)
        elif len(runs) > 1:
            out.print(_("profile of the team's workload (every log):"), markup=False)
        _print_profile(run.result)
        if run.written:
            print_written(run.written)


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
    option: OptionOpt = None,
    marks: MarksOpt = None,
) -> None:
    """Profile the workload: all related jobs, shape, predictability, busy share (F1-F3)."""
    from gpudecide.jobs.profile_run import profile_logs

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
    # One record per option the logs come from (logs[].option, --option), one for the team's
    # workload (every log).
    with guard(as_json):
        runs = profile_logs(
            command, weeks=weeks, pool_gpus=pool_gpus, until=until, option=option, marks=marks
        )
    _emit(runs, as_json)


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
    from rich.table import Table

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
