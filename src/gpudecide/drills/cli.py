"""`gpudecide drill` and `gpudecide cordon`: game days and the auto-cordon rule (SPEC G1-G4).

    gpudecide drill NAME|all [--storage URL] [--executor local|slurm] [--option ID]
    gpudecide cordon [TELEMETRY...] [--rules cordon.yaml] [--apply]

The main CLI adds both with `register(app)`; errors, exit codes and JSON come from
`gpudecide.console`. Exit 0: all passed / nothing to exclude; 1: a drill failed, a command
run by `--apply` failed, or the breaker held nodes back; 2: bad input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from gpudecide.console import (
    JsonOpt,
    WorkspaceOpt,
    emit_json,
    guard,
    language,
    open_workspace,
    out,
    print_written,
)
from gpudecide.drills import cordon_run, report
from gpudecide.i18n import Language, translator
from gpudecide.report.fmt import localize_digits
from gpudecide.report.i18n import N_, say

if TYPE_CHECKING:
    from gpudecide.drills import drill_run
from gpudecide.drills.names import DRILLS
from gpudecide.errors import InputError

_ = translator("drills")


_CORDON_HEADERS = (N_("node"), N_("gpu"), N_("pci bus"), N_("action"), N_("reasons"))


def _print_cordon(run: cordon_run.CordonRun, lang: Language) -> None:
    out.print(cordon_run.summary_line(run.figures, lang), markup=False)
    table = Table(*(_(h, lang) for h in _CORDON_HEADERS), box=None)
    for g in run.figures["gpus"]:
        table.add_row(
            g["node"],
            "" if g["gpu"]["index"] is None else str(g["gpu"]["index"]),
            g["gpu"]["pci_bus_id"] or "",
            _word(g["action"], lang),
            "; ".join(say(r["reason"], r.get("message"), lang, ("drills",)) for r in g["reasons"])
            or "-",
        )
    out.print(table)
    for n in run.figures["nodes"]:
        _print_node(n, bool(run.figures["applied"]), lang)
    said = run.result.note_messages
    for i, note in enumerate(run.result.notes):
        text = say(note, said[i] if len(said) == len(run.result.notes) else None, lang)
        out.print(_("note: {text}", lang).format(text=text), markup=False)
    if run.written:
        print_written(run.written, lang)


def _print_node(n: dict[str, Any], applied: bool, lang: Language) -> None:
    """One node's commands (with what ran) and the operator's next steps."""
    if n["breaker"] == "allowed":
        state = _("run", lang) if applied else _("would run", lang)
    else:
        state = _("held by the circuit breaker", lang)
    for cmd in n["commands"]:
        if lang == "en":
            out.print(f"{n['node']}: {state}: {cmd}", markup=False)
        else:
            # The command on a line of its own: it is copied and run as it is (English Reason=).
            out.print(f"{n['node']}: {state}:", markup=False)
            out.print(f"  {cmd}", markup=False)
    for r in n["results"]:
        out.print(f"  rc={r['rc']} {r['output']}", markup=False)
    said = n.get("follow_up_messages") or []
    for i, step in enumerate(n["follow_up"]):
        text = say(step, said[i] if i < len(said) else None, lang, ("drills",))
        out.print(_("{node}: then: {step}", lang).format(node=n["node"], step=text), markup=False)


def _cordon_exit(run: cordon_run.CordonRun) -> int:
    held = any(n["breaker"] == "held" for n in run.figures["nodes"])
    failed = any(r["rc"] != 0 for n in run.figures["nodes"] for r in n["results"])
    return 1 if held or failed else 0


_DRILL_HEADERS = (
    N_("drill"), N_("verdict"), N_("noticed"), N_("data kept"), N_("explained"),
    N_("resumed from"), N_("lost steps"), N_("lost s"),
)  # fmt: skip


def _print_drills(run: drill_run.DrillRun, lang: Language) -> None:
    table = Table(*(_(h, lang) for h in _DRILL_HEADERS), box=None)
    for r in run.results:
        table.add_row(
            r.drill,
            r.verdict if lang == "en" else _word(r.verdict, lang),
            _yes(r.noticed, lang),
            _yes(r.data_kept, lang),
            _yes(r.explained, lang),
            "-" if r.resumed_from_step is None else str(r.resumed_from_step),
            "-" if r.lost_steps is None else str(r.lost_steps),
            "-" if r.lost_seconds is None else _seconds(r.lost_seconds, lang),
        )
    out.print(table)
    for r in run.results:
        status = say(r.status, r.status_message, lang, ("drills",))
        out.print(f"{r.drill}: {status}", markup=False)
        out.print(_("  journal: {path}", lang).format(path=r.journal), markup=False)
    if run.option is None:
        out.print(
            _("note: no option named (--option or drills.yaml): the evidence counts for none", lang)
        )
    for p in run.evidence:
        print_written(p, lang)


def _seconds(value: float, lang: Language) -> str:
    """Seconds as the English table always showed them (`:g`), in the reader's digits."""
    return localize_digits(f"{value:g}", lang)


def _yes(flag: bool, lang: Language = "en") -> str:
    if lang == "en":
        return "yes" if flag else "NO"
    return _("yes", lang) if flag else _("NO", lang)


def _word(word: str, lang: Language) -> str:
    """An action or verdict word in the reader's language (the report's words)."""
    return report.word(word, lang)


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
                help="External checkpoint storage: a folder, s3://BUCKET/PREFIX (a local S3 "
                "API server is started for it), or `node` (the node's own disk).",
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
            if executor not in (None, "local", "slurm"):
                raise InputError(
                    f"unknown executor {executor!r}", field="--executor", hint="local or slurm"
                )
            ws = open_workspace(workspace_dir, required=False)
            # Imported here: the drills' training job needs torch, which every other command
            # (and `--help`) should not wait for.
            from gpudecide.drills import drill_run

            run = drill_run.run_drills(
                name,
                ws=ws,
                storage=storage,
                executor=executor,  # type: ignore[arg-type]
                option=option,
                evidence_dir=evidence_dir,
            )
        objs = [
            {**r.as_dict(), "option": run.option, "evidence": str(p)}
            for r, p in zip(run.results, run.evidence, strict=True)
        ]
        if as_json:
            emit_json({"drills": objs} if name == "all" else objs[0])
        else:
            _print_drills(run, language(ws))
        if any(r.verdict != "pass" for r in run.results):
            raise typer.Exit(1)


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
        workspace_dir: WorkspaceOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Decide per GPU: ok / watch / cordon / drain-and-reset / replace (SPEC G2, G3)."""
        with guard(as_json):
            ws = open_workspace(workspace_dir, required=False)
            run = cordon_run.run_cordon(
                list(telemetry or []),
                ws=ws,
                rules_path=rules,
                node=node,
                do_apply=do_apply,
                evidence_dir=evidence_dir,
                audit_path=audit,
            )
        if as_json:
            payload: dict[str, Any] = {
                **run.figures,
                "summary": cordon_run.summary_line(run.figures),
                "verdict": run.verdict,
                "notes": run.result.notes,
                "audit": str(run.audit_path),
                "evidence": str(run.written) if run.written else None,
            }
            emit_json(json.loads(json.dumps(payload, default=str)))
        else:
            _print_cordon(run, language(ws))
        code = _cordon_exit(run)
        if code:
            raise typer.Exit(code)
