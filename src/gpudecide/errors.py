"""Errors the CLI turns into exit codes: bad input is exit 2, a failed check is exit 1."""

from __future__ import annotations

import errno
from collections.abc import Callable
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

    def location(self, say: Callable[[str], str] = str) -> str:
        """`file:line: field` prefix, with the parts that are known (`say`: see one_line)."""
        loc = ""
        if self.path:
            loc = self.path
            if self.line is not None:
                loc += f":{self.line}"
        if self.field:
            field = say(f"field {self.field!r}")
            loc = f"{loc}: {field}" if loc else field
        return loc

    def one_line(self, say: Callable[[str], str] = str) -> str:
        """The whole error as a single line of text. `say` turns each English part (the
        message, the hint, "field 'x'") into the reader's language; the file and line stay."""
        loc = self.location(say)
        message = say(self.message)
        text = f"{loc}: {message}" if loc else message
        if self.hint:
            text += f" ({say(self.hint)})"
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


# What to do about each file-system fault, by errno (issue 14 item 5).
_OS_HINTS: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("no space left on the device", "free some space or write somewhere else"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or write somewhere else"),
    errno.EROFS: ("read-only file system", "write to a folder on a writable file system"),
    errno.EACCES: ("permission denied", "check the owner and mode of the path"),
    errno.EPERM: ("operation not permitted", "check the owner and mode of the path"),
    errno.ENOTDIR: (
        "a part of this path is a file, not a folder",
        "choose a path whose parents are folders",
    ),
    errno.EISDIR: ("is a directory, not a file", "give a file path"),
    errno.EEXIST: ("exists already and is in the way", "remove it or choose another path"),
    errno.ENOENT: ("no such file or directory", "check the path"),
    errno.ENAMETOOLONG: ("file name too long", "choose a shorter path"),
    errno.EIO: ("input/output error", "check the disk"),
    errno.EMFILE: ("too many open files", "raise the limit (ulimit -n)"),
    errno.ENOTEMPTY: ("folder is not empty", "empty it or choose another"),
    errno.EPIPE: ("output closed before everything was written", "read the whole output"),
}


def from_os_error(exc: OSError, path: str | Path | None = None) -> InputError:
    """An OSError as the one-line error the CLI prints: what happened, where, what to do."""
    known = _OS_HINTS.get(exc.errno or 0)
    message, hint = known or (exc.strerror or str(exc), "check the path and try again")
    return InputError(message, path=path if path is not None else exc.filename, hint=hint)
