"""Errors the CLI turns into exit codes: bad input is exit 2, a failed check is exit 1."""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Bad input: names the file, the line and/or field, what is wrong and what to do.

    The CLI prints it as one line and exits with code 2, without a traceback.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.hint = hint
        super().__init__(self.one_line())

    def location(self) -> str:
        """`file:line: field` prefix, with the parts that are known."""
        loc = ""
        if self.path:
            loc = self.path
            if self.line is not None:
                loc += f":{self.line}"
        if self.field:
            loc = f"{loc}: field {self.field!r}" if loc else f"field {self.field!r}"
        return loc

    def one_line(self) -> str:
        """The whole error as a single line of text."""
        loc = self.location()
        text = f"{loc}: {self.message}" if loc else self.message
        if self.hint:
            text += f" ({self.hint})"
        return " ".join(text.split())

    def as_dict(self) -> dict[str, object]:
        """Machine form, used by `--json` output."""
        return {
            "error": self.message,
            "path": self.path,
            "line": self.line,
            "field": self.field,
            "hint": self.hint,
        }


EXCERPT_CHARS = 12


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """A short, masked quotation of input text for an error message (issue 14 item 8).

    At most `limit` characters, quoted; anything but plain ASCII letters, digits and a few
    separators is shown as `?` and a longer value ends in `…`, so an error about a file
    that is not what was expected cannot print a line of it (a password hash, a key).
    """
    text = str(value)
    short = "".join(c if c.isascii() and (c.isalnum() or c in " ._-:/+") else "?" for c in text)
    if len(short) > limit:
        short = short[:limit] + "…"
    return f"'{short}'"
