"""The schema's words of drills and cordon as a person reads them (domain "drills").

The records store ids: a GPU's action (`drain-and-reset`), a breaker state (`held`), a
drill's verdict (`pass`), a G4 question (`data_kept`). The tables map each to an English
msgid, translated where it is shown (`word`) or stored inside a sentence (`word_message`);
an id a table does not know (a newer record, a team's own word) is shown as it is. The
re-runs found in the job logs are the queue's (`gpudecide.queue.words.RESTART_VERDICTS`).
"""

from __future__ import annotations

from gpudecide.i18n import N_, translator
from gpudecide.message import Message, message

__all__ = ["END_STATUS", "QUESTIONS", "WORDS", "word", "word_message"]

_ = translator("drills")

WORDS: dict[str, str] = {
    # A GPU's action (cordon_rules.ACTIONS).
    "ok": N_("ok"),
    "watch": N_("watch"),
    "cordon": N_("cordon"),
    "drain-and-reset": N_("drain-and-reset"),
    "replace": N_("replace"),
    # A node's circuit-breaker state (cordon.NodePlan.breaker).
    "allowed": N_("allowed"),
    "held": N_("held by the circuit breaker"),
    "bypassed": N_("let through: uncorrectable errors"),
    "none": N_("nothing to do"),
    # A drill's verdict (SPEC G4).
    "pass": N_("pass"),
    "fail": N_("fail"),
}

# How a drill's job ended, as its lifecycle marks say (`gpudecide.drills.job`).
END_STATUS: dict[str, str] = {
    "completed": N_("completed"),
    "failed": N_("failed"),
    "storage_denied": N_("storage denied"),
    "disk_full": N_("disk full"),
}

# The three G4 questions a drill answers, by the field that holds the answer.
QUESTIONS: dict[str, str] = {
    "noticed": N_("noticed"),
    "data_kept": N_("data kept"),
    "explained": N_("explained"),
}


def word(value: str, table: dict[str, str] = WORDS) -> str:
    """An id of `table` in the reader's language (an unknown id as it is)."""
    return _(table[value]) if value in table else value


def word_message(value: str, table: dict[str, str] = WORDS) -> Message | str:
    """An id of `table` as a message, to store inside a sentence (an unknown id as it is)."""
    return message("drills", table[value]) if value in table else value
