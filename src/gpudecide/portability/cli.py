"""`gpudecide export-test`: the export acceptance test, run for real (SPEC E1-E4, A2, A4).

    gpudecide export-test                          the workspace's export-test.yaml, locally
    gpudecide export-test --executor slurm         every job an sbatch job, sacct recorded
    gpudecide export-test --executor k8s --dry-run Job manifests, validated, not run
    gpudecide export-test --from-export DIR --option ID
                                                   steps 5-6 on the export option ID's
                                                   vendor gave (as a team receives it)

Exit 0: the test passed (or warned); 1: it failed, or could not run (status error: a
fault of the tool or its harness, no verdict on the option); 2: bad input, before any job
starts (plan and its bounds, option id, CUDA asked for and absent, no Slurm, a storage that
does not answer or carries credentials in its URL, an export that is not one). The run
itself is `gpudecide.portability.runs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpudecide.console import (
    JsonOpt,
    WorkspaceOpt,
    emit_json,
    guard,
    open_workspace,
    out,
    print_written,
)
from gpudecide.i18n import translator
from gpudecide.portability import PLAN_NAME

if TYPE_CHECKING:
    from gpudecide.portability.runs import K8sManifests, RecordedRun

__all__ = [
    "Choice",
    "export_test_cmd",
    "register",
]

_ = translator("portability")
_n = _.n

Choice = Annotated[str | None, typer.Option(help="cpu | cuda (default: the plan's).")]


def register(app: typer.Typer) -> None:
    """Add `export-test` to the main app."""
    app.command("export-test")(export_test_cmd)


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
    option: Annotated[
        str | None,
        typer.Option(
            "--option",
            help="The option whose export it is (declared in gpudecide.yaml; default: the plan's).",
        ),
    ] = None,
    secret: Annotated[
        str | None,
        typer.Option(
            help="k8s: the Secret the storage credentials come from (default: "
            "gpudecide-export-storage)."
        ),
    ] = None,
    workspace_dir: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Train, checkpoint, export, delete, restore elsewhere, resume, compare (E1, E3, E4)."""
    from gpudecide.portability.runs import ExportTestRequest, K8sManifests, run

    request = ExportTestRequest(
        plan=plan,
        storage=storage,
        storage_options=list(storage_option or []),
        executor=executor,
        dry_run=dry_run,
        device=device,
        resume_device=resume_device,
        from_export=from_export,
        image=image,
        out_file=out_file,
        keep_work=keep_work,
        evidence_dir=evidence_dir,
        option=option,
        secret=secret,
    )
    with guard(as_json):
        outcome = run(request, open_workspace(workspace_dir, required=False))
    if isinstance(outcome, K8sManifests):
        _print_manifests(outcome, as_json)
        failed = bool(outcome.invalid)
    else:
        _print_run(outcome, as_json)
        failed = outcome.failed
    if failed:
        raise typer.Exit(1)


def _print_run(done: RecordedRun, as_json: bool) -> None:
    """The steps, the verdict and its reasons, in the reader's language (--json: the figures)."""
    if as_json:
        body = done.record.figures
        body = {k: v for k, v in body.items() if k not in ("reference_curve", "resumed_curve")}
        emit_json({**body, "evidence": str(done.written)})
        return
    from rich.table import Table

    from gpudecide.portability.figures import figures_of
    from gpudecide.portability.report import reasons_in
    from gpudecide.portability.texts import (
        artifacts_word,
        executor_word,
        say_stored,
        status_word,
        step_label,
    )
    from gpudecide.report.i18n import summary_of

    f = figures_of(done.record)
    table = Table(_("step"), _("status"), _("started (UTC)"), _("detail"), box=None)
    for s in f.steps:
        detail = say_stored(s.detail, s.detail_message)
        table.add_row(step_label(s.name), status_word(s.status), s.started_at, detail)
    out.print(table)
    verdict = status_word("error" if f.status == "error" else f.verdict)
    out.print(f"{verdict.upper()}: {summary_of(done.record)}", markup=False)
    for reason in reasons_in(f):
        out.print(_("reason: {text}").format(text=reason), markup=False)
    if f.contour is not None:
        c = f.contour
        where = c.cluster or c.context or c.host or "-"
        line = _("ran as {executor} (`{where}`); storage {storage}; artifacts: {whose}")
        shown = line.format(
            executor=executor_word(c.executor),
            where=where,
            storage=c.storage or "-",
            whose=artifacts_word(c.artifacts),
        )
        out.print(shown, markup=False)
    sample = f.throughput.sample
    if sample is not None and not sample.measured and sample.command:
        said = _("to measure the storage throughput: {command}").format(command=sample.command)
        out.print(said, markup=False)
    print_written(done.written)


def _print_manifests(k8s: K8sManifests, as_json: bool) -> None:
    """Where the Job manifests went and whether each is valid (--json: the same as data)."""
    if as_json:
        emit_json(
            {
                "dry_run": True,
                "manifests": str(k8s.target),
                "jobs": list(k8s.errors),
                "valid": not k8s.invalid,
                "errors": k8s.invalid,
                "storage": k8s.storage,
            }
        )
        return
    n = len(k8s.errors)
    line = _n("{n} Job manifest -> {target}", "{n} Job manifests -> {target}", n)
    out.print(line.format(n=n, target=k8s.target), markup=False)
    for name, errs in k8s.errors.items():
        state = _("valid") if not errs else "; ".join(errs)
        out.print(f"{name}: {state}", markup=False)
    if "://" not in k8s.storage:
        local = _("note: storage {url} is a local folder; a pod cannot see it")
        out.print(local.format(url=k8s.storage), markup=False)
