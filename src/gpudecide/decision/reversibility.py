"""Reversibility of every option, managed included (SPEC V1, V2).

V1: the time and procedure to move one full run out: the artifact size (from the export
audit or the export test), the measured export throughput, and the manual steps the export
test recorded. V2: the cost and time to shrink (from the cost evidence).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpudecide.decision.context import RuleContext, typed
from gpudecide.message import english, message

if TYPE_CHECKING:
    from gpudecide.portability.figures import ExportTestFigures

__all__ = ["for_option"]


def _signif(value: float, digits: int = 2) -> float:
    """Round to the digits a throughput measurement holds."""
    if value == 0:
        return 0.0
    return float(f"{value:.{digits}g}")


def for_option(ctx: RuleContext, option: str) -> dict[str, Any]:
    """V1 and V2 figures of one option, each with the evidence id it comes from."""
    from gpudecide.portability.figures import figures_of

    out: dict[str, Any] = {"option": option, "evidence": []}
    cost = ctx.newest.get("cost")
    if cost is not None:
        for o in cost.figures.get("options", []):
            if o.get("id") == option and o.get("reversibility"):
                rv = o["reversibility"]
                out["shrink"] = {
                    "cost": rv.get("cost_to_shrink"),
                    "currency": cost.figures.get("currency"),
                    "days": rv.get("days_to_shrink"),
                    "how": rv.get("how"),
                    # The cost analysis's own message for `how`, when it stores one.
                    "how_message": rv.get("how_message"),
                }
                out["evidence"].append(cost.id)
    test = ctx.of("export_test", option)
    tested = typed(test, figures_of)
    size = _run_size(ctx, option, out, tested)
    gbps = None if tested is None else tested.export_gbps
    if test is not None:
        out["manual_actions"] = [] if tested is None else tested.manual_actions
        out["evidence"].append(test.id)
    if size is not None and gbps:
        seconds = size / (gbps * 1e9)
        basis = message("decision", "measured export throughput of the export test")
        out["move_out"] = {
            "bytes": size,
            "gbps": _signif(gbps),
            "hours": _signif(seconds / 3600),
            "basis": english(basis),
            "basis_message": basis,
        }
    else:
        basis = message("decision", "not measured: run `gpudecide export-test` for this option")
        out["move_out"] = {
            "bytes": size,
            "gbps": None,
            "hours": None,
            "basis": english(basis),
            "basis_message": basis,
        }
    return out


def _run_size(
    ctx: RuleContext, option: str, out: dict[str, Any], tested: ExportTestFigures | None
) -> int | None:
    """Bytes of one full run: what the export test moved, else what the audit read."""
    if tested is not None and tested.bytes_exported:
        return tested.bytes_exported
    audit = ctx.of("audit", option)
    if audit is not None:
        out["evidence"].append(audit.id)
        return int(audit.figures.get("total_bytes") or 0) or None
    return None
