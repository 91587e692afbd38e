"""The decision's library call for the CLI (`run_assess`) and its human printout.

`gpudecide assess` itself lives in the root `cli.py`: it spans every package's evidence.
"""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from gpudecide import evidence as ev
from gpudecide.console import out
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
