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

import gpudecide.jobs.report  # noqa: F401  (registers the profile's summary in ru and kk)
from gpudecide import evidence as ev
from gpudecide import workspace
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
from gpudecide.i18n import translator
from gpudecide.jobs import bounds
from gpudecide.jobs import profile as prof
from gpudecide.jobs.figures import reconciliation_line
from gpudecide.jobs.load import FORMATS, JobLog, LogSpec, load_logs
from gpudecide.jobs.schema import CANONICAL_COLUMNS, KINDS, STATES
from gpudecide.report.fmt import localize_digits, not_available
from gpudecide.report.i18n import P_, localize, moment, notes_of, summary_of

_ = translator("jobs")


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


# Why the loaders skipped a row (--skip-bad-rows), as they write it in English; translated
# for ru and kk by pattern (`gpudecide.report.i18n.localize`).
SKIP_REASONS = (
    P_("fewer fields than the {n} in the header"),
    P_("fewer fields than the {n} of --sacct-format"),
    P_("more fields than the {n} in the header (a '|' inside a job name or comment?)"),
    P_("more fields than the {n} of --sacct-format (a '|' inside a job name or comment?)"),
    P_("not UTF-8 text"),
    P_("not a JSON object"),
    P_("column given twice in one object"),
    P_("CSV syntax: {error}"),
    P_("job id {value} is not a Slurm job id (123, 123_4, 123_[5-9], 123.batch)"),
    P_("end {value} is before start"),
    P_("end {value} is more than {days} days after start"),
    P_("duration {value} is not [DD-[HH:]]MM:SS"),
    P_("time limit {value} is not a Slurm duration"),
    P_("priority {value} is not an integer"),
    P_("kind label in {value} is not one of {kinds}"),
    P_("value {value} is not what sacct prints here"),
)


def _n(value: Any, lang: str) -> str:
    """A figure as the analysis wrote it (English), or with `lang`'s number signs."""
    if value is None and lang != "en":
        return not_available(lang)
    return localize_digits(str(value), lang)


def reconciliation_text(r: dict[str, int], lang: str) -> str:
    """Every job of the log in one sentence (F1, Q1), in `lang` (`profile` and `queue`)."""
    if lang == "en":
        return reconciliation_line(r)
    return _(
        "{total} jobs in the log: {gpu} GPU jobs, {cpu} CPU-only, {unknown} without GPU "
        "information, {never} never started, {pending} pending (array tasks counted one by one)",
        lang,
    ).format(
        total=_n(r["total"], lang),
        gpu=_n(r["gpu_jobs"], lang),
        cpu=_n(r["cpu_only"], lang),
        unknown=_n(r["no_gpu_information"], lang),
        never=_n(r["never_started"], lang),
        pending=_n(r["pending"], lang),
    )


def skipped_lines(f: dict[str, Any], lang: str) -> list[str]:
    """The malformed rows a log command skipped (--skip-bad-rows), ten at most."""
    if not f["skipped_rows"]:
        return []
    lines = [_("{n} malformed row(s) skipped:", lang).format(n=_n(f["skipped_rows"], lang))]
    for b in f["skipped"][:10]:
        if lang == "en":
            lines.append(f"  {b['path']}:{b['line']}: {b['field'] or ''} {b['reason']}")
            continue
        # The log's own column name stands out as what it is (a name, not a word).
        column = f"`{b['field']}`" if b["field"] else ""
        reason = localize(b["reason"], lang, ("jobs", "report"))
        lines.append(f"  {b['path']}:{b['line']}: {column} {reason}")
    return lines


def _word(text: str, lang: str) -> str:
    """A verdict or shape the profile wrote in English, in `lang` (English: as written)."""
    return text if lang == "en" else localize(text, lang, ("jobs", "report"))


def _profile_lines(f: dict[str, Any], lang: str) -> list[str]:
    """The profile's figures after its table, one sentence each (F1-F3, C2)."""
    burst, pred = f["burstiness"], f["predictability"]
    sources = ", ".join(
        _("{n} from {source}", lang).format(n=_n(n, lang), source=src)
        for src, n in f["gpu_count_sources"].items()
    )
    w, d = f["window"], f["duration_hours"]
    lines = [
        reconciliation_text(f["reconciliation"], lang),
        _("GPU counts of started attempts: {sources}", lang).format(
            sources=sources or _("none", lang)
        ),
        _(
            "window {start} .. {end} ({weeks} weeks); attempts {attempts}, restarts {restarts}, "
            "never started {never}, unsuccessful {unsuccessful}",
            lang,
        ).format(
            start=moment(w["start"], lang),
            end=moment(w["end"], lang),
            weeks=_n(w["weeks"], lang),
            attempts=_n(f["attempts_total"], lang),
            restarts=_n(f["restarts"], lang),
            never=_n(f["never_started"], lang),
            unsuccessful=_n(f["unsuccessful_share"], lang),
        ),
        _(
            "peak concurrent GPUs {peak}; jobs/week {per_week}; duration p50 {p50} h, p90 {p90} h",
            lang,
        ).format(
            peak=_n(f["peak_concurrent_gpus"], lang),
            per_week=_n(f["jobs_per_week_mean"], lang),
            p50=_n(d["p50"], lang),
            p90=_n(d["p90"], lang),
        ),
        _(
            "shape: {shape} (weekly GPU-hours CV {cv}, bursty at >= {cv_min}; top {top} of jobs "
            "hold {share} of GPU-hours, bursty at >= {share_min})",
            lang,
        ).format(
            shape=_word(burst["shape"], lang),
            cv=_n(burst["weekly_gpu_hours_cv"], lang),
            cv_min=_n(burst["thresholds"]["bursty_cv_min"], lang),
            top=localize_digits(f"{burst['top_jobs_fraction']:.0%}", lang),
            share=_n(burst["top_jobs_gpu_hours_share"], lang),
            share_min=_n(burst["thresholds"]["bursty_top_share_min"], lang),
        ),
        _(
            "predictability: {verdict} (WAPE {wape}; predictable <= {max}, partly <= {partly}): "
            "{meaning}; lead-time share {lead}",
            lang,
        ).format(
            verdict=_word(pred["verdict"], lang),
            wape=_n(pred["wape"], lang),
            max=_n(pred["thresholds"]["predictable_wape_max"], lang),
            partly=_n(pred["thresholds"]["partly_predictable_wape_max"], lang),
            meaning=_word(pred["meaning"], lang),
            lead=_n(pred["lead_time_share"], lang),
        ),
    ]
    if f["pool_gpus"]:
        lines.append(
            _(
                "busy share of a {gpus}-GPU pool: {useful} useful, {occupied} occupied "
                "(of {hours} GPU-hours)",
                lang,
            ).format(
                gpus=f["pool_gpus"],
                useful=_n(f["busy_share"], lang),
                occupied=_n(f["occupied_share"], lang),
                hours=_n(f["available_gpu_hours"], lang),
            )
        )
    return lines


def _print_profile(result: prof.ProfileResult, lang: str) -> None:
    f = result.figures
    record = prof.to_evidence(result, [])
    record.notes = list(f["notes"])  # the skipped rows are printed on their own
    out.print(summary_of(record, lang))
    table = Table(_("kind", lang), _("jobs", lang), _("GPU-hours", lang), box=None)
    for k, n in f["jobs_by_kind"].items():
        table.add_row(k, _n(n, lang), localize_digits(f"{f['gpu_hours_by_kind'][k]:.1f}", lang))
    out.print(table)
    for line in _profile_lines(f, lang):
        out.print(line, markup=False)
    for i, line in enumerate(skipped_lines(f, lang)):
        out.print(line, style="yellow" if i == 0 else None, markup=False)
    for note in notes_of(record, lang):
        out.print(_("note: {text}", lang).format(text=note), markup=False)


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
        lang = language(command.workspace())
    if as_json:
        body = dict(result.figures)
        body["evidence"] = str(written) if written else None
        emit_json(body)
        return
    _print_profile(result, lang)
    if written:
        print_written(written, lang)


def _column_doc(name: str, doc: str, lang: str) -> str:
    """What a canonical column holds, in `lang`; listed values stay as written, in backticks."""
    if lang == "en":
        return doc
    if name == "kind":
        kinds = ", ".join(f"`{k}`" for k in KINDS)
        return _("explicit kind, wins over rules: {kinds}.", lang).format(kinds=kinds)
    if name == "state":
        states = ", ".join(f"`{s}`" for s in STATES)
        return _("required. One of {states} (Slurm state words are accepted too).", lang).format(
            states=states
        )
    # The other descriptions are fixed English sentences of jobs/schema.py, each a msgid.
    return _(doc, lang)


def columns(as_json: JsonOpt = False) -> None:
    """List the canonical job-log columns (for CSV and JSONL logs)."""
    if as_json:
        emit_json(CANONICAL_COLUMNS)
        return
    lang = _columns_language()
    table = Table(_("column", lang), _("meaning", lang), box=None)
    for name, doc in CANONICAL_COLUMNS.items():
        # Outside English the column names stand out as what they are: names to type as is.
        shown = name if lang == "en" else f"`{name}`"
        table.add_row(shown, _column_doc(name, doc, lang))
    out.print(table)


def _columns_language() -> str:
    """`--lang`, $GPUDECIDE_LANG, else the language of the workspace found from here up
    (none needed, and a broken one is no reason to refuse a list of columns: English)."""
    try:
        return language(open_workspace(None, required=False))
    except (InputError, OSError):
        return language(None)


def register(app: typer.Typer) -> None:
    """Add `profile` and `columns` to the app."""
    app.command()(profile)
    app.command()(columns)
