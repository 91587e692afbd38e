"""One run of each artifact command as the command asks for it (SPEC A4-A8, E2, E5).

    hashed = hash_run(HashRequest(path=Path("ckpt"), verify=Path("SHA256SUMS")))
    hashed.check                 # a SumsCheck when a sums file was given, else the text
    audited = audit_run(AuditRequest(export=Path("exports/run-7"), option="managed-ft"), ws)
    audited.result, audited.written

Each `*_run` resolves what the command was given (the sums file, the folder's own output
files left out, the retention policy of the workspace, the option id), calls the library
(`hashing`, `manifest`, `audit`) and returns what the command shows: the presenter in
`cli.py` prints it for people or as JSON and picks the exit code. Bad input is an
`InputError` (exit 2) before anything is written: every output path (`--out`,
`--evidence-dir`) is checked by its class before the work starts (`places`), and written
atomically, or into the pipe or device it names, never replacing a device with a file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudecide import evidence as ev
from gpudecide.artifacts import audit, hashing, places, remote
from gpudecide.artifacts import manifest as mf
from gpudecide.artifacts import retention as ret
from gpudecide.errors import InputError
from gpudecide.fsutil import ProgressFn
from gpudecide.inputs import read_input_text
from gpudecide.options import require_known
from gpudecide.workspace import CONFIG_NAME, Workspace

__all__ = [
    "FORMATS",
    "SUMS_MAX_BYTES",
    "AuditRequest",
    "AuditRun",
    "HashRequest",
    "HashRun",
    "LintRun",
    "ManifestRun",
    "ProvenanceRun",
    "audit_run",
    "create_run",
    "hash_run",
    "lint_run",
    "provenance_run",
    "vendor_of",
    "verify_run",
]

FORMATS = ("sha256sum", "model-signing")
SUMS_MAX_BYTES = 64 << 20  # a sums file lists every file of a run; past 64 MiB it is not one


@dataclass
class HashRequest:
    """What `gpudecide hash` was given."""

    path: Path
    verify: Path | None = None
    out_format: str = "sha256sum"
    out_file: Path | None = None
    workers: int | None = None
    as_json: bool = False  # --json: the body (and the file --out writes) is JSON


@dataclass
class HashRun:
    """A hashed tree and what the command shows of it: the check against the sums file, or
    the text it prints or wrote to `written`."""

    request: HashRequest
    tree: hashing.TreeHash
    check: hashing.SumsCheck | None = None
    text: str = ""
    written: Path | None = None

    def as_json(self) -> dict[str, Any]:
        """The `--json` body."""
        if self.check is not None:
            sums = str(self.request.verify)
            return {**self.check.as_dict(), "root": str(self.request.path), "sums": sums}
        body = self.tree.as_dict()
        return {**body, "written": str(self.written)} if self.written is not None else body


def _own_outputs(path: Path, *files: Path | None) -> list[str]:
    """The command's own files inside the hashed folder (relative): left out on purpose."""
    if not path.is_dir():
        return []
    root = path.resolve()
    return [
        f.resolve().relative_to(root).as_posix()
        for f in files
        if f is not None and f.resolve().is_relative_to(root)
    ]


def hash_run(
    req: HashRequest,
    on_bytes: ProgressFn | None = None,
    on_total: Callable[[int, int], None] | None = None,
) -> HashRun:
    """Hash `req.path`; check it against `req.verify`, or format (and write) the digests."""
    if req.out_format not in FORMATS:
        raise InputError(
            "{out_format!r} is not sha256sum or model-signing",
            field="--format",
            out_format=req.out_format,
        )
    if req.out_file is not None:
        places.check_output(req.out_file, field="--out")
    expected = None
    if req.verify is not None:
        # A regular file only: a FIFO given as SUMS would block forever.
        places.refuse_kernel_input(req.verify, "--verify")
        expected = hashing.parse_sums(read_input_text(req.verify, SUMS_MAX_BYTES), req.verify)
    exclude = _own_outputs(req.path, req.out_file, req.verify)
    tree = hashing.hash_tree(
        req.path, exclude=exclude, workers=req.workers, on_bytes=on_bytes, on_total=on_total
    )
    if expected is not None:
        return HashRun(req, tree, check=hashing.check_tree(tree, expected))
    if req.out_format == "model-signing":
        statement = hashing.model_signing_statement(tree.files, req.path.resolve().name, exclude)
        text = json.dumps(statement, indent=2) + "\n"
    elif req.as_json:
        text = json.dumps(tree.as_dict(), indent=2) + "\n"
    else:
        text = hashing.format_sums(tree.files)
    if req.out_file is not None:
        places.write_output(req.out_file, text, field="--out")
    return HashRun(req, tree, text=text, written=req.out_file)


@dataclass
class ManifestRun:
    """A run manifest written to `target`, and the tree it was hashed from."""

    target: Path
    manifest: mf.RunManifest
    tree: hashing.TreeHash

    def as_json(self) -> dict[str, Any]:
        """The `--json` body."""
        return {"manifest": str(self.target), **self.manifest.model_dump(by_alias=True)}


def create_run(
    directory: Path,
    from_file: Path | None = None,
    out_file: Path | None = None,
    *,
    force: bool = False,
    workers: int | None = None,
    on_bytes: ProgressFn | None = None,
) -> ManifestRun:
    """Hash the run's folder and write its manifest (A5, E2), run.yaml read first."""
    if from_file is not None:
        places.refuse_kernel_input(from_file, "--from")
    info = mf.load_run_info(from_file) if from_file is not None else None
    target = out_file or directory / mf.DEFAULT_NAME
    manifest, tree, _det = mf.create(
        directory, info, target, force=force, workers=workers, on_bytes=on_bytes
    )
    return ManifestRun(target, manifest, tree)


@dataclass
class LintRun:
    """The A6 findings of one manifest, against the retention policy when there is one."""

    manifest_path: Path
    policy_path: Path | None
    findings: list[mf.LintFinding]

    @property
    def errors(self) -> list[mf.LintFinding]:
        """The findings that fail the lint (exit 1)."""
        return [f for f in self.findings if f.severity == "error"]

    def as_json(self) -> dict[str, Any]:
        """The `--json` body."""
        errors = len(self.errors)
        return {
            "manifest": str(self.manifest_path),
            "retention": str(self.policy_path) if self.policy_path else None,
            "ok": not errors,
            "errors": errors,
            "warnings": len(self.findings) - errors,
            "findings": [f.as_dict() for f in self.findings],
        }


def lint_run(
    manifest_path: Path, retention: Path | None = None, workspace_root: Path | None = None
) -> LintRun:
    """Lint a manifest (A6), its retention class checked against the policy given, else the
    workspace's."""
    places.refuse_kernel_input(manifest_path)
    policy_path = ret.find(retention, workspace_root)
    if policy_path is not None:
        places.refuse_kernel_input(policy_path, "--retention")
    policy = ret.load(policy_path) if policy_path is not None else None
    _manifest, findings = mf.lint_file(manifest_path, policy)
    return LintRun(manifest_path, policy_path, findings)


def verify_run(
    directory: Path,
    manifest_path: Path,
    *,
    workers: int | None = None,
    on_bytes: ProgressFn | None = None,
) -> hashing.SumsCheck:
    """Every file of the manifest is in `directory` with its hash and size, nothing else."""
    places.refuse_kernel_input(manifest_path)
    _manifest, check = mf.verify(directory, manifest_path, workers=workers, on_bytes=on_bytes)
    return check


@dataclass
class ProvenanceRun:
    """The manifest as an in-toto statement: its text, and where it was written."""

    statement: dict[str, Any]
    text: str
    written: Path | None = None

    def as_json(self) -> dict[str, Any]:
        """The `--json` body (when the statement went to a file)."""
        return {"written": str(self.written), "subjects": len(self.statement["subject"])}


def provenance_run(manifest_path: Path, out_file: Path | None = None) -> ProvenanceRun:
    """The manifest's SLSA provenance statement (unsigned), written to `out_file` if given."""
    if out_file is not None:
        places.check_output(out_file, field="--out")
    places.refuse_kernel_input(manifest_path)
    statement = mf.provenance_statement(mf.load_manifest(manifest_path))
    text = json.dumps(statement, indent=2, ensure_ascii=False) + "\n"
    if out_file is not None:
        places.write_output(out_file, text, field="--out")
    return ProvenanceRun(statement, text, out_file)


@dataclass
class AuditRequest:
    """What `gpudecide audit` was given."""

    export: Path
    plan: Path | None = None
    source: str | None = None
    storage_options: list[str] = field(default_factory=list)  # KEY=VALUE
    streams: int = 4
    retention: Path | None = None
    option: str | None = None
    evidence_dir: Path | None = None
    workers: int | None = None


@dataclass
class AuditRun:
    """An export audit and the evidence record written from it."""

    request: AuditRequest
    result: audit.AuditResult
    written: Path

    @property
    def stop(self) -> bool:
        """A hazard stops the option (exit 1)."""
        return self.result.stop

    def as_json(self) -> dict[str, Any]:
        """The `--json` body."""
        option = self.request.option
        return {**self.result.figures, "option": option, "evidence": str(self.written)}


def vendor_of(option: str, ws: Workspace | None) -> bool:
    """Whether the export of `option` came from its vendor: the option is declared in the
    workspace (InputError naming --option otherwise) and its contour is the vendor's (a
    managed option unless it declares another executor)."""
    if ws is None:
        raise InputError(
            "no workspace declares option {option}",
            field="--option",
            hint="run the audit inside the workspace whose gpudecide.yaml declares it, or "
            "pass -w DIR",
            option=option,
        )
    require_known(option, ws.config.options, path=ws.root / CONFIG_NAME, field="--option")
    decl = next(o for o in ws.config.options if o.id == option)
    return decl.contour.declared(decl.kind) == "vendor"


def audit_run(
    req: AuditRequest, ws: Workspace | None, on_bytes: ProgressFn | None = None
) -> AuditRun:
    """Audit the export (copied from `req.source` first, when given) and write its record
    into `req.evidence_dir`, else the workspace's evidence folder, else ./evidence."""
    from_vendor = vendor_of(req.option, ws) if req.option is not None else False
    target = req.evidence_dir or (ws.evidence_dir if ws else Path("evidence"))
    places.check_folder_output(
        target, field="--evidence-dir" if req.evidence_dir is not None else None
    )
    for given, name in ((req.plan, "--expect"), (req.retention, "--retention")):
        if given is not None:
            places.refuse_kernel_input(given, name)
    result = audit.run(
        req.export,
        plan_path=req.plan,
        source=req.source,
        storage_options=remote.parse_options(req.storage_options),
        retention_path=req.retention,
        workspace_root=ws.root if ws else None,
        streams=req.streams,
        workers=req.workers,
        on_bytes=on_bytes,
        option=req.option,
        from_vendor=from_vendor,
    )
    return AuditRun(req, result, ev.write(result.record, target))
