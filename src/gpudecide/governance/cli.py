"""`gpudecide check ...`: the governance checks as commands (SPEC R, I, A8, H2).

    gpudecide check raci            raci.yaml: ownership per option
    gpudecide check standard-path   raci.yaml `standard_path`: fit (R4) and control (R5)
    gpudecide check isolation       isolation.yaml: threat model, boundaries, OSCAL export
    gpudecide check residency       gpudecide.yaml matrix.residency against option sites
    gpudecide check secrets PATH... credentials in logs and configs, values masked

`check_app` is the `check` group; other packages add their own checks to it (the hybrid
check). `register(app)` adds the group to the main CLI. Exit 0: no stop factor; 1: a
finding stops an option (secrets: a credential was found); 2: bad input.

Each command imports the checks (`gpudecide.governance.checks`) when it runs, so that
registering the group loads none of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

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
from gpudecide.governance import messages
from gpudecide.i18n import N_, translator
from gpudecide.report.i18n import notes_of, summary_of

if TYPE_CHECKING:
    from gpudecide.governance.checks import CheckRun
    from gpudecide.workspace import Workspace

__all__ = [
    "EXTRA_LABELS",
    "FileOpt",
    "check_app",
    "isolation_cmd",
    "raci_cmd",
    "register",
    "residency_cmd",
    "secrets_cmd",
    "standard_path_cmd",
]

_ = translator("governance")

check_app = typer.Typer(
    help="Governance checks: ownership, isolation, residency, standard path, secrets.",
    no_args_is_help=True,
)

FileOpt = Annotated[
    Path | None,
    typer.Option("--file", "-f", help="Input file (default: the one in the workspace)."),
]

# Files a check writes beside its record, as the commands name them.
EXTRA_LABELS = {"oscal": N_("oscal: {path}")}


def _workspace(path: Path | None) -> Workspace:
    ws = open_workspace(path, required=True)
    assert ws is not None  # required=True raises instead of returning None
    return ws


def _print(run: CheckRun) -> None:
    """The run's lines for people, in the reader's language."""
    record = run.record
    title, summary = _(record.title), summary_of(record)
    out.print(_("{title}: {summary}").format(title=title, summary=summary), markup=False)
    stop = _("STOP")
    for f in run.findings:
        mark = f"{stop} " if f.stop else ""
        who = f"{f.option}: " if f.option else ""
        out.print(f"  {mark}{who}{messages.render(f.id, f.params)} [{f.spec}]", markup=False)
    for note in notes_of(record):
        out.print(_("note: {text}").format(text=note), markup=False)
    if run.written:
        print_written(run.written)
    for name, p in run.extra.items():
        label = _(EXTRA_LABELS[name]) if name in EXTRA_LABELS else f"{name}: {{path}}"
        out.print(label.format(path=p), markup=False)


def _emit(run: CheckRun, as_json: bool, exit_on_stop: bool = True) -> None:
    """Print the run (JSON or lines for people); exit 1 when it stops an option."""
    record = run.record
    if as_json:
        body: dict[str, Any] = {
            "kind": record.kind,
            "verdict": record.verdict,
            "summary": record.summary,
            **record.figures,
            "notes": record.notes,
            "evidence": str(run.written) if run.written else None,
        }
        body.update({name: str(p) for name, p in run.extra.items()})
        emit_json(body)
    else:
        _print(run)
    if exit_on_stop and (run.stopped or record.verdict == "fail"):
        raise typer.Exit(1)


@check_app.command("raci")
def raci_cmd(
    file: FileOpt = None, workspace_dir: WorkspaceOpt = None, as_json: JsonOpt = False
) -> None:
    """Ownership per option: Accountable, vendors, R1 duties, on-call, bus factor (R1-R3, G3)."""
    from gpudecide.governance import checks

    with guard(as_json):
        ws = _workspace(workspace_dir)
        run = checks.run_raci(ws, file)
    _emit(run, as_json)


@check_app.command("standard-path")
def standard_path_cmd(
    file: FileOpt = None, workspace_dir: WorkspaceOpt = None, as_json: JsonOpt = False
) -> None:
    """What the work needs against what each option supports; control, not SSH (R4, R5)."""
    from gpudecide.governance import checks

    with guard(as_json):
        ws = _workspace(workspace_dir)
        run = checks.run_standard_path(ws, file)
    _emit(run, as_json)


@check_app.command("isolation")
def isolation_cmd(
    file: FileOpt = None, workspace_dir: WorkspaceOpt = None, as_json: JsonOpt = False
) -> None:
    """Threat model and boundaries per option, NIST SP 800-53 coverage, OSCAL export (I1-I6)."""
    from gpudecide.governance import checks

    with guard(as_json):
        ws = _workspace(workspace_dir)
        run = checks.run_isolation(ws, file)
    _emit(run, as_json)


@check_app.command("residency")
def residency_cmd(workspace_dir: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """Where each option stores, processes and backs up data, against matrix.residency (I7)."""
    from gpudecide.governance import checks

    with guard(as_json):
        ws = _workspace(workspace_dir)
        run = checks.run_residency(ws)
    _emit(run, as_json)


@check_app.command("secrets")
def secrets_cmd(
    paths: Annotated[
        list[Path], typer.Argument(metavar="PATH...", help="Log or config files, or folders.")
    ],
    option: Annotated[
        str, typer.Option(help="Option id whose logs these are (scores its isolation).")
    ] = "",
    workspace_dir: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Credentials in logs and configs (cloud keys, tokens, private keys, URL passwords).

    Reports file:line and the detector; the value is masked, never printed (I3). Inside a
    workspace the result is written as evidence.
    """
    from gpudecide.governance import checks

    with guard(as_json):
        ws = open_workspace(workspace_dir, required=bool(option))
        if ws is None:
            language()  # outside a workspace: --lang or $GPUDECIDE_LANG
        run = checks.run_secrets(paths, ws, option)
    _emit(run, as_json)


def register(app: typer.Typer) -> None:
    """Add the `check` group to the main CLI app."""
    app.add_typer(check_app, name="check")
