"""The author a run declares (`--author`, the workspace's `author`) and the rule for the name.

`gpudecide.evidence` names the declared author in every record's producer. Kept apart from
it so that declaring one and reading gpudecide.yaml (`init`, `--help` in a workspace) do not
load the record models.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Annotated, Literal

from pydantic import AfterValidator

from gpudecide.errors import InputError

__all__ = ["AUTHOR_MAX_CHARS", "AuthorName", "Declared", "check_author", "declared", "set_author"]

AUTHOR_MAX_CHARS = 200


def check_author(name: str) -> str:
    """An author as records keep it: the name stripped, one line of at most
    AUTHOR_MAX_CHARS printable characters (a control character would reach a terminal
    when the record is shown); a ValueError otherwise."""
    name = name.strip()
    if len(name) > AUTHOR_MAX_CHARS or not all(c.isprintable() for c in name):
        raise ValueError("an author is one line of at most 200 printable characters")
    return name


# The workspace's `author` (gpudecide.yaml) is checked by the same rule as `--author`.
AuthorName = Annotated[str, AfterValidator(check_author)]

Declared = Literal["option", "workspace"]

# The author a run declares: `--author` (source "option") and the workspace's `author`
# (source "workspace"), set once per run like the reader's language; None: not declared.
_AUTHOR: dict[str, ContextVar[str | None]] = {
    "option": ContextVar("gpudecide_author_option", default=None),
    "workspace": ContextVar("gpudecide_author_workspace", default=None),
}


def set_author(name: str | None, source: Declared = "option") -> None:
    """Declare the author of the records this run writes: `--author` (source "option"), or
    the workspace's `author` (source "workspace", which `--author` overrides). None or an
    empty name: not declared. A name that is not one printable line is an InputError."""
    if name is not None:
        try:
            name = check_author(name)
        except ValueError as exc:
            field = "--author" if source == "option" else "author"
            raise InputError(str(exc), field=field, hint="give a name, e.g. 'A. Person'") from None
    _AUTHOR[source].set(name or None)


def declared(source: Declared) -> str | None:
    """The author this run declared from `source`; None when it declared none."""
    return _AUTHOR[source].get()
