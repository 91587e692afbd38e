"""The decision's library call for the CLI (`run_assess`), its human printout, and
`gpudecide check hybrid`.

`gpudecide assess` itself lives in the root `cli.py`: it spans every package's evidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from gpudecide import evidence as ev
from gpudecide.console import JsonOpt, WorkspaceOpt, emit_json, guard, open_workspace, out
from gpudecide.decision import hybrid
from gpudecide.decision.assess import Assessment, assess, evidence_record
from gpudecide.workspace import Workspace


def run_assess(ws: Workspace) -> tuple[Assessment, Path]:
    """Assess the workspace and write the decision record."""
    result = assess(ws)
    return result, ev.write(evidence_record(result, ws), ws.evidence_dir)


def print_assessment(result: Assessment) -> None:
    """Stop factors first, then the ranking, for people."""
    out.print(f"decision: {result.summary}", markup=False)
    for option in result.options:
        for stop in option["stop_factors"]:
            out.print(f"  stop {option['id']}: {stop['id']}: {stop['rule']}", markup=False)
    table = Table("rank", "option", "total /100", "assumed scores", box=None)
    for option in sorted(
        (o for o in result.options if o["standalone"]),
        key=lambda o: (o["rank"] is None, o["rank"] or 0, o["id"]),
    ):
        assumed = sum(1 for c in option["scores"].values() if c["source"] == "assumption")
        table.add_row(
            "stopped" if option["stop_factors"] else str(option["rank"]),
            option["id"],
            "-" if option["total"] is None else f"{option['total']:.0f}",
            str(assumed),
        )
    out.print(table)
    out.print(f"robustness: {result.robustness['verdict']}", markup=False)


def check_hybrid(
    workspace_dir: WorkspaceOpt = None,
    hybrid_file: Annotated[
        Path | None, typer.Option("--file", help="hybrid.yaml (default: the workspace's).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Hybrid contours: one container, checkpoint format, manifest schema and evaluation
    contract, and a stated boundary (H1-H3). Exit 1 when there are findings."""
    with guard(as_json):
        ws = open_workspace(workspace_dir, required=True)
        assert ws is not None
        path = hybrid_file or ws.root / hybrid.HYBRID_NAME
        record = hybrid.check(path, ws.config.options, ws.root)
        written = ev.write(record, ws.evidence_dir)
    if as_json:
        emit_json({**record.figures, "evidence": str(written)})
    else:
        out.print(record.summary, markup=False)
        for h in record.figures["hybrids"]:
            for f in h["findings"]:
                out.print(f"  {h['option']}: {f['id']}: {f['detail']}", markup=False)
        out.print(f"evidence: {written}", markup=False)
    if record.verdict != "pass":
        raise typer.Exit(1)


def register_check(check_app: typer.Typer) -> None:
    """Add `check hybrid` to the `check` command group."""
    check_app.command("hybrid")(check_hybrid)
