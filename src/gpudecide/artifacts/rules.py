"""Decision rules of export audit evidence (SPEC E5, A2, D3, D5).

- `audit_rules`: an audit names the option whose export it read (`figures["option"]`); each
  lock-in hazard it found is a stop factor of that option (E5, D5), cleared only by an
  export without the hazard, audited again. A clean audit suggests the option's artifacts
  score: 4 when training can resume from the export (5 needs a passed export test, E1), 3
  when it holds weights only (A2). An audit that names no option scores nothing.
- `hazard_message`: the stop factor's text, the hazard's id with what it means (the audit
  section's words) and the file it concerns.

The rule reads the figures with `.get`: the decision reads any record it is given, written by
an older gpudecide or by hand, and a missing figure is no finding, never a crash. Its texts
are messages of the "artifacts" catalogue, said in the reader's language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gpudecide import evidence as ev
from gpudecide.artifacts.words import HAZARDS
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.message import Message, english, message

if TYPE_CHECKING:  # the decision passes its context; the artifacts never import the decision
    from gpudecide.decision.context import RuleContext

__all__ = ["Finding", "audit_rules", "hazard_message"]

Finding = Suggestion | StopFactor


def hazard_message(h: Mapping[str, Any]) -> Message:
    """The hazard's id, what it means (the audit section's words) and the file it concerns;
    an id the audit section does not know is shown as it is."""
    hid = str(h.get("id") or "?")
    meaning = HAZARDS.get(hid)
    path = h.get("path") or ""
    if meaning is None:
        return message("artifacts", "{hazard}: {path}", hazard=hid, path=path)
    return message(
        "artifacts",
        "{hazard} ({meaning}): {path}",
        hazard=hid,
        meaning=message("artifacts", meaning),
        path=path,
    )


def _suggest(option: str, score: int, msg: Message, cited: tuple[str, ...]) -> Suggestion:
    return Suggestion(option, "artifacts", score, english(msg), cited, rule_message=msg)


def _stop(option: str, msg: Message, cited: tuple[str, ...], clear: Message) -> StopFactor:
    return StopFactor(
        option,
        "export_hazard",
        english(msg),
        cited,
        clear=english(clear),
        rule_message=msg,
        clear_message=clear,
    )


def audit_rules(record: ev.Evidence, ctx: RuleContext) -> list[Finding]:
    """An export audit with a lock-in hazard stops its option (E5); a clean one scores 4
    (resumable) or 3 (weights only)."""
    option = record.figures.get("option")
    if not option or not isinstance(option, str):
        return []
    hazards = [h for h in record.figures.get("hazards") or [] if isinstance(h, Mapping)]
    if hazards:
        clear = message("artifacts", "an export without this hazard, audited again")
        return [_stop(option, hazard_message(h), (record.id,), clear) for h in hazards]
    if record.figures.get("resumable"):
        msg = message(
            "artifacts",
            "export audit without hazards; resumable (4; 5 needs a passed export test)",
        )
        return [_suggest(option, 4, msg, (record.id,))]
    msg = message("artifacts", "export audit without hazards; weights only (3)")
    return [_suggest(option, 3, msg, (record.id,))]
