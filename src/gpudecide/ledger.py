"""The evidence folder as a ledger: every record with its state, for `gpudecide evidence`.

A record is current when the decision stands on it: the newest of its check (its kind, the
option it names and what it checked: a drill's scenario, a replay's window), the option's
own contour first (`decision.context.standing`). Any other record is `superseded`: listed
apart, never mixed with the current ones, and `prune` may delete it once no current record
cites it. A damaged file is listed with its reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpudecide import evidence as ev
from gpudecide.decision.context import standing
from gpudecide.message import english
from gpudecide.options import OptionDecl

__all__ = ["ledger_rows", "prune", "superseded"]


def superseded(records: list[ev.Evidence], options: list[OptionDecl]) -> set[str]:
    """Ids of the records no check stands on (the decision's own: all but the newest)."""
    kept = {r.id for r in standing(records, options).values()}
    decisions = [r for r in records if r.kind == "decision"]
    if decisions:
        kept.add(decisions[-1].id)
    return {r.id for r in records if r.id not in kept}


def prune(evidence_dir: Path, records: list[ev.Evidence], options: list[OptionDecl]) -> list[Path]:
    """Delete superseded records no current record cites; the paths removed."""
    old = superseded(records, options)
    cited = {i.record_id for r in records if r.id not in old for i in r.inputs if i.record_id}
    removed: list[Path] = []
    for record in records:
        if record.id in old and record.id not in cited:
            path = evidence_dir / f"{record.id}.json"
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def ledger_rows(
    records: list[ev.Evidence],
    damaged: list[ev.Damaged],
    root: Path,
    options: list[OptionDecl],
    snapshot: ev.Snapshot | None = None,
) -> list[dict[str, Any]]:
    """One row per record (current first, then superseded) and per damaged file; the
    inputs read once for all of them (`snapshot`: shared with another check of the same
    moment, as `status` shares it with the decision)."""
    old = superseded(records, options)
    snapshot = snapshot or ev.Snapshot(root)
    rows: list[dict[str, Any]] = []
    for record in sorted(records, key=lambda r: r.id in old):
        state, problems = snapshot.freshness(record)
        # A replaced record no longer speaks for anything: its staleness is not a failure,
        # but an edited one still is.
        replaced = record.id in old and state is not ev.Freshness.TAMPERED
        rows.append(
            {
                "id": record.id,
                "kind": record.kind,
                "verdict": record.verdict,
                "created_at_utc": record.created_at_utc,
                "freshness": "superseded" if replaced else state.value,
                "superseded": record.id in old,
                "problems": [english(p) for p in problems],
                "said": problems,
            }
        )
    for d in damaged:
        rows.append(
            {
                "id": d.path.name,
                "kind": None,
                "verdict": None,
                "created_at_utc": None,
                "freshness": "damaged",
                "superseded": False,
                "problems": [d.reason],
                "said": [d.said()],
            }
        )
    return rows
