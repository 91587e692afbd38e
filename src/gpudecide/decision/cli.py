"""The decision's human printout (`print_assessment`, `print_refusal`) and `gpudecide check
hybrid`. `gpudecide assess` itself lives in the root `cli.py`: it spans every package's
evidence; its library call is `decision.assess.decide`.

What they print for people is in the run's language; --json output is the same in every
language.

The decision's library (the rules of every package, robustness with NumPy) loads inside the
commands, so that `--help` and the other commands do not pay for it.
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
from gpudecide.i18n import translator
from gpudecide.message import render
from gpudecide.report.i18n import summary_of

if TYPE_CHECKING:
    from gpudecide.decision.assess import Assessment, StaleEvidence

__all__ = ["assess", "check_hybrid", "print_assessment", "print_refusal", "register"]

_ = translator("decision")


def _said(holder: dict[str, object], key: str) -> str:
    """`holder[key]` in the reader's language: its stored message, else the English."""
    msg = holder.get(f"{key}_message")
    return render(msg) if isinstance(msg, dict) else str(holder.get(key) or "")


def print_assessment(result: Assessment) -> None:
    """Stop factors first, then the ranking, what the leader has not proven and the next
    actions, for people."""
    summary = render(result.summary_message) if result.summary_message else result.summary
    from gpudecide.decision.actions import ITEM_NAMES, STATE_NAMES

    out.print(_("decision: {summary}").format(summary=summary), markup=False)
    for option in result.options:
        for stop in option["stop_factors"]:
            line = _("stop {option}: {id}: {rule}").format(
                option=option["id"], id=stop["id"], rule=_said(stop, "rule")
            )
            out.print(f"  {line}", markup=False)
    from rich.table import Table

    table = Table(_("rank"), _("option"), _("total /100"), _("unsettled scores"), box=None)
    for option in sorted(
        (o for o in result.options if o["standalone"]),
        key=lambda o: (o["rank"] is None, o["rank"] or 0, o["id"]),
    ):
        table.add_row(
            _("stopped") if option["stop_factors"] else str(option["rank"]),
            option["id"],
            "-" if option["total"] is None else f"{option['total']:.0f}",
            str(option["unsettled"]),
        )
    out.print(table)
    out.print(
        _("robustness: {verdict}").format(verdict=_said(result.robustness, "verdict")),
        markup=False,
    )
    for found in result.contradictions:
        out.print(
            "  "
            + _("contradiction {option}: {id}: {why}").format(
                option=found.option, id=found.id, why=render(found.why)
            ),
            markup=False,
        )
    leader = next((o for o in result.options if o["id"] == result.leading), None)
    if leader is not None:
        for item in leader["coverage"]:
            if item["state"] != "verified":
                out.print(
                    "  "
                    + _("{item}: {state}: {why}").format(
                        item=_(ITEM_NAMES.get(item["id"], item["id"])),
                        state=_(STATE_NAMES[item["state"]]),
                        why=render(item["why"]),
                    ),
                    markup=False,
                )
    for action in result.next_actions:
        out.print(
            _("next: {command} ({settles})").format(
                command=action.command, settles=render(action.settles)
            ),
            markup=False,
        )


def print_refusal(refusal: StaleEvidence, as_json: bool) -> None:
    """Why `assess` did not decide: each record that is no longer true and what refreshes
    it (exit 1 follows)."""
    if as_json:
        emit_json({"error": "stale evidence", "records": [u.as_dict() for u in refusal.records]})
        return
    out.print(_("no decision: it would rest on records that are no longer true"), markup=False)
    for unfit in refusal.records:
        out.print(
            "  "
            + _("{why}; refresh: {command}").format(why=render(unfit.why), command=unfit.command),
            markup=False,
        )
    out.print(_("`gpudecide assess --allow-stale` decides anyway, marked provisional"))


def check_hybrid(
    workspace_dir: WorkspaceOpt = None,
    hybrid_file: Annotated[
        Path | None, typer.Option("--file", help="hybrid.yaml (default: the workspace's).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Hybrid contours: one container, checkpoint format, manifest schema and evaluation
    contract, and a stated boundary (H1-H3). Exit 1 when there are findings."""
    from gpudecide import evidence as ev
    from gpudecide.decision import hybrid

    with guard(as_json):
        ws = open_workspace(workspace_dir, required=True)
        assert ws is not None
        path = hybrid_file or ws.root / hybrid.HYBRID_NAME
        record = hybrid.check(path, ws.config.options, ws.root)
        written = ev.write(record, ws.evidence_dir)
    if as_json:
        emit_json({**record.figures, "evidence": str(written)})
    else:
        out.print(summary_of(record), markup=False)
        for h in record.figures["hybrids"]:
            for f in h["findings"]:
                detail = render(f["message"]) if "message" in f else f["detail"]
                out.print(f"  {h['option']}: {f['id']}: {detail}", markup=False)
        print_written(written)
    if record.verdict != "pass":
        raise typer.Exit(1)


def assess(
    workspace_dir: Annotated[
        Path | None, typer.Argument(help="Workspace folder (default: found from here up).")
    ] = None,
    allow_stale: Annotated[
        bool,
        typer.Option(
            "--allow-stale",
            help="Decide even on records that are no longer true (marked provisional).",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Decide: stop factors first, the evidence-backed matrix, what each option has proven,
    robustness (D1-D5, V1-V2).

    Exit 0 only when decided; 1 when the decision is provisional, tied, no option passes,
    or a record it would rest on is no longer true (nothing is written then).
    """
    from gpudecide.decision.assess import StaleEvidence, decide

    with guard(as_json):
        ws = open_workspace(workspace_dir, required=True)
        assert ws is not None
        try:
            result, written = decide(ws, allow_stale=allow_stale)
        except StaleEvidence as refusal:
            print_refusal(refusal, as_json)
            raise typer.Exit(1) from None
    if as_json:
        emit_json({**result.figures(), "evidence": str(written)})
    else:
        print_assessment(result)
        print_written(written)
    if result.status != "decided":
        raise typer.Exit(1)


def register(app: typer.Typer, check_app: typer.Typer) -> None:
    """Add `assess` to the app and `check hybrid` to the `check` command group."""
    app.command()(assess)
    check_app.command("hybrid")(check_hybrid)
