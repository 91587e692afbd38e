"""Commands `hash`, `manifest` (create / lint / verify / provenance) and `audit`.

Each command is options -> one library call (`artifacts.runs`) -> one presenter: lines for
people in the run's language, or one JSON object with `--json`, and the exit code (1: a
difference, a lint error or a stop factor; 2: bad input). `register(app)` adds them to the
main typer app; the shared console helpers come from `gpudecide.console`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpudecide import fmt
from gpudecide.artifacts.words import (
    BASES,
    ITEMS,
    LAYERS,
    SEVERITIES,
    STATUSES,
    rule_label,
    word,
)
from gpudecide.console import (
    JsonOpt,
    WorkspaceOpt,
    emit_json,
    err,
    guard,
    language,
    open_workspace,
    out,
    print_written,
)
from gpudecide.errors import InputError
from gpudecide.i18n import translator
from gpudecide.message import render
from gpudecide.report.i18n import notes_of, summary_of

if TYPE_CHECKING:
    from gpudecide.artifacts.audit import AuditResult
    from gpudecide.artifacts.figures import (
        AuditFigures,
        EgressWindow,
        Hazard,
        Question,
        UnitFigures,
    )
    from gpudecide.artifacts.hashing import Skipped, SumsCheck
    from gpudecide.artifacts.runs import AuditRun, HashRun, LintRun, ManifestRun, ProvenanceRun

__all__ = [
    "RetentionOpt",
    "WorkersOpt",
    "audit_cmd",
    "hash_cmd",
    "manifest_create",
    "manifest_lint",
    "manifest_provenance",
    "manifest_verify",
    "register",
]

WorkersOpt = Annotated[
    int | None, typer.Option(min=1, help="Hashing threads (default: one per core).")
]
RetentionOpt = Annotated[
    Path | None,
    typer.Option(help="retention.yaml (default: the workspace's, if any)."),
]

_ = translator("artifacts")
_n = _.n


def _figure(value: Any) -> str:
    """A figure as the audit wrote it, with the reader's number signs; n/a when absent."""
    return fmt.not_available() if value is None else fmt.digits(str(value))


def _speak_workspace_language(workspace_dir: Path | None = None) -> None:
    """Speak the language of the command's output: --lang, $GPUDECIDE_LANG, else the
    workspace's (a broken or absent workspace is no reason to refuse a file command:
    English then)."""
    try:
        open_workspace(workspace_dir, required=False)
    except (InputError, OSError):
        language(None)


def _workspace_root(workspace_dir: Path | None) -> Path | None:
    ws = open_workspace(workspace_dir, required=False)
    return ws.root if ws is not None else None


@contextmanager
def _bytes_progress(
    enabled: bool, label: str
) -> Iterator[tuple[Callable[[int], None] | None, Callable[[int, int], None] | None]]:
    """A byte progress bar on stderr (`label`: what it counts, said), only when stderr is a
    terminal."""
    if not enabled or not err.is_terminal:
        yield None, None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def on_bytes(n: int) -> None:
            bar.advance(task, n)

        def on_total(files: int, total: int) -> None:
            counted = _n("{label} ({n} file)", "{label} ({n} files)", files)
            bar.update(task, total=total, description=counted.format(label=label, n=files))

        yield on_bytes, on_total


def register(app: typer.Typer) -> None:
    """Add `hash`, `manifest` and `audit` to the main app."""
    manifest_app = typer.Typer(
        help="Run manifest next to the weights: create, lint, verify, provenance (SPEC A5, A6).",
        no_args_is_help=True,
    )
    app.command("hash")(hash_cmd)
    manifest_app.command("create")(manifest_create)
    manifest_app.command("lint")(manifest_lint)
    manifest_app.command("verify")(manifest_verify)
    manifest_app.command("provenance")(manifest_provenance)
    app.add_typer(manifest_app, name="manifest")
    app.command("audit")(audit_cmd)


# ---- hash ---------------------------------------------------------------------------------


def hash_cmd(
    path: Annotated[Path, typer.Argument(help="A file, or a folder to hash every file of.")],
    verify: Annotated[
        Path | None,
        typer.Option("--verify", help="Check against a sha256sum file (exit 1 on any difference)."),
    ] = None,
    out_format: Annotated[
        str, typer.Option("--format", help="sha256sum | model-signing (OpenSSF payload, JSON).")
    ] = "sha256sum",
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Write the output to this file (atomically).")
    ] = None,
    workers: WorkersOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """SHA-256 of every file, streamed, in parallel; links are listed, never followed."""
    from gpudecide.artifacts import runs

    req = runs.HashRequest(path, verify, out_format, out_file, workers, as_json)
    with guard(as_json), _bytes_progress(not as_json, _("hashing")) as (on_bytes, on_total):
        hashed = runs.hash_run(req, on_bytes, on_total)
    _emit_hash(hashed, as_json)


def _print_check(check: SumsCheck, *, extra: str) -> None:
    """One line per file that does not match, in `sha256sum -c` style (`extra`: the word
    for a file the list does not name)."""
    for m in check.mismatched:
        out.print(_("{path}: FAILED").format(path=m["path"]), markup=False)
    for p in check.missing:
        out.print(_("{path}: MISSING").format(path=p), markup=False)
    for p in check.extra:
        out.print(f"{p}: {extra}", markup=False)
    for r in check.refused:
        why = check.refusals.get(r["path"])
        reason = render(why) if why is not None else r["reason"]
        out.print(_("{path}: REFUSED ({reason})").format(path=r["path"], reason=reason))


def _print_skipped(skipped: list[Skipped]) -> None:
    """Each path left out of the hashes, and why (on stderr: stdout may be the sums)."""
    for s in skipped:
        text = _("skipped: {path}: {reason}").format(path=s.path, reason=render(s.why))
        err.print(text, markup=False)


def _emit_hash(hashed: HashRun, as_json: bool) -> None:
    """The check's lines (exit 1 on any difference), or the sums and where they went."""
    check = hashed.check
    if not as_json:
        _speak_workspace_language()
    if check is not None:
        if as_json:
            emit_json(hashed.as_json())
        else:
            _print_check(check, extra=_("NOT LISTED"))
            out.print(
                _(
                    "{ok} OK, {failed} failed, {missing} missing, {extra} not listed, "
                    "{refused} refused"
                ).format(
                    ok=check.matched,
                    failed=len(check.mismatched),
                    missing=len(check.missing),
                    extra=len(check.extra),
                    refused=len(check.refused),
                )
            )
        if not check.ok:
            raise typer.Exit(1)
        return
    if hashed.written is None:
        print(hashed.text, end="")
    elif as_json:
        emit_json(hashed.as_json())
    else:
        n = len(hashed.tree.files)
        line = _n("{n} file, {bytes} bytes -> {path}", "{n} files, {bytes} bytes -> {path}", n)
        size = fmt.fmt(hashed.tree.total_bytes)
        out.print(line.format(n=n, bytes=size, path=hashed.written), markup=False)
    if not as_json:
        _print_skipped(hashed.tree.skipped)


# ---- manifest -----------------------------------------------------------------------------


def manifest_create(
    directory: Annotated[Path, typer.Argument(help="The run's folder (weights, checkpoints).")],
    from_file: Annotated[
        Path | None,
        typer.Option(
            "--from", help="run.yaml with the A5 fields and the E2 facts a folder cannot tell."
        ),
    ] = None,
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Where to write (default: DIR/run-manifest.json).")
    ] = None,
    force: Annotated[bool, typer.Option(help="Replace an existing manifest.")] = False,
    workers: WorkersOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Hash the folder, detect formats and write the run manifest (A5, E2)."""
    from gpudecide.artifacts import runs

    with guard(as_json), _bytes_progress(not as_json, _("hashing")) as (on_bytes, _total):
        created = runs.create_run(
            directory, from_file, out_file, force=force, workers=workers, on_bytes=on_bytes
        )
    _emit_manifest(created, as_json)


def _emit_manifest(created: ManifestRun, as_json: bool) -> None:
    """Where the manifest went, what it says of the run, and the next command."""
    if as_json:
        emit_json(created.as_json())
        return
    _speak_workspace_language()
    manifest = created.manifest
    n = len(manifest.files)
    line = _n(
        "manifest: {path} ({n} file, {bytes} bytes; format {format}, precision {precision}, "
        "optimizer state {exported})",
        "manifest: {path} ({n} files, {bytes} bytes; format {format}, precision {precision}, "
        "optimizer state {exported})",
        n,
    )
    out.print(
        line.format(
            path=created.target,
            n=n,
            bytes=fmt.fmt(created.tree.total_bytes),
            format=manifest.checkpoint_format,
            precision=manifest.precision,
            exported=_("yes") if manifest.optimizer_state_exported else _("no"),
        ),
        markup=False,
    )
    _print_skipped(created.tree.skipped)
    command = f"gpudecide manifest lint {created.target}"
    out.print(_("next: {command}").format(command=command))


def manifest_lint(
    manifest_path: Annotated[Path, typer.Argument(metavar="MANIFEST", help="The run manifest.")],
    retention: RetentionOpt = None,
    workspace_dir: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Immutable identifiers only (A6); exit 1 when a field is an error."""
    from gpudecide.artifacts import runs

    with guard(as_json):
        linted = runs.lint_run(manifest_path, retention, _workspace_root(workspace_dir))
    _emit_lint(linted, as_json, workspace_dir)


def _emit_lint(linted: LintRun, as_json: bool, workspace_dir: Path | None) -> None:
    """Each finding with its line, severity and rule, then the counts (exit 1 on an error)."""
    if as_json:
        emit_json(linted.as_json())
    else:
        _speak_workspace_language(workspace_dir)
        path = linted.manifest_path
        for f in linted.findings:
            where = f"{path}:{f.line}" if f.line else str(path)
            severity = word(SEVERITIES, f.severity)
            out.print(
                f"{where}: {severity}: {f.field}: {render(f.why)} [{rule_label(f.rule)}]",
                markup=False,
            )
        n_errors = len(linted.errors)
        n_warnings = len(linted.findings) - n_errors
        said_errors = _n("{n} error", "{n} errors", n_errors).format(n=n_errors)
        said_warnings = _n("{n} warning", "{n} warnings", n_warnings).format(n=n_warnings)
        out.print(f"{said_errors}, {said_warnings}")
    if linted.errors:
        raise typer.Exit(1)


def manifest_verify(
    directory: Annotated[Path, typer.Argument(help="The run's folder.")],
    manifest_path: Annotated[Path, typer.Argument(metavar="MANIFEST", help="The run manifest.")],
    workers: WorkersOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Every hash matches, nothing is missing, nothing is extra (exit 1 otherwise)."""
    from gpudecide.artifacts import runs

    label = _("verifying")
    with guard(as_json), _bytes_progress(not as_json, label) as (on_bytes, _total):
        check = runs.verify_run(directory, manifest_path, workers=workers, on_bytes=on_bytes)
    _emit_verify(check, directory, manifest_path, as_json)


def _emit_verify(check: SumsCheck, directory: Path, manifest_path: Path, as_json: bool) -> None:
    """The files that differ and the verdict (exit 1 unless everything matches)."""
    if as_json:
        emit_json({"directory": str(directory), "manifest": str(manifest_path), **check.as_dict()})
    else:
        _speak_workspace_language()
        _print_check(check, extra=_("EXTRA"))
        verdict = _("verified") if check.ok else _("DOES NOT MATCH")
        line = _n(
            "{verdict}: {n} file matches {path}", "{verdict}: {n} files match {path}", check.matched
        )
        out.print(line.format(verdict=verdict, n=check.matched, path=manifest_path), markup=False)
    if not check.ok:
        raise typer.Exit(1)


def manifest_provenance(
    manifest_path: Annotated[Path, typer.Argument(metavar="MANIFEST", help="The run manifest.")],
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Write the statement to this file (atomically).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The manifest as an in-toto Statement v1 with a SLSA provenance v1 predicate (unsigned)."""
    from gpudecide.artifacts import runs

    with guard(as_json):
        stated = runs.provenance_run(manifest_path, out_file)
    _emit_provenance(stated, as_json)


def _emit_provenance(stated: ProvenanceRun, as_json: bool) -> None:
    """The statement itself on stdout, or where it was written."""
    if stated.written is None:
        print(stated.text, end="")
    elif as_json:
        emit_json(stated.as_json())
    else:
        _speak_workspace_language()
        n = len(stated.statement["subject"])
        line = _n("statement: {path} ({n} subject)", "statement: {path} ({n} subjects)", n)
        out.print(line.format(path=stated.written, n=n), markup=False)


# ---- audit --------------------------------------------------------------------------------


def _audit_lines(f: AuditFigures) -> list[str]:
    """Checkpoints, hazards, egress and open A8 questions, one line each (A2, E5, A8)."""
    return _lines(f.units, f.hazards, f.egress, f.retention.questions)


def _lines(
    units: Sequence[UnitFigures],
    hazards: Sequence[Hazard],
    egress: EgressWindow | None,
    questions: Sequence[Question],
) -> list[str]:
    from gpudecide.artifacts.report import hazard_detail, question_text

    lines = []
    for u in units:
        resumable = _("resumable") if u.resumable else _("not resumable")
        step = "" if u.step is None else _(", step {step}").format(step=u.step)
        lines.append(
            _("unit {path} ({kind}): {resumable}{step}").format(
                path=u.path, kind=u.kind, resumable=resumable, step=step
            )
        )
    for h in hazards:
        lines.append(
            _("HAZARD {id}: {path}: {detail}").format(id=h.id, path=h.path, detail=hazard_detail(h))
        )
    if egress is not None:
        line = _n(
            "egress: {speed} MB/s over {bytes} byte; moving {run_bytes} bytes ({basis}) "
            "takes {hours} h",
            "egress: {speed} MB/s over {bytes} bytes; moving {run_bytes} bytes ({basis}) "
            "takes {hours} h",
            egress.bytes,
        )
        lines.append(
            line.format(
                speed=_figure(egress.throughput_mb_s),
                bytes=fmt.fmt(egress.bytes),
                run_bytes=fmt.fmt(egress.run_bytes),
                basis=word(BASES, egress.extrapolated_from),
                hours=_figure(egress.migration_window_hours),
            )
        )
    for q in questions:
        if q.status == "open":
            lines.append(_("open (A8): {question}").format(question=question_text(q)))
    return lines


def _print_audit(result: AuditResult) -> None:
    """The summary, the E2 layers as a table, the audit's lines and its notes."""
    from rich.table import Table

    from gpudecide.artifacts.report import item_proof

    f = result.model
    out.print(summary_of(result.record), markup=False)
    if f.contour is not None:
        whose = (
            _("the vendor's own export of {option}").format(option=f.option)
            if f.contour.artifacts == "vendor_export"
            else _("produced here (not the vendor's export)")
        )
        out.print(
            _("audited: {storage}: {whose}").format(storage=f.contour.storage, whose=whose),
            markup=False,
        )
    table = Table(_("layer"), _("item"), _("status"), _("proof"), box=None)
    for layer, items in f.layers.items():
        for item in items:
            table.add_row(
                word(LAYERS, layer),
                word(ITEMS, item.name),
                word(STATUSES, item.status),
                item_proof(item),
            )
    out.print(table)
    for line in _audit_lines(f):
        out.print(line, markup=False)
    for note in notes_of(result.record):
        out.print(_("note: {text}").format(text=note), markup=False)


def audit_cmd(
    export_dir: Annotated[
        Path,
        typer.Argument(
            metavar="EXPORT_DIR", help="The export folder (with --source: where the copy goes)."
        ),
    ],
    expect: Annotated[
        Path | None, typer.Option("--expect", help="plan.yaml: what the export must allow.")
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(help="Read the export from this fsspec URL (s3://bucket/prefix) and time it."),
    ] = None,
    storage_option: Annotated[
        list[str] | None,
        typer.Option(help="KEY=VALUE for the storage driver (repeatable), e.g. endpoint_url=..."),
    ] = None,
    streams: Annotated[int, typer.Option(min=1, help="Parallel downloads with --source.")] = 4,
    retention: RetentionOpt = None,
    option: Annotated[
        str | None,
        typer.Option(
            "--option", help="Id of the option this export came from (a hazard stops it)."
        ),
    ] = None,
    evidence_dir: Annotated[
        Path | None, typer.Option(help="Where to write the evidence record.")
    ] = None,
    workspace_dir: WorkspaceOpt = None,
    workers: WorkersOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Could this export leave and resume? E2, A2, E5, A8 (exit 1 on a stop factor)."""
    from gpudecide.artifacts import runs

    req = runs.AuditRequest(
        export_dir,
        plan=expect,
        source=source,
        storage_options=list(storage_option or []),
        streams=streams,
        retention=retention,
        option=option,
        evidence_dir=evidence_dir,
        workers=workers,
    )
    label = _("copying") if source else _("hashing")
    with guard(as_json):
        ws = open_workspace(workspace_dir, required=False)
        with _bytes_progress(not as_json, label) as (on_bytes, _total):
            audited = runs.audit_run(req, ws, on_bytes)
    _emit_audit(audited, as_json)


def _emit_audit(audited: AuditRun, as_json: bool) -> None:
    """The audit for people (or its figures as JSON) and where its record went; exit 1 on a
    stop factor."""
    if as_json:
        emit_json(audited.as_json())
    else:
        _print_audit(audited.result)
        print_written(audited.written)
    if audited.stop:
        raise typer.Exit(1)
