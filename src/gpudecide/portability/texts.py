"""What the export test says to people, as messages (domain "portability").

Every sentence the test writes (a step's detail, a reason, the summary, the notes, the
throughput note) is a `gpudecide.message.Message` made where its fact is known; the record
keeps its English beside it, and the report and the commands render it in the reader's
language. This module holds the pieces the steps share: joining parts, text that has no
message (a library's or a child process's own words), step and device names, the plan's
tolerance, figures rounded so that every language shows the same digits, and the words of
the record's statuses as the report and the command print them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpudecide.i18n import N_, translator
from gpudecide.message import Message, message, render

__all__ = [
    "DOMAIN",
    "artifacts_word",
    "as_written",
    "device_name",
    "executor_word",
    "figure",
    "joined",
    "plain",
    "say_stored",
    "status_word",
    "step_label",
    "step_name",
    "tolerance",
]

DOMAIN = "portability"

_ = translator("portability")


def plain(template: str, **args: Any) -> Message:
    """A message that is only punctuation around its fields ("{path}: {text}").

    It reads the same in every language, so it stays out of the catalogues (the template is
    passed as a variable, which keeps it out of the extraction) and renders as written.
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

# Statuses, verdicts and transfer names as a record writes them (English ids).
_WORDS: dict[str, str] = {
    "pass": N_("pass"),
    "fail": N_("fail"),
    "warn": N_("warn"),
    "skip": N_("skip"),
    "error": N_("error"),
    "info": N_("info"),
    "export": N_("export"),
    "restore": N_("restore"),
}


# Where a test ran and whose artifacts it tested, in words (the record keeps the ids).
_EXECUTORS: dict[str, str] = {
    "local": N_("local processes"),
    "slurm": N_("Slurm jobs"),
    "k8s": N_("Kubernetes Jobs"),
}
_ARTIFACTS: dict[str, str] = {
    "vendor_export": N_("the vendor's own export, as a team receives it"),
    "produced_here": N_("trained and exported by this test"),
}


def executor_word(executor: str) -> str:
    """How the test's jobs ran, in the reader's language (another id as written)."""
    return _(_EXECUTORS[executor]) if executor in _EXECUTORS else executor


def artifacts_word(artifacts: str) -> str:
    """Whose artifacts the test tested, in the reader's language."""
    return _(_ARTIFACTS[artifacts]) if artifacts in _ARTIFACTS else artifacts


def status_word(word: str) -> str:
    """A status, verdict or transfer name in the reader's language (another as written)."""
    return _(_WORDS[word]) if word in _WORDS else word


def device_name(device: str) -> Message:
    """A torch device type ("cpu", "cuda") as a message; another name as written."""
    return _DEVICES.get(device) or as_written(device)


def step_name(name: str) -> Message:
    """The step (or transfer) `name` as a message; an unknown name is shown as written."""
    return _STEP_NAMES.get(name) or as_written(name)


def step_label(name: str) -> str:
    """A step's name in the reader's language (the record keeps the English name)."""
    return render(step_name(name))


def as_written(text: str) -> Message:
    """Text with no message of its own (an exception's words, a log tail, a team's words):
    shown as written in every language."""
    return plain("{parts}", parts=text)


def joined(parts: Sequence[Message]) -> Message:
    """Several messages read as one, separated by "; " (as the English details are)."""
    if len(parts) == 1:
        return parts[0]
    return plain("{parts}", parts=list(parts))


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


def say_stored(text: str, stored: Mapping[str, Any] | None) -> str:
    """A text the record keeps in English, in the reader's language: its stored message,
    else as written (a record made before its sentences were stored as messages)."""
    return render(stored) if stored else text
