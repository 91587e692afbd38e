"""`gpudecide export-test`: the export acceptance test, run for real (SPEC E1-E4, A2, A4).

    gpudecide export-test                          the workspace's export-test.yaml, locally
    gpudecide export-test --executor slurm         every job an sbatch job, sacct recorded
    gpudecide export-test --executor k8s --dry-run Job manifests, validated, not run
    gpudecide export-test --from-export DIR        steps 5-6 on someone else's export

Exit 0: the test passed (or warned); 1: it failed; 2: bad input (plan, option id, CUDA
asked for and absent, no Slurm).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from gpudecide import evidence as ev
from gpudecide.console import (
    JsonOpt,
    WorkspaceOpt,
    emit_json,
    guard,
    open_workspace,
    out,
    print_written,
)
from gpudecide.errors import InputError
from gpudecide.i18n import translator
from gpudecide.inputs import node_line
from gpudecide.options import require_known
from gpudecide.portability.plan import PLAN_NAME, ExportTestPlan, load_plan

_ = translator("portability")
_n = _.n

Choice = Annotated[str | None, typer.Option(help="cpu | cuda (default: the plan's).")]


def register(app: typer.Typer) -> None:
    """Add `export-test` to the main app."""
    app.command("export-test")(export_test_cmd)


def _plan_path(plan: Path | None, ws_root: Path | None) -> Path:
    if plan is not None:
        return plan
    if ws_root is None:
        raise InputError(
            "no plan: pass --plan export-test.yaml, or run inside a workspace",
            hint="`gpudecide init` writes a commented export-test.yaml",
        )
    return ws_root / PLAN_NAME


def _check_option(plan: ExportTestPlan, path: Path, ws: Any) -> None:
    if ws is None:
        return
    root = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    require_known(
        plan.option, ws.config.options, path=path, field="option", line=node_line(root, ("option",))
    )


def _choice(value: str | None, default: str | None, field: str) -> str | None:
    chosen = value if value is not None else default
    if chosen is not None and chosen not in ("cpu", "cuda", "local", "slurm", "k8s"):
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


def export_test_cmd(
    plan: Annotated[
        Path | None,
        typer.Option("--plan", help=f"The plan (default: the workspace's {PLAN_NAME})."),
    ] = None,
    storage: Annotated[
        str | None, typer.Option(help="fsspec URL of the external storage (folder, s3://...).")
    ] = None,
    storage_option: Annotated[
        list[str] | None, typer.Option(help="KEY=VALUE for the storage driver (repeatable).")
    ] = None,
    executor: Annotated[str | None, typer.Option(help="local | slurm | k8s.")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="k8s: write and validate the Job manifests only.")
    ] = False,
    device: Choice = None,
    resume_device: Choice = None,
    from_export: Annotated[
        Path | None, typer.Option("--from-export", help="Run steps 5-6 on this export folder.")
    ] = None,
    image: Annotated[
        str | None, typer.Option(help="k8s: container image (default: the plan's digest).")
    ] = None,
    out_file: Annotated[
        Path | None, typer.Option("--out", help="k8s: where to write YAML.")
    ] = None,
    keep_work: Annotated[
        bool, typer.Option(help="Keep the job specs, logs and restore folder.")
    ] = False,
    evidence_dir: Annotated[Path | None, typer.Option(help="Where to write the record.")] = None,
    workspace_dir: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Train, checkpoint, export, delete, restore elsewhere, resume, compare (E1, E3, E4)."""
    from gpudecide.artifacts import remote
    from gpudecide.portability.from_export import run_from_export
    from gpudecide.portability.scenario import run_export_test
    from gpudecide.portability.storage import open_storage
    from gpudecide.portability.trainer import require_device

    with guard(as_json):
        ws = open_workspace(workspace_dir, required=False)
        ws_root = ws.root if ws else None
        plan_path = _plan_path(plan, ws_root)
        test_plan = load_plan(plan_path)
        _check_option(test_plan, plan_path, ws)
        dev = _choice(device, test_plan.device, "--device") or "cpu"
        rdev = _choice(resume_device, test_plan.resume_device, "--resume-device")
        kind = _choice(executor, test_plan.executor, "--executor") or "local"
        require_device(dev)
        if rdev:
            require_device(rdev)
        options = {**test_plan.storage_options, **remote.parse_options(list(storage_option or []))}
        url = _storage_url(storage, test_plan, plan_path, ws_root)
        if kind == "k8s":
            _k8s(test_plan, url, options, dry_run, image, out_file, ws_root, dev, rdev, as_json)
            return
        if dry_run:
            raise InputError("--dry-run is for --executor k8s", field="--dry-run")
        setup = _setup(test_plan, plan_path, kind, open_storage(url, options), ws_root)
        setup.device, setup.resume_device, setup.keep_work = dev, rdev, keep_work
        if from_export is not None:
            result = run_from_export(setup, from_export)
        else:
            result = run_export_test(setup)
        target = evidence_dir or (ws.evidence_dir if ws else Path("evidence"))
        written = ev.write(result.record, target)
    _print(result.record, written, as_json)
    if result.figures["verdict"] == "fail":
        raise typer.Exit(1)


def _setup(
    plan: ExportTestPlan, plan_path: Path, kind: str, storage: Any, ws_root: Path | None
) -> Any:
    """The run's setup: a run id from the option and the UTC time, its own work folder."""
    from gpudecide.portability import executors as ex
    from gpudecide.portability.scenario import ExportTestSetup

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    run_id = f"{plan.option}-{stamp}"
    runner = ex.SlurmExecutor() if kind == "slurm" else ex.LocalExecutor()
    return ExportTestSetup(
        plan=plan,
        plan_path=plan_path,
        work=(ws_root or Path.cwd()) / ".export-test-work" / run_id,
        storage=storage,
        executor=runner,
        workspace_root=ws_root,
        run_id=run_id,
    )


def _print(record: ev.Evidence, written: Path, as_json: bool) -> None:
    """The steps, the verdict and its reasons, in the reader's language (--json: the figures)."""
    figures = record.figures
    if as_json:
        body = {k: v for k, v in figures.items() if k not in ("reference_curve", "resumed_curve")}
        emit_json({**body, "evidence": str(written)})
        return
    from rich.table import Table

    from gpudecide.portability.report import reasons_in
    from gpudecide.portability.texts import render_detail, status_word, step_label
    from gpudecide.report.i18n import summary_of

    table = Table(_("step"), _("status"), _("started (UTC)"), _("detail"), box=None)
    for s in figures["steps"]:
        table.add_row(
            step_label(s["name"]), status_word(s["status"]), s["started_at"], render_detail(s)
        )
    out.print(table)
    verdict = status_word(figures["verdict"])
    out.print(f"{verdict.upper()}: {summary_of(record)}", markup=False)
    for reason in reasons_in(figures):
        out.print(_("reason: {text}").format(text=reason), markup=False)
    print_written(written)


def _k8s(
    plan: ExportTestPlan,
    url: str,
    options: dict[str, Any],
    dry_run: bool,
    image: str | None,
    out_file: Path | None,
    ws_root: Path | None,
    device: str,
    resume_device: str | None,
    as_json: bool,
) -> None:
    from gpudecide.fsutil import atomic_write_text
    from gpudecide.portability import executors as ex

    if not dry_run:
        raise InputError(
            "running on Kubernetes needs a cluster this tool does not drive",
            field="--executor",
            hint="pass --dry-run to write the Job manifests, then `kubectl apply -f` them",
        )
    chosen = image or plan.identity.container_digest
    if not chosen or "@sha256:" not in chosen:
        raise InputError(
            "a Kubernetes Job needs an image pinned by digest",
            field="--image",
            hint="pass --image registry/name@sha256:<64 hex>, or set identity.container_digest",
        )
    docs = ex.k8s_export_jobs(plan, url, options, chosen, device, resume_device)
    errors = {d["metadata"]["name"]: ex.validate_k8s_job(d) for d in docs}
    target = out_file or (ws_root or Path.cwd()) / "export-test-k8s.yaml"
    text = ex.K8S_HEADER + "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)
    atomic_write_text(target, text)
    bad = {k: v for k, v in errors.items() if v}
    if as_json:
        emit_json(
            {
                "dry_run": True,
                "manifests": str(target),
                "jobs": list(errors),
                "valid": not bad,
                "errors": bad,
                "storage": url,
            }
        )
    else:
        line = _n("{n} Job manifest -> {target}", "{n} Job manifests -> {target}", len(docs))
        out.print(line.format(n=len(docs), target=target), markup=False)
        for name, errs in errors.items():
            state = _("valid") if not errs else "; ".join(errs)
            out.print(f"{name}: {state}", markup=False)
        if "://" not in url:
            local = _("note: storage {url} is a local folder; a pod cannot see it")
            out.print(local.format(url=url), markup=False)
    if bad:
        raise typer.Exit(1)
