"""Decision rules of `export_test` evidence (SPEC D3-D5, E1, E4).

A failed export test is its option's stop factor `export_test_failed` (the article: no closed
data moves before the export is proven). A passed test scores the option's `artifacts`
criterion 5 (the audit alone stops at 4); a test that passed with warnings (manifest lint
errors, manual actions, closed formats) scores 4. A test run on someone else's export
(`--from-export`) that resumed without a reference curve to compare with scores 4 too.
"""

from __future__ import annotations

from gpudecide import evidence as ev
from gpudecide.decision.model import StopFactor, Suggestion
from gpudecide.portability.texts import Message, as_written, step_name
from gpudecide.report.i18n import message

CRITERION = "artifacts"


def _first_reason(record: ev.Evidence) -> str:
    reasons = record.figures.get("reasons") or []
    return str(reasons[0]) if reasons else record.summary


def _first_reason_message(record: ev.Evidence) -> Message:
    """The first reason as the record stored it as a message (older records: as written)."""
    stored = record.figures.get("reason_messages") or []
    reasons = record.figures.get("reasons") or []
    if stored and len(stored) == len(reasons):
        return dict(stored[0])
    msgs = record.figures.get("messages") or {}
    if not reasons and isinstance(msgs.get("summary"), dict):
        return dict(msgs["summary"])
    return as_written(_first_reason(record))


def rules(record: ev.Evidence) -> list[Suggestion | StopFactor]:
    """Stop factor for a failed test, `artifacts` score for a passed one; pure."""
    if record.kind != "export_test":
        return []
    option = record.figures.get("option")
    if not option:
        return []
    if record.verdict == "fail":
        return [
            StopFactor(
                option,
                "export_test_failed",
                f"export test failed: {_first_reason(record)}"[:300],
                (record.id,),
                clear="an export test of this option that passes, planned and run again",
                rule_message=message(
                    "portability",
                    "export test failed: {reason}",
                    reason=_first_reason_message(record),
                ),
                clear_message=message(
                    "portability",
                    "an export test of this option that passes, planned and run again",
                ),
            )
        ]
    k = record.figures.get("checkpoint_step")
    if record.verdict == "pass":
        return [
            Suggestion(
                option,
                CRITERION,
                5,
                f"export test passed: restored elsewhere, resumed at step {k}, final metrics "
                "within the plan's tolerance (5)",
                (record.id,),
                rule_message=message(
                    "portability",
                    "export test passed: restored elsewhere, resumed at step {k}, final "
                    "metrics within the plan's tolerance (5)",
                    k=k,
                ),
            )
        ]
    warned = [s["name"] for s in record.figures.get("steps", []) if s.get("status") == "warn"]
    # The step names in the reader's language ("; " between them), else "a step".
    steps: Message | list[Message] = [step_name(n) for n in warned] or message(
        "portability", "a step"
    )
    return [
        Suggestion(
            option,
            CRITERION,
            4,
            f"export test passed with warnings in {', '.join(warned) or 'a step'} (4)",
            (record.id,),
            rule_message=message(
                "portability", "export test passed with warnings in {steps} (4)", steps=steps
            ),
        )
    ]
