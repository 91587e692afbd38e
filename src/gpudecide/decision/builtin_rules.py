"""The words the analyses write into their figures, as the decision's rules and conditions
show them (SPEC D3-D5); the rules themselves are their packages': the profile's in
`gpudecide.jobs.rules`, the queue and replay rules in `gpudecide.queue.rules`, the export
audit's in `gpudecide.artifacts.rules`, the cost and scale rules in `gpudecide.cost.rules`.
Each rule says how it got its score.

Thresholds are bands, not tuning knobs: each band is named in the rule text, so a reader can
check the score against the figure in the evidence it cites. Every rule text is a message of
the "decision" catalogue (`rule_message`, `clear_message`) and its English rendering (`rule`,
`clear`), so the report and the terminal say it in the reader's language.
"""

from __future__ import annotations

from gpudecide.findings import StopFactor, Suggestion
from gpudecide.i18n import N_
from gpudecide.message import Message, english, message

__all__ = ["WORDS", "Finding", "word"]


Finding = Suggestion | StopFactor

# Words the analyses write into their figures, shown inside rule texts in the reader's language.
WORDS = {
    "bursty": N_("bursty"),
    "steady": N_("steady"),
    "no load": N_("no load"),
    "predictable": N_("predictable"),
    "partly predictable": N_("partly predictable"),
    "unpredictable": N_("unpredictable"),
    "not measurable": N_("not measurable"),
    "peak": N_("peak"),
    "full": N_("full"),
    "pass": N_("pass"),
    "warn": N_("warn"),
    "fail": N_("fail"),
    "info": N_("info"),
}


def word(value: object) -> Message | str:
    """A word of the figures as a message (known words), else the value as written."""
    text = str(value)
    return message("decision", WORDS[text]) if text in WORDS else text


def _stop(
    option: str, sid: str, msg: Message, cited: tuple[str, ...], clear: Message
) -> StopFactor:
    return StopFactor(
        option,
        sid,
        english(msg),
        cited,
        clear=english(clear),
        rule_message=msg,
        clear_message=clear,
    )
