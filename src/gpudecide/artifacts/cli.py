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

from gpudecide.console import JsonOpt, WorkspaceOpt, emit_json, err, guard, open_workspace, out
from gpudecide.inputs import read_input_text
from gpudecide.options import require_known
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


def _print_check(check: SumsCheck, *, extra: str) -> None:
    """One line per file that does not match, in `sha256sum -c` style."""
    for m in check.mismatched:
        out.print(f"{m['path']}: FAILED", markup=False)
    for p in check.missing:
        out.print(f"{p}: MISSING", markup=False)
    for p in check.extra:
        out.print(f"{p}: {extra}", markup=False)
    for r in check.refused:
        out.print(f"{r['path']}: REFUSED ({r['reason']})", markup=False)


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


def _print_skipped(skipped: list[dict[str, str]]) -> None:
    for s in skipped:
        err.print(f"skipped: {s['path']}: {s['reason']}", markup=False)


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
    from gpudecide.errors import InputError
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
    if expected is not None:
        check = hashing.check_tree(tree, expected)
        if as_json:
            emit_json({**check.as_dict(), "root": str(path), "sums": str(verify)})
        else:
            _print_check(check, extra="NOT LISTED")
            out.print(
                f"{check.matched} OK, {len(check.mismatched)} failed, "
                f"{len(check.missing)} missing, "
                f"{len(check.extra)} not listed, {len(check.refused)} refused"
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
                f"{len(tree.files)} files, {tree.total_bytes:,} bytes -> {out_file}", markup=False
            )
    else:
        print(text, end="")
    if not as_json:
        _print_skipped(body["skipped"])


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
    out.print(
        f"manifest: {target} ({len(manifest.files)} files, {tree.total_bytes:,} bytes; "
        f"format {manifest.checkpoint_format}, precision {manifest.precision}, optimizer state "
        f"{'yes' if manifest.optimizer_state_exported else 'no'})",
        markup=False,
    )
    _print_skipped(manifest.skipped)
    out.print(f"next: gpudecide manifest lint {target}", markup=False)


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
        for f in findings:
            where = f"{manifest_path}:{f.line}" if f.line else str(manifest_path)
            out.print(f"{where}: {f.severity}: {f.field}: {f.message} [{f.rule}]", markup=False)
        out.print(f"{len(errors)} error(s), {len(findings) - len(errors)} warning(s)")
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
        _print_check(check, extra="EXTRA")
        verdict = "verified" if check.ok else "DOES NOT MATCH"
        out.print(f"{verdict}: {check.matched} file(s) match {manifest_path}", markup=False)
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
        out.print(f"statement: {out_file} ({len(statement['subject'])} subjects)", markup=False)


def _print_audit(f: dict[str, Any]) -> None:
    from rich.table import Table

    out.print(f["summary"], markup=False)
    table = Table("layer", "item", "status", "proof", box=None)
    for layer, items in f["layers"].items():
        for item in items:
            table.add_row(layer, item["name"], item["status"], item["path"] or item["detail"] or "")
    out.print(table)
    for u in f["units"]:
        out.print(
            f"unit {u['path']} ({u['kind']}): {'resumable' if u['resumable'] else 'not resumable'}"
            f"{'' if u['step'] is None else ', step ' + str(u['step'])}",
            markup=False,
        )
    for h in f["hazards"]:
        out.print(f"HAZARD {h['id']}: {h['path']}: {h['detail']}", markup=False)
    eg = f.get("egress")
    if eg:
        out.print(
            f"egress: {eg['throughput_mb_s']} MB/s over {eg['bytes']:,} bytes; moving "
            f"{eg['run_bytes']:,} bytes ({eg['extrapolated_from']}) takes "
            f"{eg['migration_window_hours']} h",
            markup=False,
        )
    open_q = [q for q in f["retention"]["questions"] if q["status"] == "open"]
    for q in open_q:
        out.print(f"open (A8): {q['question']}", markup=False)
    for note in f.get("notes", []):
        out.print(f"note: {note}", markup=False)


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
        _print_audit(result.figures)
        out.print(f"evidence: {written}", markup=False)
    if result.stop:
        raise typer.Exit(1)
