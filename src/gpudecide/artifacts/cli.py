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

from gpudecide.artifacts.report import ITEMS, LAYERS, STATUSES
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
from gpudecide.inputs import read_input_text
from gpudecide.options import require_known
from gpudecide.report.fmt import localize_digits, not_available
from gpudecide.report.i18n import N_, P_, localize, notes_of, summary_of
from gpudecide.workspace import CONFIG_NAME

if TYPE_CHECKING:
    from gpudecide.artifacts.hashing import SumsCheck

WorkersOpt = Annotated[
    int | None, typer.Option(min=1, help="Hashing threads (default: one per core).")
]
RetentionOpt = Annotated[
    Path | None,
    typer.Option(help="retention.yaml (default: the workspace's, if any)."),
]

_ = translator("artifacts")

# English that hashing and the manifest lint write (reasons a file was skipped or refused,
# lint messages), translated for ru and kk by pattern (`gpudecide.report.i18n.localize`).
GENERATED = (
    P_("directory not readable: {reason}"),
    P_("file name is not valid UTF-8"),
    P_("cannot stat: {reason}"),
    P_("not a regular file (socket, FIFO or device)"),
    P_("not readable (permission denied)"),
    P_("not readable: {reason}"),
    P_("absolute path: refused, only files under the root are checked"),
    P_("'..' leaves the root: refused"),
    P_("no {what} given"),
    P_("base model"),
    P_("precision"),
    P_("method"),
    P_("container digest"),
    P_("{value} names a moving tag; it proves nothing"),
    P_("{value} has a tag instead of a digest: pin it as name@sha256:<64 hex digits>"),
    P_("{value} has no immutable digest: pin it as name@sha256:<64 hex digits>"),
    P_("no dataset snapshot given"),
    P_("{value} points at a moving name"),
    P_("{value} has no version or snapshot id: the run cannot be reproduced from it"),
    P_("no code commit given"),
    P_("{value} is not a hex commit id"),
    P_("{value} is too short to name a commit"),
    P_(
        "{value} is abbreviated: unique today, maybe ambiguous later; record the full 40-hex id"
    ),
    P_("{value} is not 40 or 64 hex digits long"),
    P_("no creation time given"),
    P_("{value} has no time of day"),
    P_("{value} is not an ISO 8601 time"),
    P_("{value} has no zone: write it in UTC with Z"),
    P_("{value} is not UTC"),
    P_("{value} is not one of {known}"),
    P_("no files listed with size and SHA-256"),
    P_("{path} listed twice"),
    P_("{path} is outside the run folder"),
    P_("names {path}, which is not among the files"),
    P_("not stated (true/false)"),
    P_("true, but no optimizer state is among the files (A2: not resumable)"),
    P_("false, but {path} looks like optimizer state"),
    P_("no retention class"),
    P_("no retention.yaml to check it against (pass --retention or run in a workspace)"),
    P_("{value} is not defined in {path} (defined: {defined})"),
    P_("not recorded: a restore elsewhere cannot match the environment"),
    P_("no library versions recorded (torch, transformers, ...)"),
    P_("no evaluation metrics recorded"),
    P_("no run_id given"),
    P_("export size (no run_size_gb in the plan)"),
)
# The words of the lint rules ("A6 commit") and severities, as a person reads them.
RULE_WORDS = {
    "required": N_("required"),
    "files": N_("files"),
    "optimizer": N_("optimizer"),
    "vocabulary": N_("vocabulary"),
    "commit": N_("commit"),
    "digest": N_("digest"),
    "mutable": N_("mutable"),
    "time": N_("time"),
    "version": N_("version"),
    "retention": N_("retention"),
    "execution": N_("execution"),
    "provenance": N_("provenance"),
}
SEVERITIES = {"error": N_("error"), "warning": N_("warning")}


def _english(text: str, lang: str) -> str:
    """English that hashing, the lint or the audit wrote, in `lang` by the catalogue patterns."""
    return text if lang == "en" else localize(text, lang, ("artifacts", "report"))


def _word(table: dict[str, str], key: str, lang: str) -> str:
    """A known id's name in `lang` (English keeps the id itself, as before)."""
    if lang == "en" or key not in table:
        return key
    return _(table[key], lang)


def _rule(rule: str, lang: str) -> str:
    """A lint rule ("A6 commit") in `lang`: the SPEC id kept, the word translated."""
    spec, _sep, word = rule.partition(" ")
    return rule if lang == "en" or not word else f"{spec} {_word(RULE_WORDS, word, lang)}"


def _figure(value: Any, lang: str) -> str:
    """A figure as the audit wrote it (English), else with `lang`'s signs; n/a when absent."""
    if value is None and lang != "en":
        return not_available(lang)
    return localize_digits(str(value), lang)


def _num(value: int, lang: str) -> str:
    """A count as the command printed it in English, with `lang`'s number signs."""
    return localize_digits(f"{value:,}", lang)


def _lang(workspace_dir: Path | None = None) -> str:
    """The language of the command's output: --lang, $GPUDECIDE_LANG, else the workspace's
    (a broken or absent workspace is no reason to refuse a file command: English then)."""
    try:
        return language(open_workspace(workspace_dir, required=False))
    except (InputError, OSError):
        return language(None)


def _print_check(check: SumsCheck, *, extra: str, lang: str = "en") -> None:
    """One line per file that does not match, in `sha256sum -c` style."""
    for m in check.mismatched:
        out.print(_("{path}: FAILED", lang).format(path=m["path"]), markup=False)
    for p in check.missing:
        out.print(_("{path}: MISSING", lang).format(path=p), markup=False)
    for p in check.extra:
        out.print(f"{p}: {_(extra, lang)}", markup=False)
    for r in check.refused:
        reason = _english(r["reason"], lang)
        out.print(_("{path}: REFUSED ({reason})", lang).format(path=r["path"], reason=reason))


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


def _print_skipped(skipped: list[dict[str, str]], lang: str = "en") -> None:
    for s in skipped:
        text = _("skipped: {path}: {reason}", lang)
        err.print(text.format(path=s["path"], reason=_english(s["reason"], lang)), markup=False)


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
            raise InputError(f"{out_format!r} is not sha256sum or model-signing", field="--format")
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
    lang = "en" if as_json else _lang()
    if expected is not None:
        check = hashing.check_tree(tree, expected)
        if as_json:
            emit_json({**check.as_dict(), "root": str(path), "sums": str(verify)})
        else:
            _print_check(check, extra=N_("NOT LISTED"), lang=lang)
            out.print(
                _(
                    "{ok} OK, {failed} failed, {missing} missing, {extra} not listed, "
                    "{refused} refused",
                    lang,
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
            out.print(
                _("{n} files, {bytes} bytes -> {path}", lang).format(
                    n=len(tree.files), bytes=_num(tree.total_bytes, lang), path=out_file
                ),
                markup=False,
            )
    else:
        print(text, end="")
    if not as_json:
        _print_skipped(body["skipped"], lang)


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
    lang = _lang()
    exported = manifest.optimizer_state_exported
    out.print(
        _(
            "manifest: {path} ({n} files, {bytes} bytes; format {format}, precision {precision}, "
            "optimizer state {exported})",
            lang,
        ).format(
            path=target,
            n=len(manifest.files),
            bytes=_num(tree.total_bytes, lang),
            format=manifest.checkpoint_format,
            precision=manifest.precision,
            exported=_("yes", lang) if exported else _("no", lang),
        ),
        markup=False,
    )
    _print_skipped(manifest.skipped, lang)
    out.print(_("next: {command}", lang).format(command=f"gpudecide manifest lint {target}"))


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
        lang = _lang(workspace_dir)
        for f in findings:
            where = f"{manifest_path}:{f.line}" if f.line else str(manifest_path)
            severity = _word(SEVERITIES, f.severity, lang)
            message = _english(f.message, lang)
            out.print(
                f"{where}: {severity}: {f.field}: {message} [{_rule(f.rule, lang)}]", markup=False
            )
        out.print(
            _("{errors} error(s), {warnings} warning(s)", lang).format(
                errors=len(errors), warnings=len(findings) - len(errors)
            )
        )
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
        lang = _lang()
        _print_check(check, extra=N_("EXTRA"), lang=lang)
        verdict = _("verified", lang) if check.ok else _("DOES NOT MATCH", lang)
        out.print(
            _("{verdict}: {n} file(s) match {path}", lang).format(
                verdict=verdict, n=check.matched, path=manifest_path
            ),
            markup=False,
        )
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
        out.print(
            _("statement: {path} ({n} subjects)", _lang()).format(
                path=out_file, n=len(statement["subject"])
            ),
            markup=False,
        )


def _audit_lines(f: dict[str, Any], lang: str) -> list[str]:
    """Checkpoints, hazards, egress and open A8 questions, one line each (A2, E5, A8)."""
    lines = []
    for u in f["units"]:
        resumable = _("resumable", lang) if u["resumable"] else _("not resumable", lang)
        step = "" if u["step"] is None else _(", step {step}", lang).format(step=u["step"])
        lines.append(
            _("unit {path} ({kind}): {resumable}{step}", lang).format(
                path=u["path"], kind=u["kind"], resumable=resumable, step=step
            )
        )
    for h in f["hazards"]:
        lines.append(
            _("HAZARD {id}: {path}: {detail}", lang).format(
                id=h["id"], path=h["path"], detail=_english(h["detail"], lang)
            )
        )
    eg = f.get("egress")
    if eg:
        lines.append(
            _(
                "egress: {speed} MB/s over {bytes} bytes; moving {run_bytes} bytes ({basis}) "
                "takes {hours} h",
                lang,
            ).format(
                speed=_figure(eg["throughput_mb_s"], lang),
                bytes=_num(eg["bytes"], lang),
                run_bytes=_num(eg["run_bytes"], lang),
                basis=_english(str(eg["extrapolated_from"]), lang),
                hours=_figure(eg["migration_window_hours"], lang),
            )
        )
    for q in f["retention"]["questions"]:
        if q["status"] == "open":
            text = _english(q["question"], lang)
            lines.append(_("open (A8): {question}", lang).format(question=text))
    return lines


def _print_audit(result: Any, lang: str) -> None:
    from rich.table import Table

    f = result.figures
    out.print(summary_of(result.record, lang), markup=False)
    table = Table(_("layer", lang), _("item", lang), _("status", lang), _("proof", lang), box=None)
    for layer, items in f["layers"].items():
        for item in items:
            proof = item["path"] or _english(item["detail"] or "", lang)
            table.add_row(
                _word(LAYERS, layer, lang),
                _word(ITEMS, item["name"], lang),
                _word(STATUSES, item["status"], lang),
                proof,
            )
    out.print(table)
    for line in _audit_lines(f, lang):
        out.print(line, markup=False)
    if len(result.record.notes) == len(f.get("notes", [])):
        notes = notes_of(result.record, lang)
    else:
        notes = [_english(n, lang) for n in f.get("notes", [])]
    for note in notes:
        out.print(_("note: {text}", lang).format(text=note), markup=False)


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
        lang = language(ws)
        _print_audit(result, lang)
        print_written(written, lang)
    if result.stop:
        raise typer.Exit(1)
