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

CRITERION = "artifacts"


def _first_reason(record: ev.Evidence) -> str:
    reasons = record.figures.get("reasons") or []
    return str(reasons[0]) if reasons else record.summary


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
            )
        ]
    warned = [s["name"] for s in record.figures.get("steps", []) if s.get("status") == "warn"]
    return [
        Suggestion(
            option,
            CRITERION,
            4,
            f"export test passed with warnings in {', '.join(warned) or 'a step'} (4)",
            (record.id,),
        )
    ]
