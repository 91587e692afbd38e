"""`assess`: the decision from the workspace's evidence (SPEC D1-D5, V1-V2, H1-H3).

Steps, top-down: read the newest record of every kind; run the evidence rules (one place:
`decision.rules`); collect stop factors (D5) before any total; build the matrix with every
score's source (D3, D4); rank the options that pass; test how much the winner depends on
the weights; state the D1/D2 conditions and every option's reversibility; write the
decision record, which cites every record it used by id and identity hash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gpudecide import evidence as ev
from gpudecide import workspace as wsmod
from gpudecide.decision import conditions, matrix, reversibility, robustness, rules
from gpudecide.decision.context import RuleContext
from gpudecide.decision.model import Message, StopFactor, Suggestion
from gpudecide.errors import InputError
from gpudecide.report.i18n import message, render_message

Status = Literal["decided", "no_option_passes", "tie"]


@dataclass
class Assessment:
    """The decision and everything it rests on."""

    status: Status
    recommended: str | None
    summary: str
    options: list[dict[str, Any]]
    weights: dict[str, int]
    assumptions: int
    assumptions_decide: bool
    robustness: dict[str, Any]
    conditions: list[dict[str, Any]]
    reversibility: list[dict[str, Any]]
    cites: list[dict[str, str]] = field(default_factory=list)
    # The summary and the notes as messages, said in the reader's language (report, terminal).
    summary_message: Message | None = None

    def note_messages(self) -> list[Message]:
        """The record's notes as messages: how many options the stop factors excluded."""
        stopped = sum(1 for o in self.options if o["stop_factors"])
        if not stopped:
            return []
        return [message("decision", "{n} option(s) stopped before any total", n=stopped)]

    def figures(self) -> dict[str, Any]:
        """The record's figures and the body of `assess --json`."""
        return {
            "decision": {
                "status": self.status,
                "recommended": self.recommended,
                "summary": self.summary,
            },
            "options": self.options,
            "weights": self.weights,
            "assumptions": self.assumptions,
            "assumptions_decide": self.assumptions_decide,
            "robustness": self.robustness,
            "conditions": self.conditions,
            "reversibility": self.reversibility,
            "cites": self.cites,
            "messages": {"summary": self.summary_message, "notes": self.note_messages()},
        }


def newest_by_option(records: list[ev.Evidence]) -> dict[tuple[str, str | None], ev.Evidence]:
    """The newest record of every kind and option (None: not about one option), the
    decision's own left out. Audits of two vendors' exports are both current."""
    return {s: r for s, r in ev.current(records).items() if s[0] != "decision"}


def newest_by_kind(records: list[ev.Evidence]) -> dict[str, ev.Evidence]:
    """The newest record of every kind except the decision's own."""
    newest: dict[str, ev.Evidence] = {}
    for record in records:
        if record.kind != "decision":
            newest[record.kind] = record
    return newest


def _stop_factors(
    found: list[rules.Finding], ctx: RuleContext, config_path: Path
) -> dict[str, list[StopFactor]]:
    stops: dict[str, list[StopFactor]] = {o.id: [] for o in ctx.options}
    for f in found:
        if isinstance(f, StopFactor):
            stops[f.option].append(f)
    for i, opt in enumerate(ctx.options):
        if opt.derived_weights == "unclear":
            rule = (
                message(
                    "decision",
                    "rights to weights derived on this option are unclear (E6): {source}",
                    source=opt.derived_weights_source,
                )
                if opt.derived_weights_source
                else message(
                    "decision", "rights to weights derived on this option are unclear (E6)"
                )
            )
            clear = message("decision", "a contract clause that gives the team the derived weights")
            stops[opt.id].append(
                StopFactor(
                    opt.id,
                    "derived_rights_unclear",
                    render_message(rule, "en"),
                    (f"{config_path.name}:options.{i}.derived_weights",),
                    clear=render_message(clear, "en"),
                    rule_message=rule,
                    clear_message=clear,
                )
            )
    for hybrid in (o for o in ctx.options if o.kind == "hybrid"):
        for contour in hybrid.contours:
            stops[hybrid.id] += [_through(hybrid.id, contour, s) for s in stops.get(contour, [])]
    return stops


def _through(hybrid: str, contour: str, s: StopFactor) -> StopFactor:
    """A contour's stop factor raised on the hybrid that runs on it."""
    rule = (
        message(
            "decision",
            "through its contour {contour}: {rule}",
            contour=contour,
            rule=s.rule_message,
        )
        if s.rule_message is not None
        else None
    )
    return StopFactor(
        hybrid,
        s.id,
        f"through its contour {contour}: {s.rule}",
        s.evidence,
        s.clear,
        rule_message=rule,
        clear_message=s.clear_message,
    )


def _summary(
    status: Status,
    winner: str | None,
    totals: dict[str, float],
    stops: dict[str, list[StopFactor]],
    assumptions: int,
    decides: bool,
    verdict: Message,
) -> Message:
    """The decision in one sentence: the answer, what the stop factors excluded, and how many
    scores are assumptions (a message; its English is the record's summary)."""
    if status == "decided" and winner is not None:
        head = message(
            "decision",
            "recommended: {option} ({total}/100; {verdict})",
            option=winner,
            total=f"{totals[winner]:.0f}",
            verdict=verdict,
        )
    elif status == "tie":
        best = max(totals.values())
        tied = sorted(o for o, t in totals.items() if abs(t - best) <= matrix.TIE)
        head = message(
            "decision",
            "tie between {options} ({total}/100)",
            options=", ".join(tied),
            total=f"{best:.0f}",
        )
    else:
        head = message("decision", "no option passes its stop factors")
    assumed = (
        message(
            "decision", "{n} score(s) are assumptions; assumptions decide the winner", n=assumptions
        )
        if decides
        else message("decision", "{n} score(s) are assumptions", n=assumptions)
    )
    stopped = [
        message("decision", "{option} ({ids})", option=o, ids=", ".join(sorted({s.id for s in f})))
        for o, f in stops.items()
        if f
    ]
    if stopped:
        return message(
            "decision",
            "{decision}. stopped: {stopped}. {assumptions}",
            decision=head,
            stopped=stopped,
            assumptions=assumed,
        )
    return message("decision", "{decision}. {assumptions}", decision=head, assumptions=assumed)


def assess(options_ws: wsmod.Workspace, records: list[ev.Evidence] | None = None) -> Assessment:
    """The decision of a workspace from its evidence (all records when not given)."""
    ws = options_ws
    if not ws.config.options:
        raise InputError(
            "no options declared",
            path=ws.root / wsmod.CONFIG_NAME,
            field="options",
            hint="declare every option compared (id, kind, sites) under `options`",
        )
    everything = records if records is not None else ev.load_all(ws.evidence_dir)
    current = newest_by_option(everything)
    newest = newest_by_kind(everything)
    ctx = RuleContext(ws.config.options, ws.config.matrix, newest, current)
    found = rules.apply(sorted(current.values(), key=lambda r: r.id), ctx)
    stops = _stop_factors(found, ctx, ws.root / wsmod.CONFIG_NAME)
    compared = [o.id for o in ctx.options if o.standalone]
    suggestions = [f for f in found if isinstance(f, Suggestion)]
    cells = matrix.build_cells(compared, ws.config.matrix, suggestions, ws.root)
    weights = {c.id: c.weight for c in ws.config.matrix.criteria}
    totals = matrix.weighted_totals(cells, weights)
    passing = [o for o in compared if not stops[o]]
    groups = matrix.ranking({o: totals[o] for o in passing})
    order = [o for g in groups for o in g]
    status: Status = (
        "no_option_passes" if not groups else "tie" if len(groups[0]) > 1 else "decided"
    )
    winner = groups[0][0] if status == "decided" else None
    robust = robustness.analyse(
        {o: {c: cells[o][c].score for c in weights} for o in passing}, weights, order
    )
    assumed = sum(1 for o in compared for c in weights if cells[o][c].source == "assumption")
    decides = winner is not None and matrix.assumptions_decide(
        {o: cells[o] for o in passing}, weights, winner
    )
    ranks = {o: i + 1 for i, g in enumerate(groups) for o in g}
    summary = _summary(status, winner, totals, stops, assumed, decides, robust.verdict_message)
    return Assessment(
        status=status,
        recommended=winner,
        summary=render_message(summary, "en"),
        summary_message=summary,
        options=[_option_row(ctx, o, stops, cells, totals, ranks) for o in ctx.ids()],
        weights=weights,
        assumptions=assumed,
        assumptions_decide=decides,
        robustness=robust.as_dict(),
        conditions=[c.as_dict() for c in conditions.dedicated(ctx) + conditions.managed(ctx)],
        reversibility=[reversibility.for_option(ctx, o) for o in ctx.ids()],
        cites=[
            {"id": r.id, "kind": r.kind, "identity_sha256": r.identity_sha256()}
            for r in sorted(current.values(), key=lambda r: r.id)
        ],
    )


def _option_row(
    ctx: RuleContext,
    option: str,
    stops: dict[str, list[StopFactor]],
    cells: dict[str, dict[str, matrix.Cell]],
    totals: dict[str, float],
    ranks: dict[str, int],
) -> dict[str, Any]:
    decl = ctx.option(option)
    assert decl is not None
    return {
        "id": option,
        "name": decl.label,
        "kind": decl.kind,
        "standalone": decl.standalone,
        "contours": decl.contours,
        "sites": [s.model_dump() for s in decl.sites],
        "stop_factors": [
            {
                "id": s.id,
                "rule": s.rule,
                "evidence": list(s.evidence),
                "clear": s.clear,
                "rule_message": s.rule_message,
                "clear_message": s.clear_message,
            }
            for s in stops[option]
        ],
        "scores": {c: cell.as_dict() for c, cell in cells.get(option, {}).items()},
        "total": totals.get(option),
        "rank": ranks.get(option),
    }


def evidence_record(result: Assessment, ws: wsmod.Workspace) -> ev.Evidence:
    """The decision as an evidence record citing every record it used."""
    verdict: ev.Verdict = "pass" if result.status == "decided" else "fail"
    inputs = [ev.input_ref(ws.root / wsmod.CONFIG_NAME, ws.root)]
    for entry in ws.config.matrix.scores:
        if entry.source == "document" and entry.document:
            inputs.append(ev.input_ref(ws.root / entry.document, ws.root))
    inputs += [ev.record_ref(ws.evidence_dir / f"{c['id']}.json", ws.root) for c in result.cites]
    return ev.Evidence(
        kind="decision",
        title="Decision: where to fine-tune",
        spec_ids=["D1", "D2", "D3", "D4", "D5", "V1", "V2"],
        verdict=verdict,
        summary=result.summary,
        figures=result.figures(),
        notes=[render_message(m, "en") for m in result.note_messages()],
        inputs=inputs,
    )
