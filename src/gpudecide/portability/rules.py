"""Decision rules of `export_test` evidence (SPEC D3-D5, E1, E4).

A failed export test is its option's stop factor `export_test_failed` (the article: no closed
data moves before the export is proven). A passed test scores the option's `artifacts`
criterion 5 (the audit alone stops at 4); a test that passed with warnings (manifest lint
errors, manual actions, closed formats) scores 4. A test run on someone else's export
(`--from-export`) that resumed without a reference curve to compare with scores 4 too.
Each rule's English (`rule`, `clear`) is its message said in English.
"""

from __future__ import annotations

from typing import Any

from gpudecide import evidence as ev
from gpudecide.decision.model import StopFactor, Suggestion
from gpudecide.message import Message, english, message
from gpudecide.portability.texts import as_written, step_name

__all__ = ["CRITERION", "rules"]

CRITERION = "artifacts"


def _first_reason(record: ev.Evidence) -> Message:
    """The first reason as the record stored it as a message (older records: as written)."""
    figures: dict[str, Any] = record.figures
    stored = figures.get("reason_messages") or []
    reasons = figures.get("reasons") or []
    if stored and len(stored) == len(reasons):
        first: Message = stored[0]
        return first
    msgs = figures.get("messages") or {}
    if not reasons and isinstance(msgs.get("summary"), dict):
        summary: Message = msgs["summary"]
        return summary
    return as_written(str(reasons[0]) if reasons else record.summary)


def _failed(record: ev.Evidence, option: str) -> StopFactor:
    rule = message("portability", "export test failed: {reason}", reason=_first_reason(record))
    clear = message(
        "portability", "an export test of this option that passes, planned and run again"
    )
    return StopFactor(
        option,
        "export_test_failed",
        english(rule)[:300],
        (record.id,),
        clear=english(clear),
        rule_message=rule,
        clear_message=clear,
    )


def rules(record: ev.Evidence) -> list[Suggestion | StopFactor]:
    """Stop factor for a failed test, `artifacts` score for a passed one; pure."""
    if record.kind != "export_test":
        return []
    option = record.figures.get("option")
    if not option:
        return []
    if record.verdict == "fail":
        return [_failed(record, option)]
    if record.verdict == "pass":
        passed = message(
            "portability",
            "export test passed: restored elsewhere, resumed at step {k}, final metrics within "
            "the plan's tolerance (5)",
            k=record.figures.get("checkpoint_step"),
        )
        return [
            Suggestion(option, CRITERION, 5, english(passed), (record.id,), rule_message=passed)
        ]
    warned = [s["name"] for s in record.figures.get("steps", []) if s.get("status") == "warn"]
    # The step names in the reader's language ("; " between them), else "a step".
    steps: Message | list[Message] = [step_name(n) for n in warned] or message(
        "portability", "a step"
    )
    four = message("portability", "export test passed with warnings in {steps} (4)", steps=steps)
    return [Suggestion(option, CRITERION, 4, english(four), (record.id,), rule_message=four)]
