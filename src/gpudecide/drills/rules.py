"""Decision rules of drill evidence (SPEC G1, G4 -> D3, D5).

- A failed drill suggests a low `operations` score for the option (contour) it ran on; a
  passed one a good score: the team has seen that failure handled.
- A node-loss drill whose job restarted from zero is the stop factor candidate
  `cannot_resume_after_node_loss`: on that contour a lost node costs the whole run so far.

A record is judged by its own drill only. The decision keys drill records by scenario
(`decision.context.check_of`): the record of node-loss stands for node loss, and what a
gpu-delay record carries of its game day (the node-loss row among them) is a summary for
the report, never a second verdict on node loss. So a later passing gpu-delay drill neither
clears nor repeats the node-loss stop; only the next node-loss record does.

Pure functions of the record: no file reads.
"""

from __future__ import annotations

from typing import cast

from gpudecide import evidence as ev
from gpudecide.drills.drill_figures import GameDayRow, figures_of
from gpudecide.drills.words import QUESTIONS, word_message
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.message import Message, english, is_message, message

__all__ = [
    "FAIL_SCORE",
    "NODE_LOSS_FAIL_SCORE",
    "PASS_SCORE",
    "rules",
]

PASS_SCORE = 4
FAIL_SCORE = 2
NODE_LOSS_FAIL_SCORE = 1


def rules(record: ev.Evidence) -> list[Suggestion | StopFactor]:
    """Score suggestions and stop factors of one `drill` record (other kinds: none), from its
    own drill alone (its game day's other rows have records of their own)."""
    if record.kind != "drill":
        return []
    f = figures_of(record)
    if not f.option:
        return []
    return _row_rules(f.option, f.own_row(), (record.id,))


def _row_rules(option: str, row: GameDayRow, ids: tuple[str, ...]) -> list[Suggestion | StopFactor]:
    drill = row.drill
    out: list[Suggestion | StopFactor] = []
    if row.verdict == "pass":
        said = message(
            "drills", "game day {drill} passed: noticed, data kept, status explained", drill=drill
        )
        out.append(Suggestion(option, "operations", PASS_SCORE, english(said), ids, said))
    else:
        missing = [k for k in QUESTIONS if not getattr(row, k)]
        score = NODE_LOSS_FAIL_SCORE if drill == "node-loss" else FAIL_SCORE
        said = message(
            "drills",
            "game day {drill} failed ({missing}): {status}",
            drill=drill,
            missing=[word_message(k, QUESTIONS) for k in missing] or [message("drills", "verdict")],
            status=_status(row),
        )
        # --json names the unanswered G4 questions by their fields and quotes the English
        # status the record holds.
        rule = f"game day {drill} failed ({', '.join(missing) or 'verdict'}): {row.status}"
        out.append(Suggestion(option, "operations", score, rule, ids, said))
    if drill == "node-loss" and (row.restarted_from_zero or row.resumed_from_step == 0):
        clear = message(
            "drills",
            "write checkpoints to external storage and re-run `gpudecide drill node-loss` "
            "until it resumes from the last checkpoint",
        )
        out.append(
            StopFactor(
                option,
                "cannot_resume_after_node_loss",
                f"node-loss drill: the job restarted from zero ({row.status})",
                ids,
                clear=english(clear),
                rule_message=message(
                    "drills",
                    "node-loss drill: the job restarted from zero ({status})",
                    status=_status(row),
                ),
                clear_message=clear,
            )
        )
    return out


def _status(row: GameDayRow) -> Message:
    """The drill's status as a message (older records without one: the English text)."""
    if is_message(row.status_message):
        return cast(Message, row.status_message)
    return message("drills", "{text}", text=row.status)
