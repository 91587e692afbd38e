"""`gpudecide cost`: the command (options -> `run_cost` -> the lines for people or JSON).

    gpudecide cost [WORKSPACE]                        costs.yaml + the workspace's evidence
    gpudecide cost costs.yaml --profile EVIDENCE      any costs file, any profile record

The main CLI adds the command with `register(app)`; one-line errors, exit 2 and JSON output
come from `gpudecide.console`, shared by every command. The run itself is
`gpudecide.cost.runs.run_cost`, imported by the command when it runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpudecide.console import emit_json, guard, language, out, print_written
from gpudecide.cost import words
from gpudecide.errors import InputError
from gpudecide.fmt import money
from gpudecide.i18n import translator
from gpudecide.message import render
from gpudecide.report.i18n import notes_of, summary_of

if TYPE_CHECKING:
    from rich.table import Table

    from gpudecide.cost.figures import CostFigures
    from gpudecide.cost.runs import CostRun

__all__ = ["register"]

_ = translator("cost")


def _table(figures: CostFigures) -> Table:
    """One row per option: the three months, cost per useful GPU-hour, and the normal
    month's useful share of what it pays for (of its pool, of billed GPU-hours)."""
    cur = figures.currency
    from rich.table import Table

    table = Table(
        _("option"),
        _("type"),
        _("normal ({cur})").format(cur=cur),
        _("peak ({cur})").format(cur=cur),
        _("empty ({cur})").format(cur=cur),
        _("per useful GPU-h ({cur})").format(cur=cur),
        _("useful share, normal month"),
        box=None,
    )
    for o in figures.options:
        r = o.regimes
        table.add_row(
            o.id,
            words.word(words.OPTION_TYPES, o.type),
            money(r["normal"].total, 0),
            money(r["peak"].total, 0),
            money(r["empty"].total, 0),
            money(r["normal"].cost_per_useful_gpu_hour, 2),
            words.share_of(o, r["normal"].useful_utilisation),
        )
    return table


def _month_lines(figures: CostFigures) -> list[str]:
    """Each month's workload and how it was chosen, then the break-evens (C8)."""
    lines = []
    for regime, w in figures.regimes.items():
        lines.append(
            _("{month}: {gpu_hours}, {attempts}; {basis}").format(
                month=render(words.month_word(regime)),
                gpu_hours=render(words.gpu_hours(w.gpu_hours)),
                attempts=render(words.attempts(w.attempts)),
                basis=render(w.basis_message),
            )
        )
    pools = {o.id: o for o in figures.options}
    for p in figures.break_even:
        u = p.break_even_useful_utilisation
        pool = pools[p.dedicated]
        lines.append(
            _(
                "break-even {dedicated} vs {managed}: useful utilisation {u} (dedicated cheaper: "
                "{cheaper}); observed in the normal month: {observed}"
            ).format(
                dedicated=p.dedicated,
                managed=p.managed,
                u=words.share_of(pool, u) if u is not None else _("none"),
                cheaper=words.word(words.CHEAPER, p.dedicated_cheaper),
                observed=words.share_of(pool, p.observed_normal),
            )
        )
    # Every share of GPU-hours beside the others, each named: the same pool reads 3 % in one
    # month and 13 % in a replay's window, and each line says which is which.
    for s in figures.utilisation:
        lines.append(
            _("utilisation: {figure} ({options}; {evidence})").format(
                figure=render(words.utilisation_figure(s.name_message, s.share)),
                options=", ".join(s.options),
                evidence=s.evidence or _("this record"),
            )
        )
    return lines


def _print(run: CostRun) -> None:
    """The lines for people: the summary, one row per option, the months and break-evens,
    the findings, the notes and where the record went."""
    from gpudecide.cost import analysis

    figures = run.result.model
    record = analysis.to_evidence(run.result, [])
    out.print(summary_of(record), markup=False)
    out.print(_table(figures))
    for line in _month_lines(figures):
        out.print(line, markup=False)
    finding = _("finding: {text}")
    for msg in figures.finding_messages:
        out.print(finding.format(text=render(msg)), markup=False)
    for note in notes_of(record):
        out.print(_("note: {text}").format(text=note), markup=False)
    if run.written:
        print_written(run.written)


def register(app: typer.Typer) -> None:
    """Add the `cost` command to the main CLI app."""

    @app.command("cost")
    def cost(
        target: Annotated[
            Path | None,
            typer.Argument(
                metavar="[WORKSPACE | COSTS.YAML]",
                help="Workspace folder, or a costs.yaml (then --profile is needed); "
                "default: the workspace found from here up.",
            ),
        ] = None,
        profile: Annotated[
            Path | None,
            typer.Option(
                metavar="EVIDENCE",
                help="Profile evidence record (default: the workspace's newest).",
            ),
        ] = None,
        replay: Annotated[
            list[Path] | None,
            typer.Option(
                metavar="EVIDENCE",
                help="Replay evidence record; repeat for several (default: the workspace's "
                "newest of each window).",
            ),
        ] = None,
        evidence_dir: Annotated[
            Path | None, typer.Option(help="Where to write the evidence record.")
        ] = None,
        workspace_dir: Annotated[
            Path | None,
            typer.Option("--workspace", "-w", help="Workspace folder (same as WORKSPACE)."),
        ] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print one JSON object for machines.")
        ] = False,
    ) -> None:
        """Cost every option in a normal, a peak and an empty month (SPEC C1-C10, V2)."""
        from gpudecide.cost.runs import run_cost

        with guard(as_json):
            if target is not None and workspace_dir is not None:
                raise InputError(
                    "give the workspace once: as WORKSPACE or as --workspace", field="--workspace"
                )
            run = run_cost(
                target or workspace_dir, profile=profile, replays=replay, evidence_dir=evidence_dir
            )
            if not as_json:
                # The costs file's workspace names the language people read (--json: English).
                language(run.costs_workspace())
        if as_json:
            emit_json(run.as_json())
        else:
            _print(run)
