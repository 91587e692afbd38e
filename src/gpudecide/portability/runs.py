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

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from gpudecide import evidence as ev
from gpudecide.errors import InputError
from gpudecide.inputs import node_line
from gpudecide.options import require_known
from gpudecide.portability.plan import PLAN_NAME, ExportTestPlan, load_plan
from gpudecide.workspace import Workspace

if TYPE_CHECKING:
    from gpudecide.portability.scenario import ExportTestSetup
    from gpudecide.portability.storage import Storage

__all__ = ["ExportTestRequest", "K8sManifests", "RecordedRun", "run"]

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


@dataclass
class RecordedRun:
    """A test that ran: its evidence record and where it was written."""

    record: ev.Evidence
    written: Path

    @property
    def failed(self) -> bool:
        """True when a step failed (exit 1)."""
        return self.record.verdict == "fail"


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
        return str((ws_root or Path.cwd()) / "exports" / "export-test")
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


def _resolve(request: ExportTestRequest, ws: Workspace | None) -> _Resolved:
    from gpudecide.artifacts import remote
    from gpudecide.portability.trainer import require_device

    ws_root = ws.root if ws else None
    plan_path = _plan_path(request.plan, ws_root)
    plan = load_plan(plan_path)
    _check_option(plan, plan_path, ws)
    device = _choice(request.device, plan.device, "--device") or "cpu"
    resume = _choice(request.resume_device, plan.resume_device, "--resume-device")
    executor = _choice(request.executor, plan.executor, "--executor") or "local"
    require_device(device)
    if resume:
        require_device(resume)
    options = {**plan.storage_options, **remote.parse_options(list(request.storage_options))}
    url = _storage_url(request.storage, plan, plan_path, ws_root)
    return _Resolved(plan, plan_path, device, resume, executor, url, options)


def _setup(resolved: _Resolved, storage: Storage, ws_root: Path | None) -> ExportTestSetup:
    """The run's setup: a run id from the option and the UTC time, its own work folder."""
    from gpudecide.portability import executors as ex
    from gpudecide.portability.scenario import ExportTestSetup

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    run_id = f"{resolved.plan.option}-{stamp}"
    runner = ex.SlurmExecutor() if resolved.executor == "slurm" else ex.LocalExecutor()
    return ExportTestSetup(
        plan=resolved.plan,
        plan_path=resolved.plan_path,
        work=(ws_root or Path.cwd()) / ".export-test-work" / run_id,
        storage=storage,
        executor=runner,
        device=resolved.device,
        resume_device=resolved.resume_device,
        workspace_root=ws_root,
        run_id=run_id,
    )


def _k8s(resolved: _Resolved, request: ExportTestRequest, ws_root: Path | None) -> K8sManifests:
    """Write and validate the train and resume Jobs; nothing is run (no cluster is driven)."""
    from gpudecide.fsutil import atomic_write_text
    from gpudecide.portability import executors as ex

    if not request.dry_run:
        raise InputError(
            "running on Kubernetes needs a cluster this tool does not drive",
            field="--executor",
            hint="pass --dry-run to write the Job manifests, then `kubectl apply -f` them",
        )
    plan = resolved.plan
    chosen = request.image or plan.identity.container_digest
    if not chosen or "@sha256:" not in chosen:
        raise InputError(
            "a Kubernetes Job needs an image pinned by digest",
            field="--image",
            hint="pass --image registry/name@sha256:<64 hex>, or set identity.container_digest",
        )
    docs = ex.k8s_export_jobs(
        plan, resolved.url, resolved.options, chosen, resolved.device, resolved.resume_device
    )
    errors = {d["metadata"]["name"]: ex.validate_k8s_job(d) for d in docs}
    target = request.out_file or (ws_root or Path.cwd()) / "export-test-k8s.yaml"
    text = ex.K8S_HEADER + "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)
    atomic_write_text(target, text)
    return K8sManifests(target=target, errors=errors, storage=resolved.url)


def run(request: ExportTestRequest, ws: Workspace | None) -> RecordedRun | K8sManifests:
    """Run the export test `request` asks for in workspace `ws` (None: outside one) and
    write its evidence record; for Kubernetes, the Job manifests (dry run only)."""
    ws_root = ws.root if ws else None
    resolved = _resolve(request, ws)
    if resolved.executor == "k8s":
        return _k8s(resolved, request, ws_root)
    if request.dry_run:
        raise InputError("--dry-run is for --executor k8s", field="--dry-run")
    from gpudecide.portability.from_export import run_from_export
    from gpudecide.portability.scenario import run_export_test
    from gpudecide.portability.storage import open_storage

    setup = _setup(resolved, open_storage(resolved.url, resolved.options), ws_root)
    setup.keep_work = request.keep_work
    if request.from_export is not None:
        result = run_from_export(setup, request.from_export)
    else:
        result = run_export_test(setup)
    target = request.evidence_dir or (ws.evidence_dir if ws else Path("evidence"))
    return RecordedRun(record=result.record, written=ev.write(result.record, target))
