"""`gpudecide status`: where the workspace stands and what to do next (`gpudecide.status`,
imported by the command when it runs: it reads the ledger and every package's rules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from gpudecide.console import JsonOpt, WorkspaceOpt, emit_json, guard, open_workspace, out
from gpudecide.i18n import N_, translator
from gpudecide.ledger_cli import FRESHNESS
from gpudecide.message import render

if TYPE_CHECKING:
    from gpudecide.status import Status

__all__ = [
    "DECISIONS",
    "STATES",
    "register",
    "status",
]

_ = translator("report")

STATES = {
    "filled": N_("filled"),
    "to_fill": N_("placeholders to fill"),
    "template": N_("template, not filled"),
    "missing": N_("missing"),
}
DECISIONS = {
    "decided": N_("decided"),
    "provisional": N_("provisional"),
    "tie": N_("tie"),
    "no_option_passes": N_("no option passes"),
}


def status(workspace_dir: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """Where the workspace stands: inputs filled or not, evidence, what the decision lacks
    most and the command or file for each (nothing is written)."""
    from gpudecide.status import workspace_status

    with guard(as_json):
        ws = open_workspace(workspace_dir, required=True)
        assert ws is not None
        found = workspace_status(ws)
    if as_json:
        emit_json(found.as_dict())
        return
    _print(found)


def _print(found: Status) -> None:
    from rich.table import Table

    table = Table(_("input"), _("state"), _("placeholders left"), box=None)
    for row in found.inputs:
        table.add_row(row["file"], _(STATES[row["state"]]), str(row["placeholders"]))
    out.print(table)
    for log in found.logs:
        if not log["present"]:
            out.print(
                _("{setting}: {path} is not there").format(
                    setting=log["setting"], path=log["path"]
                ),
                markup=False,
            )
    counts = ", ".join(f"{_(FRESHNESS.get(k, k))} {n}" for k, n in sorted(found.evidence.items()))
    out.print(_("evidence: {counts}").format(counts=counts or _("none yet")), markup=False)
    for kind, command in found.not_run:
        out.print(
            _("next: {command} (no `{kind}` evidence yet)").format(command=command, kind=kind),
            markup=False,
        )
    if found.blocked is not None:
        out.print(
            _("the decision cannot be assessed yet: {why}").format(why=found.blocked.one_line()),
            markup=False,
        )
        return
    decision = _(DECISIONS.get(found.decision or "", found.decision or ""))
    if found.leading:
        decision = _("{status}: {option} leads").format(status=decision, option=found.leading)
    out.print(_("decision: {status}").format(status=decision), markup=False)
    for action in found.next_actions:
        out.print(
            _("next: {command} ({settles})").format(
                command=action["command"], settles=render(action["settles"])
            ),
            markup=False,
        )


def register(app: typer.Typer) -> None:
    """Add `status` to the app."""
    app.command("status")(status)
