"""`gpudecide drill` and `gpudecide cordon`: game days and the auto-cordon rule (SPEC G1-G4).

    gpudecide drill NAME|all [--storage URL] [--executor local|slurm] [--option ID]
    gpudecide cordon [TELEMETRY...] [--rules cordon.yaml] [--option ID] [--apply]

Each command is its options, one library call (`drill_run.run_drills`,
`cordon_run.run_cordon`) and one presenter (JSON, or lines for people in the reader's
language). The main CLI adds both with `register(app)`; errors and the JSON output come
from `gpudecide.console`. Exit 0: all passed / nothing to exclude; 1: a drill failed, a
command run by `--apply` failed, or the breaker held nodes back; 2: bad input.
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
from gpudecide.drills.names import DRILLS
from gpudecide.drills.words import word
from gpudecide.fmt import digits
from gpudecide.i18n import N_, translator
from gpudecide.message import render
from gpudecide.report.i18n import notes_of, summary_of

if TYPE_CHECKING:
    from gpudecide.drills import cordon_run, drill_run
    from gpudecide.drills.cordon_figures import NodeFigures

__all__ = ["register"]

_ = translator("drills")


_CORDON_HEADERS = (N_("node"), N_("gpu"), N_("pci bus"), N_("action"), N_("reasons"))


def _print_cordon(run: cordon_run.CordonRun) -> None:
    """The decision's lines for people: summary, GPUs, commands per node, notes."""
    out.print(summary_of(run.record), markup=False)
    from rich.table import Table

    table = Table(*(_(h) for h in _CORDON_HEADERS), box=None)
    for g in run.figures.gpus:
        table.add_row(
            g.node,
            "" if g.gpu.index is None else str(g.gpu.index),
            g.gpu.pci_bus_id or "",
            word(g.action),
            "; ".join(render(r.message) for r in g.reasons) or "-",
        )
    out.print(table)
    for n in run.figures.nodes:
        _print_node(n, run.figures.applied)
    for note in notes_of(run.record):
        out.print(_("note: {text}").format(text=note), markup=False)
    if run.written:
        print_written(run.written)


def _emit_cordon(run: cordon_run.CordonRun, as_json: bool) -> None:
    """The decision as JSON or lines for people; exit 1 when the breaker held a node back
    or a command run by `--apply` failed."""
    if as_json:
        emit_json(run.as_json())
    else:
        _print_cordon(run)
    code = run.exit_code()
    if code:
        raise typer.Exit(code)


def _print_node(n: NodeFigures, applied: bool) -> None:
    """One node's commands (with what ran) and the operator's next steps."""
    ran = _("run") if applied else _("would run")
    if n.breaker == "bypassed":
        # Let through beyond the breaker's share: say so, and whether it ran.
        state = _("{why}; {state}").format(why=word("bypassed"), state=ran)
    else:
        state = ran if n.breaker == "allowed" else word("held")
    for cmd in n.commands:
        # Russian and Kazakh put the command on a line of its own: it is copied and run as it
        # is, its English Reason= included.
        line = _("{node}: {state}: {command}").format(node=n.node, state=state, command=cmd)
        out.print(line, markup=False)
    for r in n.results:
        out.print(f"  rc={r.rc} {render(r.message) if r.message else r.output}", markup=False)
    for step in n.follow_up_messages:
        out.print(_("{node}: then: {step}").format(node=n.node, step=render(step)), markup=False)


_DRILL_HEADERS = (
    N_("drill"), N_("verdict"), N_("noticed"), N_("data kept"), N_("explained"),
    N_("resumed from"), N_("lost steps"), N_("lost s"),
)  # fmt: skip


def _print_drills(run: drill_run.DrillRun) -> None:
    """The game day's table, each drill's status and journal, the records written."""
    from rich.table import Table

    table = Table(*(_(h) for h in _DRILL_HEADERS), box=None)
    for r in run.results:
        table.add_row(
            r.drill,
            word(r.verdict),
            _yes(r.noticed),
            _yes(r.data_kept),
            _yes(r.explained),
            "-" if r.resumed_from_step is None else str(r.resumed_from_step),
            "-" if r.lost_steps is None else str(r.lost_steps),
            # Seconds as the table always showed them (`:g`), in the reader's digits.
            "-" if r.lost_seconds is None else digits(f"{r.lost_seconds:g}"),
        )
    out.print(table)
    for r in run.results:
        out.print(f"{r.drill}: {render(r.status_message)}", markup=False)
        out.print(_("  journal: {path}").format(path=r.journal), markup=False)
    if run.option is None:
        out.print(
            _("note: no option named (--option or drills.yaml): the evidence counts for none")
        )
    for p in run.evidence:
        print_written(p)


def _emit_drills(run: drill_run.DrillRun, which: str, as_json: bool) -> None:
    """The game day as JSON or lines for people; exit 1 when a drill failed."""
    if as_json:
        emit_json(run.as_json(which))
    else:
        _print_drills(run)
    if not run.passed:
        raise typer.Exit(1)


def _yes(flag: bool) -> str:
    """A G4 answer in the table: a missing one stands out (NO)."""
    return _("yes") if flag else _("NO")


def register(app: typer.Typer) -> None:
    """Add the `drill` and `cordon` commands to the main CLI app."""
    _register_drill(app)
    _register_cordon(app)


def _register_drill(app: typer.Typer) -> None:
    @app.command("drill")
    def drill_cmd(
        name: Annotated[
            str,
            typer.Argument(metavar="NAME|all", help=f"{' | '.join(DRILLS)} | all"),
        ] = "all",
        storage: Annotated[
            str | None,
            typer.Option(
                metavar="URL",
                help="External checkpoint storage: a folder, s3://BUCKET/PREFIX (credentials "
                "and endpoint from the environment; storage-revoked revokes access on a local "
                "S3 API server), or `node` (the node's own disk).",
            ),
        ] = None,
        executor: Annotated[
            str | None, typer.Option(metavar="local|slurm", help="Where the job runs.")
        ] = None,
        option: Annotated[
            str | None, typer.Option(metavar="ID", help="Option (contour) drilled.")
        ] = None,
        evidence_dir: Annotated[
            Path | None, typer.Option(help="Where to write the evidence records.")
        ] = None,
        workspace_dir: WorkspaceOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Game day: break something real under the training job (SPEC G1, G4)."""
        with guard(as_json):
            ws = open_workspace(workspace_dir, required=False)
            # Imported here: the drills' training job needs torch, which every other command
            # (and `--help`) should not wait for.
            from gpudecide.drills import drill_run

            run = drill_run.run_drills(
                name,
                ws=ws,
                storage=storage,
                executor=executor,
                option=option,
                evidence_dir=evidence_dir,
            )
        _emit_drills(run, name, as_json)


def _register_cordon(app: typer.Typer) -> None:
    @app.command("cordon")
    def cordon_cmd(
        telemetry: Annotated[
            list[Path] | None,
            typer.Argument(
                metavar="[TELEMETRY...]",
                help="nvidia-smi CSV (--query-gpu / --query-remapped-rows), dcgm-exporter "
                "text, dcgmi dmon output or kernel logs with NVRM Xid lines; files or "
                "folders (default: the workspace's telemetry/).",
            ),
        ] = None,
        rules: Annotated[
            Path | None,
            typer.Option(metavar="RULES.YAML", help="Rules (default: cordon.yaml, else built-in)."),
        ] = None,
        node: Annotated[
            str | None,
            typer.Option(help="Node of files whose name and lines do not say it."),
        ] = None,
        do_apply: Annotated[
            bool, typer.Option("--apply", help="Run the drain/cordon commands (else only print).")
        ] = False,
        audit: Annotated[
            Path | None, typer.Option(help="Audit trail file (default: audit/cordon.jsonl).")
        ] = None,
        evidence_dir: Annotated[
            Path | None, typer.Option(help="Where to write the evidence record.")
        ] = None,
        option: Annotated[
            str | None,
            typer.Option(
                metavar="ID", help="Option whose nodes the telemetry is from (else cordon.yaml's)."
            ),
        ] = None,
        workspace_dir: WorkspaceOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Decide per GPU: ok / watch / cordon / drain-and-reset / replace (SPEC G2, G3)."""
        with guard(as_json):
            ws = open_workspace(workspace_dir, required=False)
            from gpudecide.drills import cordon_run

            run = cordon_run.run_cordon(
                list(telemetry or []),
                ws=ws,
                rules_path=rules,
                node=node,
                do_apply=do_apply,
                evidence_dir=evidence_dir,
                audit_path=audit,
                option=option,
            )
        _emit_cordon(run, as_json)
