"""One run of the export acceptance test as a command asks for it (SPEC E1-E4, A2, A4).

    outcome = run(ExportTestRequest(plan=None, executor="slurm"), ws)
    outcome.record, outcome.written   # a RecordedRun: the test ran and wrote its record
    outcome.target, outcome.errors    # K8sManifests: --executor k8s --dry-run

`run` resolves what the command was given against the plan (`export-test.yaml`, hashed
before anything runs, E4): the option id against the workspace's options, the devices and
the executor, the storage URL (relative to the plan, as written), then runs the six steps
(`scenario`) or steps 5-6 on someone else's export (`from_export`) locally or as Slurm jobs,
and writes the evidence record; or, for Kubernetes, writes and validates the Job manifests
and runs nothing. Bad input is an `InputError` (exit 2) before any job starts.

Modules that import torch are imported where a test runs, so that resolving and refusing
input (and `--help`) never wait for it.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from gpudecide import evidence as ev
from gpudecide.errors import InputError, excerpt
from gpudecide.fsutil import file_kind
from gpudecide.inputs import node_line
from gpudecide.options import OPTION_ID_PATTERN, require_known
from gpudecide.portability.plan import PLAN_NAME, ExportTestPlan, load_plan
from gpudecide.workspace import Workspace

if TYPE_CHECKING:
    from gpudecide.portability.scenario import ExportTestSetup
    from gpudecide.portability.storage import Storage

__all__ = [
    "ExportTestRequest",
    "K8sManifests",
    "RecordedRun",
    "check_url",
    "kernel_root",
    "run",
]

# The values --device, --resume-device and --executor take (a device that is no device is
# refused by the trainer's own check, with its hint).
_CHOICES = ("cpu", "cuda", "local", "slurm", "k8s")


@dataclass
class ExportTestRequest:
    """What `gpudecide export-test` was given (None: the plan's value, or the default)."""

    plan: Path | None = None
    storage: str | None = None
    storage_options: list[str] = field(default_factory=list)  # KEY=VALUE
    executor: str | None = None
    dry_run: bool = False
    device: str | None = None
    resume_device: str | None = None
    from_export: Path | None = None
    image: str | None = None  # k8s: the container image (default: the plan's digest)
    out_file: Path | None = None  # k8s: where the manifests go
    keep_work: bool = False
    evidence_dir: Path | None = None
    option: str | None = None  # the option whose export it is (default: the plan's)
    secret: str | None = None  # k8s: the Secret the storage credentials come from


@dataclass
class RecordedRun:
    """A test that ran: its evidence record and where it was written."""

    record: ev.Evidence
    written: Path

    @property
    def failed(self) -> bool:
        """True when a step failed, or the test could not run (exit 1)."""
        return self.record.verdict in ("fail", "info")


@dataclass
class K8sManifests:
    """The Kubernetes Jobs of a dry run: written to `target`, schema errors per Job name."""

    target: Path
    errors: dict[str, list[str]]
    storage: str

    @property
    def invalid(self) -> dict[str, list[str]]:
        """The Jobs the schema refuses, with their errors (exit 1 when any)."""
        return {name: errs for name, errs in self.errors.items() if errs}


def _plan_path(plan: Path | None, ws_root: Path | None) -> Path:
    if plan is not None:
        return plan
    if ws_root is None:
        raise InputError(
            "no plan: pass --plan export-test.yaml, or run inside a workspace",
            hint="`gpudecide init` writes a commented export-test.yaml",
        )
    return ws_root / PLAN_NAME


def _check_option(plan: ExportTestPlan, path: Path, ws: Workspace | None) -> None:
    if ws is None:
        return
    root = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    require_known(
        plan.option, ws.config.options, path=path, field="option", line=node_line(root, ("option",))
    )


def _given_option(option: str | None, ws: Workspace | None) -> str | None:
    """`--option`: a declared option's id (the workspace's options; outside a workspace an
    id of the right form)."""
    if option is None:
        return None
    if ws is not None:
        require_known(option, ws.config.options, path=ws.root / "gpudecide.yaml", field="--option")
    elif not re.fullmatch(OPTION_ID_PATTERN, option):
        raise InputError(
            "{option} is not an option id",
            field="--option",
            hint="letters, digits, '.', '_' and '-', as declared under `options` in gpudecide.yaml",
            option=excerpt(option),
        )
    return option


def _choice(value: str | None, default: str | None, field: str) -> str | None:
    chosen = value if value is not None else default
    if chosen is not None and chosen not in _CHOICES:
        raise InputError("unknown value {chosen!r}", field=field, chosen=chosen)
    return chosen


def _storage_url(
    given: str | None, plan: ExportTestPlan, plan_path: Path, ws_root: Path | None
) -> str:
    url = given or plan.storage
    if url is None:
        return str((ws_root or Path.cwd()).resolve() / "exports" / "export-test")
    if "://" not in url and not Path(url).is_absolute() and given is None:
        return str((plan_path.parent / url).resolve())  # relative to the plan, as written
    return url


@dataclass
class _Resolved:
    """The request checked against the plan: what the run will use."""

    plan: ExportTestPlan
    plan_path: Path
    device: str
    resume_device: str | None
    executor: str
    url: str
    options: dict[str, Any]
    option: str | None


def _regular_output(path: Path, field_name: str) -> None:
    """An output file is a regular file, or a name in a folder: a device, a FIFO, a folder
    or a link is never replaced by what is written there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError(
            "cannot be written: {error}", path=path, field=field_name, error=exc.strerror
        ) from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise InputError(
            "is a symbolic link: it is not replaced",
            path=path,
            field=field_name,
            hint="give the file itself, or a new name",
        )
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(
            "is {file_kind}, not a regular file: it is not replaced",
            path=path,
            field=field_name,
            hint="give a file name in a folder",
            file_kind=file_kind(st.st_mode),
        )
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(
            "its folder does not exist", path=path, field=field_name, hint="create the folder first"
        )
    kind = kernel_root(path)
    if kind is not None:
        raise InputError(
            "is under {root}, the kernel's files: nothing is written there",
            path=path,
            field=field_name,
            hint="give a file name in a folder on a disk",
            root=kind,
        )


def _evidence_folder(path: Path) -> None:
    """The evidence folder is a folder (or a name one can be made at), checked before any
    job runs: a test that trains for minutes must not fail at its last write."""
    kind = kernel_root(path)
    if kind is not None:
        raise InputError(
            "is under {root}, the kernel's files: nothing is written there",
            path=path,
            field="--evidence-dir",
            hint="give a folder on a disk",
            root=kind,
        )
    for existing in (path, *path.parents):
        if os.path.lexists(existing):
            if not existing.is_dir():
                raise InputError(
                    "is a file, not a folder for evidence records",
                    path=existing,
                    field="--evidence-dir",
                    hint="move the file away or pass another evidence folder",
                )
            return


def kernel_root(path: Path) -> str | None:
    """The kernel folder (/proc, /sys, /dev) `path` resolves into, else None."""
    from gpudecide.portability.storage import KERNEL_ROOTS

    real = os.path.realpath(path)
    return next((r for r in KERNEL_ROOTS if real == r or real.startswith(r + "/")), None)


def _resolve(request: ExportTestRequest, ws: Workspace | None) -> _Resolved:
    from gpudecide.artifacts import remote
    from gpudecide.portability.executors import slurm_available
    from gpudecide.portability.trainer import require_device

    ws_root = ws.root if ws else None
    plan_path = _plan_path(request.plan, ws_root)
    plan = load_plan(plan_path)
    _check_option(plan, plan_path, ws)
    option = _given_option(request.option, ws)
    device = _choice(request.device, plan.device, "--device") or "cpu"
    resume = _choice(request.resume_device, plan.resume_device, "--resume-device")
    executor = _choice(request.executor, plan.executor, "--executor") or "local"
    require_device(device)
    if resume:
        require_device(resume)
    if executor == "slurm" and not slurm_available():
        raise InputError(
            "no Slurm controller answers (scontrol ping)",
            field="--executor",
            hint="start one (scripts/slurm-local start) or use --executor local",
        )
    if request.from_export is not None and request.storage is not None:
        raise InputError(
            "--storage has no use with --from-export: the export is read where it is",
            field="--storage",
            hint="leave out --storage; the export folder is the given one",
        )
    options = {**plan.storage_options, **remote.parse_options(list(request.storage_options))}
    url = _storage_url(request.storage, plan, plan_path, ws_root)
    if request.evidence_dir is not None:
        _evidence_folder(request.evidence_dir)
    return _Resolved(plan, plan_path, device, resume, executor, url, options, option)


def _setup(resolved: _Resolved, storage: Storage, ws_root: Path | None) -> ExportTestSetup:
    """The run's setup: a run id from the option and the UTC time, its own work folder."""
    from gpudecide.portability import executors as ex
    from gpudecide.portability.scenario import ExportTestSetup

    option = resolved.option or resolved.plan.option
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    run_id = f"{option}-{stamp}"
    runner = ex.SlurmExecutor() if resolved.executor == "slurm" else ex.LocalExecutor()
    base = (ws_root or Path.cwd()).resolve()
    return ExportTestSetup(
        plan=resolved.plan,
        plan_path=resolved.plan_path.resolve(),
        work=base / ".export-test-work" / run_id,
        storage=storage,
        executor=runner,
        device=resolved.device,
        resume_device=resolved.resume_device,
        workspace_root=ws_root,
        run_id=run_id,
        option_id=resolved.option,
    )


def _k8s(resolved: _Resolved, request: ExportTestRequest, ws_root: Path | None) -> K8sManifests:
    """Write and validate the train and resume Jobs; nothing is run (no cluster is driven)."""
    from gpudecide.fsutil import atomic_write_text
    from gpudecide.portability import executors as ex
    from gpudecide.portability.storage import shown_url

    if not request.dry_run:
        raise InputError(
            "running on Kubernetes needs a cluster this tool does not drive",
            field="--executor",
            hint="pass --dry-run to write the Job manifests, then `kubectl apply -f` them",
        )
    if request.from_export is not None:
        raise InputError(
            "--from-export runs here, not in Kubernetes Jobs",
            field="--executor",
            hint="leave out --executor k8s (or pass --executor local or slurm)",
        )
    plan = resolved.plan
    chosen = request.image or plan.identity.container_digest
    if not chosen or "@sha256:" not in chosen:
        raise InputError(
            "a Kubernetes Job needs an image pinned by digest",
            field="--image",
            hint="pass --image registry/name@sha256:<64 hex>, or set identity.container_digest",
        )
    check_url(resolved.url)
    secret = ex.secret_name(request.secret)
    docs = ex.k8s_export_jobs(
        plan,
        resolved.url,
        resolved.options,
        chosen,
        resolved.device,
        resolved.resume_device,
        secret=secret,
        option=resolved.option,
    )
    errors = {d["metadata"]["name"]: ex.validate_k8s_job(d) for d in docs}
    target = request.out_file or (ws_root or Path.cwd()) / "export-test-k8s.yaml"
    _regular_output(target, "--out")
    text = ex.k8s_header(secret, docs) + "---\n".join(
        yaml.safe_dump(d, sort_keys=False) for d in docs
    )
    atomic_write_text(target, text)
    return K8sManifests(target=target, errors=errors, storage=shown_url(resolved.url))


def check_url(url: str) -> None:
    """A storage URL without credentials in it (they belong in the environment or a Secret)."""
    from urllib.parse import urlsplit

    from gpudecide.portability.storage import shown_url

    if "://" in url and "@" in urlsplit(url).netloc:
        raise InputError(
            "{url}: credentials in the storage URL are refused",
            field="--storage",
            hint="put them in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or "
            "a profile; records and logs repeat the URL",
            url=shown_url(url),
        )


def run(request: ExportTestRequest, ws: Workspace | None) -> RecordedRun | K8sManifests:
    """Run the export test `request` asks for in workspace `ws` (None: outside one) and
    write its evidence record; for Kubernetes, the Job manifests (dry run only).

    Everything the run relies on is checked before the first job starts: the plan and its
    bounds, the option, the devices, a Slurm that answers, the storage (it answers and takes
    a write), the export given, the evidence folder."""
    ws_root = ws.root if ws else None
    resolved = _resolve(request, ws)
    if resolved.executor == "k8s":
        return _k8s(resolved, request, ws_root)
    if request.dry_run:
        raise InputError("--dry-run is for --executor k8s", field="--dry-run")
    if request.out_file is not None:
        raise InputError("--out is for --executor k8s --dry-run", field="--out")
    from gpudecide.portability.from_export import check_export_folder, run_from_export
    from gpudecide.portability.scenario import run_export_test
    from gpudecide.portability.storage import open_storage

    if request.from_export is not None:
        check_export_folder(request.from_export)
        storage = open_storage(str(request.from_export.resolve().parent))
    else:
        storage = open_storage(resolved.url, resolved.options)
        storage.check()
    setup = _setup(resolved, storage, ws_root)
    setup.keep_work = request.keep_work
    if request.from_export is not None:
        result = run_from_export(setup, request.from_export)
    else:
        result = run_export_test(setup)
    target = request.evidence_dir or (ws.evidence_dir if ws else Path("evidence"))
    return RecordedRun(record=result.record, written=ev.write(result.record, target))
