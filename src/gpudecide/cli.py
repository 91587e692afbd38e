"""Command line: builds the app, registers every package's commands, and holds the commands
that span packages (init, report, demo). Exit 0 ok, 1 a check failed, 2 bad input.
`assess` is the decision package's (`decision.cli`): it reads every package's evidence
through the one registry of rules.

Each analysis package registers its own commands from its `cli.py`; a new analysis adds one
`register` line below. Registering loads no analysis: each command imports its library (and
the heavy libraries behind it, DuckDB, Arrow, matplotlib, Jinja2) inside its body, so that
`--help` and every other command start without them (issue 25, tests/test_startup.py).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated

import typer

from gpudecide import tool_version
from gpudecide.artifacts.cli import register as register_artifacts
from gpudecide.attest.cli import register as register_attest
from gpudecide.console import (
    AuthorOpt,
    JsonOpt,
    LangOpt,
    WorkspaceOpt,
    choose_language,
    emit_json,
    guard,
    language,
    open_workspace,
    out,
    run_app,
)
from gpudecide.cost.cli import register as register_cost
from gpudecide.decision.cli import print_assessment
from gpudecide.decision.cli import register as register_decision
from gpudecide.drills.cli import register as register_drills
from gpudecide.errors import InputError
from gpudecide.governance.cli import check_app
from gpudecide.governance.cli import register as register_governance
from gpudecide.i18n import current_language, translator
from gpudecide.jobs.cli import register as register_jobs
from gpudecide.ledger_cli import register as register_ledger
from gpudecide.option_cli import register as register_option
from gpudecide.portability.cli import register as register_portability
from gpudecide.queue.cli import register as register_queue
from gpudecide.report.i18n import N_, summary_of
from gpudecide.status_cli import register as register_status

if TYPE_CHECKING:
    from gpudecide.i18n import Language
    from gpudecide.workspace import Workspace

__all__ = ["REPORT_FILES", "app", "demo", "init", "main", "report"]


_ = translator("report")

# What `report` and `demo` wrote, by the key build_report returns (English: the key itself).
REPORT_FILES = {
    "html": N_("html"),
    "markdown": N_("markdown"),
    "json": N_("json"),
    "pdf": N_("pdf"),
}
app = typer.Typer(
    name="gpudecide",
    help="Decide where to fine-tune (dedicated GPUs, a managed endpoint or a hybrid) "
    "from evidence your team produces itself.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"gpudecide {tool_version()}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
    author: AuthorOpt = None,
    lang: LangOpt = None,
) -> None:
    """gpudecide: evidence for the GPU decision."""
    choose_language(lang)
    from gpudecide.author import set_author  # pydantic loads with a command that runs

    with guard(False):
        set_author(author)


@app.command()
def init(
    directory: Annotated[Path, typer.Argument(help="Folder to create the workspace in.")],
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            help="An option to compare, as ID:KIND, KIND one of owned | rented | managed | "
            "hybrid; repeatable. Every template file is written for these ids.",
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Overwrite template files that exist.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Create a commented template workspace (gpudecide.yaml, logs/, evidence/, report/)."""
    with guard(as_json):
        from gpudecide import workspace
        from gpudecide.scaffold import parse_option

        specs = [parse_option(text) for text in option or []]
        written = workspace.init(directory, force=force, options=specs)
    if as_json:
        emit_json({"workspace": str(directory), "written": [str(p) for p in written]})
        return
    out.print(_("workspace created in {path}").format(path=directory))
    for p in written:
        out.print(f"  {p}")
    out.print(_("next: put your job logs in logs/, edit gpudecide.yaml, run `gpudecide profile`"))


def _build_report(
    ws: Workspace,
    out_dir: Path | None = None,
    language: Language | None = None,
    *,
    pdf: bool = False,
) -> dict[str, Path]:
    """`gpudecide.sections.build_report`, imported when a report is written: it holds every
    section and the renderer."""
    from gpudecide.sections import build_report

    return build_report(ws, out_dir, language, pdf=pdf)


# Each package's commands, in the order `--help` lists them.
register_jobs(app)  # `profile`, `columns` (SPEC F1-F3, C2)
register_queue(app)  # `queue`, `replay` (SPEC Q1-Q5, C8, D3)
register_cost(app)  # `cost` (SPEC C1-C10, V2)
register_artifacts(app)  # `hash`, `manifest ...`, `audit` (SPEC A1-A8, E2, E5)
register_portability(app)  # `export-test` (SPEC E1-E4, A2, A4)
register_drills(app)  # `drill`, `cordon` (SPEC G1-G4)
register_decision(app, check_app)  # `assess` (D1-D5, V1-V2), `check hybrid` (H1-H3)
register_governance(app)  # `check raci|standard-path|isolation|residency|secrets` (R, I)
register_attest(app, lambda ws: _build_report(ws, None, current_language()))  # sign, verify
register_ledger(app)  # `evidence` (the records and their freshness)
register_option(app)  # `option add`
register_status(app)  # `status`: what is filled, what the decision lacks most


@app.command()
def report(
    workspace_dir: WorkspaceOpt = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Folder to write to.")] = None,
    pdf: Annotated[
        bool, typer.Option("--pdf", help="Also write report.pdf for the archive (WeasyPrint).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Write report/index.html, report.md and report.json from the workspace's evidence."""
    with guard(as_json):
        ws = open_workspace(workspace_dir, required=True)
        assert ws is not None
        paths = _build_report(ws, out_dir, language(ws), pdf=pdf)
    if as_json:
        emit_json({k: str(v) for k, v in paths.items()})
        return
    _print_report_paths(paths)


def _print_report_paths(paths: dict[str, Path]) -> None:
    for kind, path in paths.items():
        out.print(f"{_(REPORT_FILES.get(kind, kind))}: {path}", markup=False)


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the demo workspace.")] = Path(
        "gpudecide-demo"
    ),
    force: Annotated[bool, typer.Option(help="Reuse a folder that is not empty.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Build the demo workspace (a fictional team, 8 weeks of sacct log) and its report."""
    with guard(as_json):
        demo_mod = _demo_module()
        ws = demo_mod.create(out_dir, force=force)
        result = demo_mod.run(ws)
        paths = _build_report(ws, language=language(ws))
    from gpudecide import evidence as ev

    records = [ev.load(p) for p in result.evidence]
    if as_json:
        emit_json(
            {
                "workspace": str(out_dir),
                "evidence": [str(p) for p in result.evidence],
                "report": {k: str(v) for k, v in paths.items()},
                "summaries": {r.id: r.summary for r in records},
                "decision": result.decision.figures()["decision"],
            }
        )
        return
    for kind in ("profile", "queue", "replay", "cost", "audit"):
        for record in (r for r in records if r.kind == kind):
            out.print(summary_of(record), markup=False)
    print_assessment(result.decision)
    out.print(_("demo workspace: {path}").format(path=out_dir), markup=False)
    _print_report_paths(paths)


def _demo_module() -> ModuleType:
    """The demo, which trains small models: without PyTorch it says how to get it."""
    try:
        from gpudecide import demo
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise
        raise InputError(
            "the demo trains small models (export test, drills) and needs PyTorch",
            hint="pip install 'gpudecide[train]' (scripts/setup does)",
        ) from None
    return demo


def main() -> None:
    """Run the command line in this process: one-line usage and output errors, no traceback
    (the console script is `gpudecide.program.main`, which adds the process's settings)."""
    run_app(app)
