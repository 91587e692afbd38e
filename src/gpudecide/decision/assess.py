"""`assess`: the decision from the workspace's evidence (SPEC D1-D5, V1-V2, H1-H3).

Steps, top-down: the records the decision stands on (one per check, the option's own
contour first: `decision.context`); refuse any that is no longer true (`decision.freshness`);
run the evidence rules (one place: `decision.rules`); collect stop factors (D5) before any
total; build the matrix with every score's source (D3, D4: evidence, rehearsal, override,
document, assumption); rank the options that pass; bound what the unsettled scores can do
(`decision.bounds`); list every option's must-prove items (`decision.coverage`); test how
much the winner depends on the weights; state the D1/D2 conditions and reversibility; write
the decision record, which cites every record it used by id and identity hash.

The status says what the evidence supports. `decided` only when no assumed or rehearsed
score can change the winner, every must-prove item of the winner is verified, and no record
it rests on is stale; otherwise `provisional`, with the next actions that would settle it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gpudecide import evidence as ev
from gpudecide import workspace as wsmod
from gpudecide.decision import conditions, coverage, matrix, reversibility, robustness, rules
from gpudecide.decision.actions import Action, next_actions
from gpudecide.decision.bounds import UNSETTLED, Bounds, bounds
from gpudecide.decision.context import RuleContext, standing
from gpudecide.decision.contour import RUN_KINDS
from gpudecide.decision.contradictions import Contradiction, contradictions
from gpudecide.decision.freshness import Unfit, unfit
from gpudecide.errors import InputError
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.message import Message, english, message, nmessage

__all__ = ["Assessment", "StaleEvidence", "Status", "assess", "decide", "evidence_record"]

Status = Literal["decided", "provisional", "no_option_passes", "tie"]


class StaleEvidence(Exception):
    """The decision would rest on records that are no longer true (exit 1, not bad input)."""

    def __init__(self, records: list[Unfit]) -> None:
        self.records = records
        super().__init__("; ".join(f"{u.id}: {u.state}" for u in records))


@dataclass
class Assessment:
    """The decision and everything it rests on."""

    status: Status
    recommended: str | None
    summary: str
    options: list[dict[str, Any]]
    weights: dict[str, int]
    assumptions: int
    rehearsals: int
    assumptions_decide: bool
    robustness: dict[str, Any]
    conditions: list[dict[str, Any]]
    reversibility: list[dict[str, Any]]
    next_actions: list[Action] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)
    stale: list[Unfit] = field(default_factory=list)
    cites: list[dict[str, str]] = field(default_factory=list)
    # The summary as a message, said in the reader's language (report, terminal).
    summary_message: Message | None = None
    # The option that leads a provisional decision.
    leading: str | None = None
    # The answer alone (the summary's first part), for the report's first screen.
    headline_message: Message | None = None

    @property
    def verdict(self) -> ev.Verdict:
        """pass only for a decided decision; a provisional one is no pass (warn)."""
        return {"decided": "pass", "provisional": "warn"}.get(self.status, "fail")  # type: ignore[return-value]

    def note_messages(self) -> list[Message]:
        """The record's notes as messages: how many options the stop factors excluded."""
        stopped = sum(1 for o in self.options if o["stop_factors"])
        if not stopped:
            return []
        return [
            nmessage(
                "decision",
                "{n} option stopped before any total",
                "{n} options stopped before any total",
                n=stopped,
            )
        ]

    def figures(self) -> dict[str, Any]:
        """The record's figures and the body of `assess --json`."""
        return {
            "decision": {
                "status": self.status,
                "recommended": self.recommended,
                "leading": self.leading,
                "summary": self.summary,
                "next_actions": [a.as_dict() for a in self.next_actions],
                "contradictions": [c.as_dict() for c in self.contradictions],
                "stale": [u.as_dict() for u in self.stale],
            },
            "options": self.options,
            "weights": self.weights,
            "assumptions": self.assumptions,
            "rehearsals": self.rehearsals,
            "assumptions_decide": self.assumptions_decide,
            "robustness": self.robustness,
            "conditions": self.conditions,
            "reversibility": self.reversibility,
            "cites": self.cites,
            "messages": {
                "summary": self.summary_message,
                "headline": self.headline_message,
                "notes": self.note_messages(),
            },
        }


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
                    english(rule),
                    (f"{config_path.name}:options.{i}.derived_weights",),
                    clear=english(clear),
                    rule_message=rule,
                    clear_message=clear,
                )
            )
    for hybrid in (o for o in ctx.options if o.kind == "hybrid"):
        for contour in hybrid.contours:
            stops[hybrid.id] += [_through(hybrid.id, contour, s) for s in stops.get(contour, [])]
    return stops


def _through(hybrid: str, contour: str, s: StopFactor) -> StopFactor:
    """A contour's stop factor raised on the hybrid that runs on it (a rule stored in
    English only is nested as written)."""
    rule = message(
        "decision",
        "through its contour {contour}: {rule}",
        contour=contour,
        rule=s.rule_message if s.rule_message is not None else s.rule,
    )
    return StopFactor(
        hybrid,
        s.id,
        english(rule),
        s.evidence,
        s.clear,
        rule_message=rule,
        clear_message=s.clear_message,
    )


def _rehearsal_ids(ctx: RuleContext) -> dict[str, frozenset[str]]:
    """Per option, the standing run records that were rehearsals for it (a hybrid's are its
    contours')."""
    found: dict[str, set[str]] = {o.id: set() for o in ctx.options}
    for record in ctx.checks.values():
        option = ev.subject(record)[1]
        if record.kind in RUN_KINDS and option in found and ctx.grade(record)[0] == "rehearsal":
            found[option].add(record.id)
    for hybrid in (o for o in ctx.options if o.kind == "hybrid"):
        for contour in hybrid.contours:
            found[hybrid.id] |= found.get(contour, set())
    return {o: frozenset(ids) for o, ids in found.items()}


def _head(
    status: Status,
    leader: str | None,
    totals: dict[str, float],
    verdict: Message,
    limits: Bounds,
    unverified: int,
    stale: int,
    disputed: int,
) -> Message:
    """The answer, as the evidence supports it."""
    if status == "decided" and leader is not None:
        return message(
            "decision",
            "recommended: {option} ({total}/100; {verdict})",
            option=leader,
            total=f"{totals[leader]:.0f}",
            verdict=verdict,
        )
    if status == "provisional" and leader is not None:
        why: list[Message] = []
        if unverified:
            why.append(
                nmessage(
                    "decision",
                    "{n} of its must-prove items is not verified",
                    "{n} of its must-prove items are not verified",
                    n=unverified,
                )
            )
        if limits.contenders:
            why.append(
                message(
                    "decision",
                    "at worst {total}/100 with its unsettled scores at 1, which {rivals} can reach",
                    total=f"{limits.winner_worst or 0:.0f}",
                    rivals=", ".join(limits.contenders),
                )
            )
        if disputed:
            why.append(
                nmessage(
                    "decision",
                    "{n} contradiction in its inputs",
                    "{n} contradictions in its inputs",
                    n=disputed,
                )
            )
        if stale:
            why.append(
                nmessage(
                    "decision",
                    "{n} record it rests on is stale",
                    "{n} records it rests on are stale",
                    n=stale,
                )
            )
        return message(
            "decision",
            "provisional: {option} leads ({total}/100); {why}",
            option=leader,
            total=f"{totals[leader]:.0f}",
            why=why,
        )
    if status == "tie":
        best = max(totals.values())
        tied = sorted(o for o, t in totals.items() if abs(t - best) <= matrix.TIE)
        return message(
            "decision",
            "tie between {options} ({total}/100)",
            options=", ".join(tied),
            total=f"{best:.0f}",
        )
    return message("decision", "no option passes its stop factors")


def _summary(
    head: Message, stops: dict[str, list[StopFactor]], assumed: int, rehearsed: int
) -> Message:
    """The decision in one sentence: the answer, what the stop factors excluded, and how many
    scores nobody has settled (a message; its English is the record's summary)."""
    unsettled = nmessage(
        "decision",
        "{n} score is an assumption, {rehearsed} rest on rehearsals",
        "{n} scores are assumptions, {rehearsed} rest on rehearsals",
        n=assumed,
        rehearsed=rehearsed,
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
            assumptions=unsettled,
        )
    return message("decision", "{decision}. {assumptions}", decision=head, assumptions=unsettled)


def _verdict(weights: robustness.Robustness, limits: Bounds) -> Message:
    """Robustness against the weights and against the unsettled scores, in one phrase."""
    if limits.winner is None or limits.settled:
        return weights.verdict_message
    return message(
        "decision",
        "to the weights: {weights}; unsettled scores can change the winner",
        weights=weights.verdict_message,
    )


def assess(
    ws: wsmod.Workspace,
    records: list[ev.Evidence] | None = None,
    *,
    allow_stale: bool = False,
    snapshot: ev.Snapshot | None = None,
) -> Assessment:
    """The decision of a workspace from its evidence (all records when not given).

    Raises StaleEvidence when a record it would stand on is no longer true, unless
    `allow_stale` (then the decision is at most provisional and lists those records).
    `snapshot`: the inputs as another check of the same moment read them."""
    if not ws.config.options:
        raise InputError(
            "no options declared",
            path=ws.root / wsmod.CONFIG_NAME,
            field="options",
            hint="declare every option compared (id, kind, sites) under `options`",
        )
    snapshot = snapshot or ev.Snapshot(ws.root)
    everything = records if records is not None else snapshot.scan(ws.evidence_dir)[0]
    checks = standing(everything, ws.config.options)
    refused = unfit(checks, everything, ws.root, snapshot)
    if refused and not allow_stale:
        raise StaleEvidence(refused)
    ctx = RuleContext(ws.config.options, ws.config.matrix, checks)
    found = rules.apply(sorted(checks.values(), key=lambda r: r.id), ctx)
    stops = _stop_factors(found, ctx, ws.root / wsmod.CONFIG_NAME)
    compared = [o.id for o in ctx.options if o.standalone]
    suggestions = [f for f in found if isinstance(f, Suggestion)]
    cells = matrix.build_cells(
        compared, ws.config.matrix, suggestions, ws.root, _rehearsal_ids(ctx)
    )
    weights = {c.id: c.weight for c in ws.config.matrix.criteria}
    totals = matrix.weighted_totals(cells, weights)
    passing = [o for o in compared if not stops[o]]
    groups = matrix.ranking({o: totals[o] for o in passing})
    order = [o for g in groups for o in g]
    leader = groups[0][0] if groups and len(groups[0]) == 1 else None
    covered = {o.id: coverage.coverage(ctx, o) for o in ctx.options}
    limits = bounds({o: cells[o] for o in passing}, weights, leader)
    open_items = coverage.unverified(covered[leader]) if leader else []
    disputes = contradictions(ctx, cells)
    leader_decl = ctx.option(leader) if leader else None
    concerning = {leader, *(leader_decl.contours if leader_decl else [])}
    disputed = [c for c in disputes if c.option in concerning]
    status: Status = (
        "no_option_passes"
        if not groups
        else "tie"
        if leader is None
        else "decided"
        if limits.settled and not open_items and not refused and not disputed
        else "provisional"
    )
    robust = robustness.analyse(
        {o: {c: cells[o][c].score for c in weights} for o in passing}, weights, order
    )
    verdict = _verdict(robust, limits)
    robust_figures = {
        **robust.as_dict(),
        "weights_verdict": robust.verdict,
        "weights_verdict_message": robust.verdict_message,
        "verdict": english(verdict),
        "verdict_message": verdict,
        "bounds": limits.as_dict(),
    }
    assumed = sum(1 for o in compared for c in weights if cells[o][c].source == "assumption")
    rehearsed = sum(1 for o in compared for c in weights if cells[o][c].source == "rehearsal")
    ranks = {o: i + 1 for i, g in enumerate(groups) for o in g}
    head = _head(
        status, leader, totals, verdict, limits, len(open_items), len(refused), len(disputed)
    )
    summary = _summary(head, stops, assumed, rehearsed)
    actions = (
        next_actions(ctx, leader, covered, cells, limits, refused, disputed)
        if status != "decided"
        else []
    )
    return Assessment(
        status=status,
        recommended=leader if status == "decided" else None,
        leading=leader,
        summary=english(summary),
        summary_message=summary,
        headline_message=head,
        options=[_option_row(ctx, o, stops, cells, totals, ranks, covered[o]) for o in ctx.ids()],
        weights=weights,
        assumptions=assumed,
        rehearsals=rehearsed,
        assumptions_decide=not limits.settled,
        robustness=robust_figures,
        conditions=[c.as_dict() for c in conditions.dedicated(ctx) + conditions.managed(ctx)],
        reversibility=[reversibility.for_option(ctx, o) for o in ctx.ids()],
        next_actions=actions,
        contradictions=disputes,
        stale=refused,
        cites=[
            {"id": r.id, "kind": r.kind, "identity_sha256": snapshot.identity(r)}
            for r in sorted(checks.values(), key=lambda r: r.id)
        ],
    )


def _option_row(
    ctx: RuleContext,
    option: str,
    stops: dict[str, list[StopFactor]],
    cells: dict[str, dict[str, matrix.Cell]],
    totals: dict[str, float],
    ranks: dict[str, int],
    items: list[coverage.CoverageItem],
) -> dict[str, Any]:
    decl = ctx.option(option)
    assert decl is not None
    return {
        "id": option,
        "name": decl.label,
        "kind": decl.kind,
        "standalone": decl.standalone,
        "contours": decl.contours,
        "contour": decl.contour.model_dump(),
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
        "unsettled": sum(1 for cell in cells.get(option, {}).values() if cell.source in UNSETTLED),
        "coverage": [i.as_dict() for i in items],
        "total": totals.get(option),
        "rank": ranks.get(option),
    }


def evidence_record(
    result: Assessment, ws: wsmod.Workspace, snapshot: ev.Snapshot | None = None
) -> ev.Evidence:
    """The decision as an evidence record citing every record it used (read from the
    `snapshot` the assessment read them in, when given)."""
    inputs = [ev.input_ref(ws.root / wsmod.CONFIG_NAME, ws.root)]
    for entry in ws.config.matrix.scores:
        if entry.source == "document" and entry.document:
            inputs.append(ev.input_ref(ws.root / entry.document, ws.root))
    for opt in ws.config.options:
        if opt.derived_weights_document:
            inputs.append(ev.input_ref(ws.root / opt.derived_weights_document, ws.root))
    stale = {u.id for u in result.stale}
    inputs += [
        ev.record_ref(ws.evidence_dir / f"{c['id']}.json", ws.root, snapshot)
        for c in result.cites
        if c["id"] not in stale
    ]
    return ev.Evidence(
        kind="decision",
        title="Decision: where to fine-tune",
        spec_ids=["D1", "D2", "D3", "D4", "D5", "V1", "V2"],
        verdict=result.verdict,
        summary=result.summary,
        figures=result.figures(),
        notes=[english(m) for m in result.note_messages()],
        inputs=inputs,
    )


def decide(ws: wsmod.Workspace, *, allow_stale: bool = False) -> tuple[Assessment, Path]:
    """Assess the workspace and write the decision record (StaleEvidence: nothing written)."""
    snapshot = ev.Snapshot(ws.root)  # the records are read once, for the decision and its citations
    result = assess(ws, allow_stale=allow_stale, snapshot=snapshot)
    return result, ev.write(evidence_record(result, ws, snapshot), ws.evidence_dir)
