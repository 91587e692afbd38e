"""What each option has proven, item by item: the article's must-prove list (SPEC E1-E6, G1,
G2, G4, Q1, Q3, I1-I7, R3, H1-H3).

"Число без доказательства лишь маскирует предположение": an option nobody audited, drilled
or measured must not read as clear. Each item of an option is

- `verified`: evidence from the option's own contour settles it;
- `rehearsed`: it passed, but on another contour (a local re-run, a simulated pool);
- `claimed`: the team's or the vendor's word without evidence behind it;
- `not_checked`: nothing says anything about it yet;
- `failed`: the evidence says no.

Every item that is not verified names the command or the document that would verify it.
A hybrid's items are those of its contours (the weakest state wins) plus its own
(H1-H3); an item of a contour is shown with the contour's id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from gpudecide import evidence as ev
from gpudecide.decision.context import RuleContext, typed
from gpudecide.decision.contour import exercised
from gpudecide.message import Message, message
from gpudecide.options import OptionDecl

__all__ = [
    "DEDICATED",
    "DEDICATED_ITEMS",
    "ITEMS",
    "STATES",
    "Check",
    "CoverageItem",
    "State",
    "coverage",
    "unverified",
]

State = Literal["failed", "not_checked", "claimed", "rehearsed", "verified"]
# Weakest first: a hybrid's item is its weakest contour's.
STATES: tuple[State, ...] = ("failed", "not_checked", "claimed", "rehearsed", "verified")
DEDICATED = ("owned", "rented")


@dataclass
class CoverageItem:
    """One must-prove item of one option."""

    id: str
    spec: list[str]
    state: State
    why: Message
    evidence: list[str] = field(default_factory=list)
    # What would verify it: a command (or the file to fill), shown as written.
    command: str = ""
    # For a hybrid: the contour the state comes from.
    contour: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Machine form (assess --json `options[].coverage[]`, the decision record)."""
        return {
            "id": self.id,
            "spec": self.spec,
            "state": self.state,
            "why": self.why,
            "evidence": self.evidence,
            "command": self.command,
            "contour": self.contour,
        }


def _item(
    iid: str,
    spec: list[str],
    state: State,
    why: Message,
    records: list[ev.Evidence] | None = None,
    command: str = "",
) -> CoverageItem:
    return CoverageItem(
        iid,
        spec,
        state,
        why,
        [r.id for r in records or []],
        "" if state == "verified" else command,
    )


def _export_proven(ctx: RuleContext, opt: OptionDecl) -> CoverageItem:
    from gpudecide.portability.figures import figures_of

    spec = ["E1", "E2", "E3", "E4"]
    command = (
        f"gpudecide export-test --option {opt.id} --from-export DIR"
        if opt.kind == "managed"
        else f"gpudecide export-test --option {opt.id} --executor {opt.contour.executor or 'slurm'}"
    )
    test = ctx.of("export_test", opt.id)
    if test is None:
        return _item(
            "export_proven",
            spec,
            "not_checked",
            message("decision", "no export test of this option"),
            command=command,
        )
    tested = typed(test, figures_of)
    if test.verdict != "pass" or (tested is not None and tested.verdict != "pass"):
        why = message("decision", "its export test failed")
        return _item("export_proven", spec, "failed", why, [test], command)
    grade, reason = ctx.grade(test)
    if grade == "rehearsal":
        why = message("decision", "passed as a rehearsal: {reason}", reason=reason)
        return _item("export_proven", spec, "rehearsed", why, [test], command)
    why = message("decision", "trained, exported, deleted, restored and resumed on its contour")
    return _item("export_proven", spec, "verified", why, [test])


def _export_audited(ctx: RuleContext, opt: OptionDecl) -> CoverageItem:
    spec = ["E5", "A2", "A5"]
    command = f"gpudecide audit EXPORT_DIR --option {opt.id}"
    audits = ctx.all_of("audit", opt.id)
    if not audits:
        why = message("decision", "no export of this option was audited")
        return _item("export_audited", spec, "not_checked", why, command=command)
    hazards = sum(len(a.figures.get("hazards") or []) for a in audits)
    if hazards:
        why = message("decision", "its export audit found lock-in hazards (E5)")
        return _item("export_audited", spec, "failed", why, audits, command)
    why = message("decision", "its export was audited without lock-in hazards")
    return _item("export_audited", spec, "verified", why, audits)


def _node_loss(ctx: RuleContext, opt: OptionDecl) -> CoverageItem:
    from gpudecide.drills.drill_figures import figures_of

    spec = ["G1", "G4"]
    executor = opt.contour.declared(opt.kind)
    command = f"gpudecide drill node-loss --option {opt.id}" + (
        f" --executor {executor}" if executor in ("slurm", "k8s") else ""
    )
    drill = ctx.of("drill", opt.id, "node-loss")
    if drill is None:
        why = message("decision", "no node-loss drill on this option")
        return _item("node_loss_drilled", spec, "not_checked", why, command=command)
    if drill.verdict == "fail":
        why = message("decision", "the node-loss drill failed")
        return _item("node_loss_drilled", spec, "failed", why, [drill], command)
    grade, reason = ctx.grade(drill)
    if grade == "rehearsal":
        why = message("decision", "passed as a rehearsal: {reason}", reason=reason)
        return _item("node_loss_drilled", spec, "rehearsed", why, [drill], command)
    drilled = typed(drill, figures_of)
    stored = None if drilled is None else drilled.external_storage
    if not _external(stored or exercised(drill).storage):
        why = message(
            "decision", "resumed, but its checkpoints were on local disk, not external storage"
        )
        return _item("node_loss_drilled", spec, "rehearsed", why, [drill], command)
    why = message("decision", "a job was stopped on its contour and resumed from external storage")
    return _item("node_loss_drilled", spec, "verified", why, [drill])


def _external(url: object) -> bool:
    """Whether checkpoints went to storage outside the node (an object store or a network
    file system named by URL), not a folder on the node's own disk (G1)."""
    text = str(url or "")
    return "://" in text and not text.startswith("file://")


def _start_measured(ctx: RuleContext, opt: OptionDecl) -> CoverageItem:
    spec = ["Q1", "Q3"]
    command = f"gpudecide queue LOG --option {opt.id}"
    queue = ctx.of("queue", opt.id)
    if queue is not None:
        grade, reason = ctx.grade(queue)
        if grade == "rehearsal":
            why = message("decision", "passed as a rehearsal: {reason}", reason=reason)
            return _item("start_measured", spec, "rehearsed", why, [queue], command)
        why = message("decision", "the queue analysis read this option's own job log")
        return _item("start_measured", spec, "verified", why, [queue])
    if opt.kind in DEDICATED:
        replays = [r for r in ctx.checks.values() if r.kind == "replay"]
        if replays and ctx.pool_gpus(opt.id) is not None:
            why = message(
                "decision", "only a replay of the team's log through a simulated pool of its size"
            )
            return _item("start_measured", spec, "rehearsed", why, replays, command)
    why = message("decision", "no job log of this option analysed")
    return _item("start_measured", spec, "not_checked", why, command=command)


def _row(record: ev.Evidence | None, option: str) -> dict[str, Any] | None:
    if record is None:
        return None
    return next((o for o in record.figures.get("options", []) if o.get("option") == option), None)


def _isolation(ctx: RuleContext, opt: OptionDecl) -> CoverageItem:
    spec = ["I1", "I2", "I3", "I4", "I5", "I6"]
    command = "gpudecide check isolation"
    record = ctx.of("isolation", opt.id) or ctx.newest.get("isolation")
    row = _row(record, opt.id)
    if record is None or row is None or not row.get("answered", True):
        why = message("decision", "no isolation answers for this option")
        # The check ran: what is missing are the answers, in the file, not another run.
        fill = command if record is None else "isolation.yaml options[].boundaries"
        return _item("isolation_evidenced", spec, "not_checked", why, command=fill)
    if row.get("stopped"):
        why = message("decision", "a protection its threat model requires is missing")
        return _item("isolation_evidenced", spec, "failed", why, [record], command)
    required = set(row.get("required") or [])
    boundaries = [
        b for b in row.get("boundaries", []) if not required or b.get("boundary") in required
    ]
    unanswered = sorted(
        str(b.get("boundary")) for b in boundaries if b.get("answered", True) is False
    )
    claimed = sorted(
        str(b.get("boundary"))
        for b in boundaries
        if b.get("answered", True) and b.get("status") in ("claimed", "unknown")
    )
    if claimed:
        why = message(
            "decision",
            "boundaries resting on a claim, not evidence: {boundaries}",
            boundaries=", ".join(claimed),
        )
        return _item("isolation_evidenced", spec, "claimed", why, [record], command)
    if unanswered:
        why = message(
            "decision",
            "boundaries its threat model requires are not answered: {boundaries}",
            boundaries=", ".join(unanswered),
        )
        return _item("isolation_evidenced", spec, "not_checked", why, [record], command)
    why = message("decision", "every boundary rests on a document or a test")
    return _item("isolation_evidenced", spec, "verified", why, [record])


def _residency(ctx: RuleContext, opt: OptionDecl) -> CoverageItem:
    spec = ["I7"]
    command = "gpudecide check residency"
    record = ctx.of("residency", opt.id) or ctx.newest.get("residency")
    row = _row(record, opt.id)
    if not opt.sites:
        why = message("decision", "the option declares no sites")
        return _item("residency", spec, "not_checked", why, command="options[].sites")
    if record is None or row is None:
        why = message("decision", "residency not checked")
        return _item("residency", spec, "not_checked", why, command=command)
    if row.get("stopped"):
        why = message("decision", "its sites break a residency requirement")
        return _item("residency", spec, "failed", why, [record], command)
    why = message("decision", "every site is where the requirements allow")
    return _item("residency", spec, "verified", why, [record])


def _on_call(ctx: RuleContext, opt: OptionDecl) -> CoverageItem:
    spec = ["R3", "G3"]
    command = "gpudecide check raci"
    record = ctx.of("raci", opt.id) or ctx.newest.get("raci")
    row = _row(record, opt.id)
    if record is None or row is None or not row.get("answered", True):
        why = message("decision", "no RACI rows for this option")
        fill = command if record is None else "raci.yaml activities[].assignments"
        return _item("on_call", spec, "not_checked", why, command=fill)
    stops = {f.get("id") for f in row.get("findings", []) if f.get("stop")}
    if stops & {"no_on_call", "no_on_call_duty", "no_accountable", "no_node_replacement"}:
        why = message("decision", "an on-call duty has no accountable person of the team")
        return _item("on_call", spec, "failed", why, [record], command)
    if not row.get("on_call_load"):
        on_call = {
            str(a.get("id")) for a in record.figures.get("activities", []) if a.get("on_call")
        }
        if on_call and on_call <= set(row.get("not_checked") or []):
            why = message("decision", "its on-call duties are not answered yet")
            fill = "raci.yaml activities[].assignments"
            return _item("on_call", spec, "not_checked", why, [record], fill)
        why = message("decision", "no on-call activity names a person of the team")
        return _item("on_call", spec, "failed", why, [record], command)
    why = message("decision", "every on-call duty has an accountable person of the team")
    return _item("on_call", spec, "verified", why, [record])


def _derived_rights(ctx: RuleContext, opt: OptionDecl) -> CoverageItem:
    spec = ["E6"]
    command = "options[].derived_weights_document"
    if opt.derived_weights == "unclear":
        why = message("decision", "rights to derived weights are unclear")
        return _item("derived_rights", spec, "failed", why, command=command)
    if opt.derived_weights == "unknown":
        why = message("decision", "rights to derived weights are not stated")
        return _item("derived_rights", spec, "not_checked", why, command=command)
    if opt.derived_weights_document:
        why = message(
            "decision",
            "the team's rights rest on {document}",
            document=opt.derived_weights_document,
        )
        return _item("derived_rights", spec, "verified", why)
    why = message(
        "decision",
        "the team states the rights ({source}) but names no document",
        source=opt.derived_weights_source or "-",
    )
    return _item("derived_rights", spec, "claimed", why, command=command)


def _gpu_health(ctx: RuleContext, opt: OptionDecl) -> CoverageItem:
    spec = ["G2"]
    command = f"gpudecide cordon TELEMETRY --option {opt.id} --apply"
    record = ctx.of("cordon", opt.id)
    if record is None:
        why = message("decision", "no GPU telemetry of this option read")
        return _item("gpu_health", spec, "not_checked", why, command=command)
    if not record.figures.get("orchestrator"):
        why = message(
            "decision", "telemetry is read, but no automatic cordon is wired to its scheduler"
        )
        return _item("gpu_health", spec, "claimed", why, [record], command)
    why = message("decision", "hardware telemetry drives cordon and drain on its scheduler")
    return _item("gpu_health", spec, "verified", why, [record])


def _hybrid_consistent(ctx: RuleContext, opt: OptionDecl) -> CoverageItem:
    spec = ["H1", "H2", "H3"]
    command = "gpudecide check hybrid"
    record = ctx.newest.get("hybrid")
    row = None
    if record is not None:
        row = next(
            (h for h in record.figures.get("hybrids", []) if h.get("option") == opt.id), None
        )
    if record is None or row is None:
        why = message("decision", "the contours were not compared")
        return _item("hybrid_consistent", spec, "not_checked", why, command=command)
    if row.get("findings"):
        why = message("decision", "its contours differ in container, format or evaluation")
        return _item("hybrid_consistent", spec, "failed", why, [record], command)
    why = message("decision", "one container, format, manifest and evaluation on both contours")
    return _item("hybrid_consistent", spec, "verified", why, [record])


Check = Callable[[RuleContext, OptionDecl], CoverageItem]
# The must-prove items of every option, in the order the report lists them.
ITEMS: tuple[Check, ...] = (
    _export_proven,
    _export_audited,
    _node_loss,
    _start_measured,
    _isolation,
    _residency,
    _on_call,
    _derived_rights,
)
# Dedicated options own their hardware's health (G2, G3).
DEDICATED_ITEMS: tuple[Check, ...] = (_gpu_health,)


def _own(ctx: RuleContext, opt: OptionDecl) -> list[CoverageItem]:
    checks = ITEMS + (DEDICATED_ITEMS if opt.kind in DEDICATED else ())
    return [check(ctx, opt) for check in checks]


def coverage(ctx: RuleContext, opt: OptionDecl) -> list[CoverageItem]:
    """The must-prove items of one option; a hybrid's from its contours and its own."""
    if opt.kind != "hybrid":
        return _own(ctx, opt)
    weakest: dict[str, CoverageItem] = {}
    for cid in opt.contours:
        contour = ctx.option(cid)
        if contour is None:
            continue
        for item in _own(ctx, contour):
            item.contour = cid
            held = weakest.get(item.id)
            if held is None or STATES.index(item.state) < STATES.index(held.state):
                weakest[item.id] = item
    # The hybrid's own rows (its sites, its isolation answers) count beside its contours'.
    for check in (_isolation, _residency, _derived_rights):
        item = check(ctx, opt)
        held = weakest.get(item.id)
        if held is None or STATES.index(item.state) < STATES.index(held.state):
            weakest[item.id] = item
    return [*weakest.values(), _hybrid_consistent(ctx, opt)]


def unverified(items: list[CoverageItem]) -> list[CoverageItem]:
    """The items that are not verified."""
    return [i for i in items if i.state != "verified"]
