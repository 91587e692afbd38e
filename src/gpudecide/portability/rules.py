"""Decision rules of `export_test` evidence (SPEC D3-D5, E1, E4).

A failed export test is its option's stop factor `export_test_failed` (the article: no closed
data moves before the export is proven). A passed test scores the option's `artifacts`
criterion 5 (the audit alone stops at 4), wherever it ran: the decision grades the record's
`contour` against the option's and marks a test from another contour a rehearsal, which
keeps its score but verifies nothing. A test that passed with warnings (manifest lint
errors, manual actions, closed formats) scores 4. A test run on someone else's export
(`--from-export`) that resumed without a reference curve to compare with scores 4 too.

A test the tool or its harness could not finish (status `error`, verdict `info`: a worker
that crashed or died without a result, a harness timeout) is no verdict on the option: it
raises no stop factor and suggests no score. Each rule's English (`rule`, `clear`) is its
message said in English.
"""

from __future__ import annotations

from gpudecide import evidence as ev
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.message import Message, english, message
from gpudecide.portability.figures import ExportTestFigures, figures_of
from gpudecide.portability.texts import as_written, step_name

__all__ = ["CRITERION", "rules"]

CRITERION = "artifacts"


def _first_reason(record: ev.Evidence, f: ExportTestFigures) -> Message:
    """The first reason as the record stored it as a message (older records: as written)."""
    stored = f.stored_reasons()
    if stored:
        first: Message = stored[0]  # type: ignore[assignment]  # a Message as its JSON dict
        return first
    if not f.reasons and f.messages.summary is not None:
        summary: Message = f.messages.summary  # type: ignore[assignment]
        return summary
    return as_written(f.reasons[0] if f.reasons else record.summary)


def _failed(record: ev.Evidence, f: ExportTestFigures, option: str) -> StopFactor:
    reason = _first_reason(record, f)
    rule = message("portability", "export test failed: {reason}", reason=reason)
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
    f = figures_of(record)
    if not f.option or f.status == "error" or record.verdict == "info":
        return []
    if record.verdict == "fail":
        return [_failed(record, f, f.option)]
    if record.verdict == "pass":
        passed = message(
            "portability",
            "export test passed: restored elsewhere, resumed at step {k}, final metrics within "
            "the plan's tolerance (5)",
            k=f.checkpoint_step,
        )
        return [
            Suggestion(f.option, CRITERION, 5, english(passed), (record.id,), rule_message=passed)
        ]
    warned = [s.name for s in f.steps if s.status == "warn"]
    # The step names in the reader's language ("; " between them), else "a step".
    steps: Message | list[Message] = [step_name(n) for n in warned] or message(
        "portability", "a step"
    )
    four = message("portability", "export test passed with warnings in {steps} (4)", steps=steps)
    return [Suggestion(f.option, CRITERION, 4, english(four), (record.id,), rule_message=four)]
