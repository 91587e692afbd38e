"""`gpudecide evidence`: the records of the workspace, which of them stand and whether each
still matches its inputs (the ledger, `gpudecide.ledger`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gpudecide import fmt
from gpudecide.console import JsonOpt, WorkspaceOpt, emit_json, guard, open_workspace, out
from gpudecide.i18n import translator
from gpudecide.report.i18n import N_, problems_of, verdict_label

__all__ = ["FRESHNESS", "evidence_cmd", "register"]

_ = translator("report")

# The freshness words of `gpudecide evidence` (the record states and the two list states).
FRESHNESS = {
    "fresh": N_("fresh"),
    "stale": N_("stale"),
    "missing_input": N_("an input is gone"),
    "bad_input": N_("an input cannot be read"),
    "tampered": N_("tampered"),
    "superseded": N_("superseded"),
    "damaged": N_("damaged"),
}


def evidence_cmd(
    workspace_dir: WorkspaceOpt = None,
    prune: Annotated[
        bool, typer.Option("--prune", help="Delete superseded records no current record cites.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """List evidence records and whether each still matches its inputs (exit 1 if not).

    A record a newer one of the same check replaces is `superseded`: listed apart, never
    mixed with the current ones, and deleted with --prune. A damaged record is listed with
    its reason and the rest are still checked.
    """
    from gpudecide import evidence as ev
    from gpudecide import ledger

    with guard(as_json):
        ws = open_workspace(workspace_dir, required=True)
        assert ws is not None
        snapshot = ev.Snapshot(ws.root)
        records, damaged = snapshot.scan(ws.evidence_dir)
        removed = ledger.prune(ws.evidence_dir, records, ws.config.options) if prune else []
        if removed:
            snapshot = ev.Snapshot(ws.root)  # the folder changed: another moment
            records, damaged = snapshot.scan(ws.evidence_dir)
        rows = ledger.ledger_rows(records, damaged, ws.root, ws.config.options, snapshot)
    bad = [r for r in rows if r["freshness"] not in ("fresh", "superseded")]
    if as_json:
        shown = [{k: v for k, v in r.items() if k != "said"} for r in rows]
        emit_json({"records": shown, "all_fresh": not bad, "pruned": [str(p) for p in removed]})
    else:
        _print_evidence(rows, bad, removed)
    if bad:
        raise typer.Exit(1)


def _print_evidence(
    rows: list[dict[str, Any]], bad: list[dict[str, Any]], removed: list[Path]
) -> None:
    heads = (N_("id"), N_("kind"), N_("verdict"), N_("created"), N_("freshness"))
    from rich.table import Table

    table = Table(*(_(h) for h in heads), box=None)
    for r in rows:
        table.add_row(
            str(r["id"]),
            str(r["kind"]),
            "None" if r["verdict"] is None else verdict_label(str(r["verdict"])),
            "None" if r["created_at_utc"] is None else fmt.moment(str(r["created_at_utc"])),
            _(FRESHNESS.get(r["freshness"], r["freshness"])),
        )
    out.print(table if rows else _("no evidence records yet"))
    for r in bad:
        for problem in problems_of(r["said"]):
            out.print(f"{r['id']}: {problem}", markup=False)
    for path in removed:
        out.print(_("pruned: {path}").format(path=path), markup=False)


def register(app: typer.Typer) -> None:
    """Add `evidence` to the app."""
    app.command("evidence")(evidence_cmd)
