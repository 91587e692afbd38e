"""Commands `hash`, `manifest` (create / lint / verify / provenance) and `audit`.

`register(app)` adds them to the main typer app; the shared console helpers come from
`gpudecide.console`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpudecide import fmt
from gpudecide.artifacts.retention import A8_QUESTIONS
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
from gpudecide.i18n import Language, speaking, translator
from gpudecide.inputs import read_input_text
from gpudecide.message import render
from gpudecide.options import require_known
from gpudecide.report.i18n import notes_of, summary_of
from gpudecide.workspace import CONFIG_NAME

if TYPE_CHECKING:
    from gpudecide.artifacts.hashing import Skipped, SumsCheck

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


@contextmanager
def _bytes_progress(
    enabled: bool, label: str
) -> Iterator[tuple[Callable[[int], None] | None, Callable[[int, int], None] | None]]:
    """A byte progress bar on stderr, only when stderr is a terminal."""
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
            bar.update(task, total=total, description=f"{label} ({files} files)")

        yield on_bytes, on_total


def _print_skipped(skipped: list[Skipped]) -> None:
    for s in skipped:
        text = _("skipped: {path}: {reason}").format(path=s.path, reason=render(s.why))
        err.print(text, markup=False)


def _workspace_root(workspace_dir: Path | None) -> Path | None:
    ws = open_workspace(workspace_dir, required=False)
    return ws.root if ws is not None else None


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
    from gpudecide.artifacts import hashing
    from gpudecide.fsutil import atomic_write_text

    with guard(as_json):
        if out_format not in ("sha256sum", "model-signing"):
            raise InputError(
                "{out_format!r} is not sha256sum or model-signing",
                field="--format",
                out_format=out_format,
            )
        expected = None
        if verify is not None:
            # A regular file only: a FIFO given as SUMS would block forever.
            text = read_input_text(verify, 64 << 20)
            expected = hashing.parse_sums(text, verify)
        exclude = []
        if path.is_dir():
            for extra in (out_file, verify):
                if extra is not None and extra.resolve().is_relative_to(path.resolve()):
                    exclude.append(extra.resolve().relative_to(path.resolve()).as_posix())
        with _bytes_progress(not as_json, "hashing") as (on_bytes, on_total):
            tree = hashing.hash_tree(
                path, exclude=exclude, workers=workers, on_bytes=on_bytes, on_total=on_total
            )
    body = tree.as_dict()
    if not as_json:
        _speak_workspace_language()
    if expected is not None:
        check = hashing.check_tree(tree, expected)
        if as_json:
            emit_json({**check.as_dict(), "root": str(path), "sums": str(verify)})
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
    if out_format == "model-signing":
        name = path.resolve().name
        text = (
            json.dumps(hashing.model_signing_statement(tree.files, name, exclude), indent=2) + "\n"
        )
    elif as_json:
        text = json.dumps(body, indent=2) + "\n"
    else:
        text = hashing.format_sums(tree.files)
    if out_file is not None:
        with guard(as_json):
            atomic_write_text(out_file, text)
        if as_json:
            emit_json({**body, "written": str(out_file)})
        else:
            n = len(tree.files)
            line = _n("{n} file, {bytes} bytes -> {path}", "{n} files, {bytes} bytes -> {path}", n)
            out.print(
                line.format(n=n, bytes=fmt.fmt(tree.total_bytes), path=out_file), markup=False
            )
    else:
        print(text, end="")
    if not as_json:
        _print_skipped(tree.skipped)


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
    from gpudecide.artifacts import manifest as mf

    with guard(as_json):
        info = mf.load_run_info(from_file) if from_file is not None else None
        target = out_file or directory / mf.DEFAULT_NAME
        with _bytes_progress(not as_json, "hashing") as (on_bytes, _total):
            manifest, tree, _det = mf.create(
                directory, info, target, force=force, workers=workers, on_bytes=on_bytes
            )
    if as_json:
        emit_json({"manifest": str(target), **manifest.model_dump(by_alias=True)})
        return
    _speak_workspace_language()
    exported = manifest.optimizer_state_exported
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
            path=target,
            n=n,
            bytes=fmt.fmt(tree.total_bytes),
            format=manifest.checkpoint_format,
            precision=manifest.precision,
            exported=_("yes") if exported else _("no"),
        ),
        markup=False,
    )
    _print_skipped(tree.skipped)
    out.print(_("next: {command}").format(command=f"gpudecide manifest lint {target}"))


def manifest_lint(
    manifest_path: Annotated[Path, typer.Argument(metavar="MANIFEST", help="The run manifest.")],
    retention: RetentionOpt = None,
    workspace_dir: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Immutable identifiers only (A6); exit 1 when a field is an error."""
    from gpudecide.artifacts import manifest as mf
    from gpudecide.artifacts import retention as ret

    with guard(as_json):
        policy_path = ret.find(retention, _workspace_root(workspace_dir))
        policy = ret.load(policy_path) if policy_path is not None else None
        _manifest, findings = mf.lint_file(manifest_path, policy)
    errors = [f for f in findings if f.severity == "error"]
    if as_json:
        emit_json(
            {
                "manifest": str(manifest_path),
                "retention": str(policy_path) if policy_path else None,
                "ok": not errors,
                "errors": len(errors),
                "warnings": len(findings) - len(errors),
                "findings": [f.as_dict() for f in findings],
            }
        )
    else:
        _speak_workspace_language(workspace_dir)
        for f in findings:
            where = f"{manifest_path}:{f.line}" if f.line else str(manifest_path)
            severity = word(SEVERITIES, f.severity)
            out.print(
                f"{where}: {severity}: {f.field}: {render(f.why)} [{rule_label(f.rule)}]",
                markup=False,
            )
        n_errors, n_warnings = len(errors), len(findings) - len(errors)
        said_errors = _n("{n} error", "{n} errors", n_errors).format(n=n_errors)
        said_warnings = _n("{n} warning", "{n} warnings", n_warnings).format(n=n_warnings)
        out.print(f"{said_errors}, {said_warnings}")
    if errors:
        raise typer.Exit(1)


def manifest_verify(
    directory: Annotated[Path, typer.Argument(help="The run's folder.")],
    manifest_path: Annotated[Path, typer.Argument(metavar="MANIFEST", help="The run manifest.")],
    workers: WorkersOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Every hash matches, nothing is missing, nothing is extra (exit 1 otherwise)."""
    from gpudecide.artifacts import manifest as mf

    with guard(as_json), _bytes_progress(not as_json, "verifying") as (on_bytes, _total):
        _m, check = mf.verify(directory, manifest_path, workers=workers, on_bytes=on_bytes)
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
    from gpudecide.artifacts import manifest as mf
    from gpudecide.fsutil import atomic_write_text

    with guard(as_json):
        statement = mf.provenance_statement(mf.load_manifest(manifest_path))
        text = json.dumps(statement, indent=2, ensure_ascii=False) + "\n"
        if out_file is not None:
            atomic_write_text(out_file, text)
    if out_file is None:
        print(text, end="")
    elif as_json:
        emit_json({"written": str(out_file), "subjects": len(statement["subject"])})
    else:
        _speak_workspace_language()
        n = len(statement["subject"])
        line = _n("statement: {path} ({n} subject)", "statement: {path} ({n} subjects)", n)
        out.print(line.format(path=out_file, n=n), markup=False)


def _hazard_detail(h: dict[str, Any]) -> str:
    """A hazard's detail in the reader's language (a record without its message: as written)."""
    msg = h.get("message")
    return render(msg) if msg else str(h.get("detail") or "")


def _question(q: dict[str, Any]) -> str:
    """An A8 question in the reader's language (an unknown one as the record words it)."""
    return word(A8_QUESTIONS, str(q["id"])) if q["id"] in A8_QUESTIONS else str(q["question"])


def _proof(item: dict[str, Any]) -> str:
    """What proves an E2 item: its file, else why it is absent."""
    if item.get("path"):
        return str(item["path"])
    msg = item.get("message")
    return render(msg) if msg else str(item.get("detail") or "")


def _audit_lines(f: dict[str, Any], lang: Language | None = None) -> list[str]:
    """Checkpoints, hazards, egress and open A8 questions, one line each (A2, E5, A8)."""
    # transitional: callers outside artifacts still pass a language (tests/test_commands_i18n
    # reads the lines in ru and kk); said in it, else in the run's language
    if lang is not None:
        with speaking(lang):
            return _audit_lines(f)
    lines = []
    for u in f["units"]:
        resumable = _("resumable") if u["resumable"] else _("not resumable")
        step = "" if u["step"] is None else _(", step {step}").format(step=u["step"])
        lines.append(
            _("unit {path} ({kind}): {resumable}{step}").format(
                path=u["path"], kind=u["kind"], resumable=resumable, step=step
            )
        )
    for h in f["hazards"]:
        lines.append(
            _("HAZARD {id}: {path}: {detail}").format(
                id=h["id"], path=h["path"], detail=_hazard_detail(h)
            )
        )
    eg = f.get("egress")
    if eg:
        line = _n(
            "egress: {speed} MB/s over {bytes} byte; moving {run_bytes} bytes ({basis}) "
            "takes {hours} h",
            "egress: {speed} MB/s over {bytes} bytes; moving {run_bytes} bytes ({basis}) "
            "takes {hours} h",
            eg["bytes"],
        )
        lines.append(
            line.format(
                speed=_figure(eg["throughput_mb_s"]),
                bytes=fmt.fmt(eg["bytes"]),
                run_bytes=fmt.fmt(eg["run_bytes"]),
                basis=word(BASES, str(eg["extrapolated_from"])),
                hours=_figure(eg["migration_window_hours"]),
            )
        )
    for q in f["retention"]["questions"]:
        if q["status"] == "open":
            lines.append(_("open (A8): {question}").format(question=_question(q)))
    return lines


def _print_audit(result: Any) -> None:
    from rich.table import Table

    f = result.figures
    out.print(summary_of(result.record), markup=False)
    table = Table(_("layer"), _("item"), _("status"), _("proof"), box=None)
    for layer, items in f["layers"].items():
        for item in items:
            table.add_row(
                word(LAYERS, layer),
                word(ITEMS, item["name"]),
                word(STATUSES, item["status"]),
                _proof(item),
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
    from gpudecide import evidence as ev
    from gpudecide.artifacts import audit, remote

    with guard(as_json):
        ws = open_workspace(workspace_dir, required=False)
        if option is not None and ws is not None:
            require_known(option, ws.config.options, path=ws.root / CONFIG_NAME, field="--option")
        target = evidence_dir or (ws.evidence_dir if ws else Path("evidence"))
        options = remote.parse_options(list(storage_option or []))
        label = "copying" if source else "hashing"
        with _bytes_progress(not as_json, label) as (on_bytes, _total):
            result = audit.run(
                export_dir,
                plan_path=expect,
                source=source,
                storage_options=options,
                retention_path=retention,
                workspace_root=ws.root if ws else None,
                streams=streams,
                workers=workers,
                on_bytes=on_bytes,
            )
        if option is not None:
            result.record.figures["option"] = option
        written = ev.write(result.record, target)
    if as_json:
        emit_json({**result.figures, "option": option, "evidence": str(written)})
    else:
        _print_audit(result)
        print_written(written)
    if result.stop:
        raise typer.Exit(1)
