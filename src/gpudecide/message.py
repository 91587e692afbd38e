"""A sentence made where its fact is known and said in the reader's language where it is
shown: the one `Message` of gpudecide.

A record stores what a person reads (its summary, its notes, a finding, a rule's reason) as
messages: the English msgid of a catalogue domain with its `{fields}` and their values,
JSON-ready, so an evidence file holds no translated text and is the same in every language.
`render` says one in the reader's language (`gpudecide.i18n.current_language`):

    message("cost", "{option} costs {total:money} {currency} a month", option=..., ...)
    nmessage("queue", "{n} job waits", "{n} jobs wait", count="n", n=3)
    render(msg)          # "3 задания ждут" when the reader reads Russian

Field specs, formatted for the reader's locale by `gpudecide.fmt`: `pct` (a share as a
percentage, one decimal), `pct0` (whole percent), `money` / `money2` (a decimal string,
0 / 2 places), `num` (thousands separated, up to three decimals), `n1` (one decimal); any
other spec is Python's own (`{limit:.0%}`), without one a value shows as it is (ids,
names). A value that is itself a message (or a list of them) is rendered in the same
language, so a schema's word (a status, a role) nested in a sentence is translated too; the
team's own words stay as written.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NotRequired, TypeGuard

# typing_extensions: pydantic reads a TypedDict field on Python 3.11 only from there.
from typing_extensions import TypedDict

from gpudecide import fmt
from gpudecide.i18n import catalogue_of, current_language, speaking

__all__ = [
    "Message",
    "RecordTexts",
    "english",
    "is_message",
    "message",
    "nmessage",
    "record_texts",
    "render",
]


class Message(TypedDict):
    """A stored sentence: a catalogue `domain`, its English `msgid` and the `args` that fill
    its fields; a plural message adds the English `plural` and the name of the `count`
    field that picks the form."""

    domain: str
    msgid: str
    args: dict[str, Any]
    plural: NotRequired[str]
    count: NotRequired[str]


def message(domain: str, msgid: str, **args: Any) -> Message:
    """A message of `domain` (see the module's docstring for the field specs)."""
    return {"domain": domain, "msgid": msgid, "args": args}


def nmessage(domain: str, singular: str, plural: str, count: str = "n", **args: Any) -> Message:
    """A message with a plural: the form is chosen by the value of the field `count`, in the
    reader's language (Russian has three forms, a fraction takes the form of 2)."""
    if count not in args:
        raise TypeError(f"plural message without its count field {count!r}: {singular!r}")
    return {"domain": domain, "msgid": singular, "args": args, "plural": plural, "count": count}


def is_message(value: object) -> TypeGuard[Mapping[str, Any]]:
    """Whether `value` has the shape of a stored message."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("msgid"), str)
        and (isinstance(value.get("domain"), str))
    )


class _LocaleFormatter(string.Formatter):
    """`str.format` with the message specs, in the reader's locale."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if is_message(value):
            return render(value)
        if isinstance(value, list) and value and all(is_message(v) for v in value):
            return "; ".join(render(v) for v in value)
        if format_spec == "pct":
            return fmt.pct(value)
        if format_spec == "pct0":
            return fmt.pct0(value)
        if format_spec in ("money", "money2"):
            places = 2 if format_spec == "money2" else 0
            return fmt.money(None if value is None else str(value), places)
        if format_spec == "num":
            return fmt.fmt(value)
        if format_spec == "n1":
            return fmt.num(Decimal(str(value)), 1)
        if isinstance(value, list):
            return ", ".join(str(v) for v in value)
        if format_spec and isinstance(value, int | float | Decimal) and not isinstance(value, bool):
            return fmt.digits(super().format_field(value, format_spec))
        return str(super().format_field(value, format_spec))


_FORMATTER = _LocaleFormatter()


def _text(msg: Mapping[str, Any]) -> str:
    """The msgid's translation in the reader's language (the English when there is none)."""
    domain, msgid = str(msg["domain"]), str(msg["msgid"])
    cat = catalogue_of(domain, current_language())
    plural = msg.get("plural")
    if not plural:
        return cat.singular.get(msgid, msgid)
    n = (msg.get("args") or {}).get(str(msg.get("count") or "n"), 0)
    count = n if isinstance(n, int | float) and not isinstance(n, bool) else 0
    forms = cat.plurals.get(msgid) or (msgid, str(plural))
    return forms[min(cat.form(count), len(forms) - 1)]


def render(msg: Mapping[str, Any]) -> str:
    """A stored message in the reader's language."""
    return _FORMATTER.format(_text(msg), **dict(msg.get("args") or {}))


def english(msg: Mapping[str, Any]) -> str:
    """A message in English: the text a record keeps beside it (and `--json` shows)."""
    with speaking("en"):
        return render(msg)


@dataclass(frozen=True)
class RecordTexts:
    """What a record says to people: its English `summary` and `notes`, and the messages
    they were rendered from (`figures["messages"]`), so that a reader hears them in their
    own language."""

    summary: str
    notes: list[str]
    messages: dict[str, Any]


def record_texts(summary: Message, notes: Sequence[Message] = ()) -> RecordTexts:
    """A record's summary and notes from their messages (one message per note)."""
    return RecordTexts(
        summary=english(summary),
        notes=[english(n) for n in notes],
        messages={"summary": summary, "notes": list(notes)},
    )
