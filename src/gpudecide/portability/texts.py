"""What the export test says to people, as messages (domain "portability", issue 10).

Every sentence the test writes (a step's detail, a reason, the summary, the notes, the
throughput note) is stored twice: the English text the JSON readers and the English report
have always had, and beside it a message (`gpudecide.report.i18n.message`: msgid and
arguments) that the report and the commands render in the reader's language. This module
holds the small pieces the steps share: joining parts, text that has no message (a
library's or a child process's own words), step names, the plan's tolerance, and figures
rounded so that every language shows the same digits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpudecide.report.i18n import P_, message, render_message

Message = dict[str, Any]
DOMAIN = "portability"

# Texts of this domain are stored as messages, so no English needs matching against the
# catalogue: marking one msgid as a pattern (P_) makes the domain offer only marked ones.
P_(
    "E4: no bitwise equality is required across devices and library versions; the "
    "tolerance was fixed in the plan before the test"
)


def plain(template: str, **args: Any) -> Message:
    """A message that is only punctuation around its fields ("{path}: {text}").

    It reads the same in every language, so it stays out of the catalogues: a msgid made of
    fields alone would match any English text as a pattern. (The template is passed as a
    variable, which keeps it out of the extraction.)
    """
    return message(DOMAIN, template, **args)


# The step names of the test as messages (the `name` field of each step stays English).
_STEP_NAMES: dict[str, Message] = {
    "plan": message("portability", "plan"),
    "train": message("portability", "train"),
    "export": message("portability", "export"),
    "delete": message("portability", "delete"),
    "resume": message("portability", "resume"),
    "record": message("portability", "record"),
    "restore": message("portability", "restore"),
}


# Devices as the reader's language writes them ("cpu" stays "cpu" in English).
_DEVICES: dict[str, Message] = {
    "cpu": message("portability", "cpu"),
    "cuda": message("portability", "cuda"),
}


def device_name(device: str) -> Message:
    """A torch device type ("cpu", "cuda") as a message; another name as written."""
    return _DEVICES.get(device) or as_written(device)


def step_name(name: str) -> Message:
    """The step (or transfer) `name` as a message; an unknown name is shown as written."""
    return _STEP_NAMES.get(name) or as_written(name)


def as_written(text: str) -> Message:
    """Text with no message of its own (an exception's words, a log tail, a team's words):
    shown as written in every language."""
    return plain("{parts}", parts=text)


def joined(parts: Sequence[Message]) -> Message:
    """Several messages read as one, separated by "; " (as the English details are)."""
    if len(parts) == 1:
        return parts[0]
    return plain("{parts}", parts=list(parts))


def english(msg: Message) -> str:
    """The English text of a message (what the JSON fields hold)."""
    return render_message(msg, "en")


def figure(value: float, digits: int = 3) -> float | str:
    """`value` to `digits` significant digits, for a `{x:num}` field.

    The report shows numbers with at most three decimals in the reader's locale; a value
    that needs more (a tolerance of 1e-05) is kept as its short English form, so that no
    language rounds it to 0.
    """
    rounded = float(f"{value:.{digits}g}")
    if round(rounded, 3) == rounded:
        return rounded
    return f"{value:.{digits}g}"


def tolerance(relative: float | None, absolute: float | None) -> Message:
    """The plan's tolerance: "0.02 relative", "0.001 absolute" or both joined by "or"."""
    if relative is not None and absolute is not None:
        return message(
            "portability",
            "{rel:num} relative or {abs:num} absolute",
            rel=figure(relative, 6),
            abs=figure(absolute, 6),
        )
    if absolute is not None:
        return message("portability", "{abs:num} absolute", abs=figure(absolute, 6))
    return message("portability", "{rel:num} relative", rel=figure(relative or 0.0, 6))


def render_detail(entry: dict[str, Any], lang: str, key: str = "detail") -> str:
    """`entry[key]` in `lang`: its stored message (`<key>_message`) when there is one."""
    from gpudecide.report.i18n import say

    text = str(entry.get(key) or "")
    return say(text, entry.get(f"{key}_message"), lang, ("portability",))
