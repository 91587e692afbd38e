"""The decision's library call for the CLI (`run_assess`), its human printout
(`print_assessment`), and `gpudecide check hybrid`. `gpudecide assess` itself lives in the
root `cli.py`: it spans every package's evidence.

What they print for people is in the reader's language (`language(ws)`: the root `--lang`,
$GPUDECIDE_LANG, the workspace's report.language); --json output is the same in every
language.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from gpudecide import evidence as ev
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
from gpudecide.decision import hybrid
from gpudecide.decision.assess import Assessment, assess, evidence_record
from gpudecide.i18n import Language, translator
from gpudecide.report.i18n import render_message, say, summary_of
from gpudecide.workspace import Workspace

_ = translator("decision")


def run_assess(ws: Workspace) -> tuple[Assessment, Path]:
    """Assess the workspace and write the decision record."""
    result = assess(ws)
    return result, ev.write(evidence_record(result, ws), ws.evidence_dir)


def summary_text(result: Assessment, lang: Language) -> str:
    """The decision's summary in `lang` (English: the record's own summary)."""
    return say(result.summary, result.summary_message, lang)


def print_assessment(result: Assessment, lang: Language | None = None) -> None:
    """Stop factors first, then the ranking, for people, in `lang` (default: `language()`)."""
    lang = lang or language()
    out.print(
        _("decision: {summary}", lang).format(summary=summary_text(result, lang)), markup=False
    )
    for option in result.options:
        for stop in option["stop_factors"]:
            rule = say(stop["rule"], stop.get("rule_message"), lang)
            line = _("stop {option}: {id}: {rule}", lang).format(
                option=option["id"], id=stop["id"], rule=rule
            )
            out.print(f"  {line}", markup=False)
    table = Table(
        _("rank", lang),
        _("option", lang),
        _("total /100", lang),
        _("assumed scores", lang),
        box=None,
    )
    for option in sorted(
        (o for o in result.options if o["standalone"]),
        key=lambda o: (o["rank"] is None, o["rank"] or 0, o["id"]),
    ):
        assumed = sum(1 for c in option["scores"].values() if c["source"] == "assumption")
        table.add_row(
            _("stopped", lang) if option["stop_factors"] else str(option["rank"]),
            option["id"],
            "-" if option["total"] is None else f"{option['total']:.0f}",
            str(assumed),
        )
    out.print(table)
    r = result.robustness
    verdict = say(r["verdict"], r.get("verdict_message"), lang)
    out.print(_("robustness: {verdict}", lang).format(verdict=verdict), markup=False)


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
        lang = language(ws)
        out.print(summary_of(record, lang), markup=False)
        for h in record.figures["hybrids"]:
            for f in h["findings"]:
                detail = render_message(f["message"], lang) if "message" in f else f["detail"]
                out.print(f"  {h['option']}: {f['id']}: {detail}", markup=False)
        print_written(written, lang)
    if record.verdict != "pass":
        raise typer.Exit(1)


def register_check(check_app: typer.Typer) -> None:
    """Add `check hybrid` to the `check` command group."""
    check_app.command("hybrid")(check_hybrid)
