"""Errors the CLI turns into exit codes: bad input is exit 2, a failed check is exit 1."""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path

from gpudecide.i18n import translator
from gpudecide.redact import looks_like_credential

__all__ = ["EXCERPT_CHARS", "InputError", "TemplateError", "excerpt", "from_os_error"]


_E = translator("errors")


class TemplateError(ValueError):
    """A validator's refusal as a template of the errors catalogue and its values: pydantic
    reports it as a value error, and `inputs.validate_model` turns it into the InputError
    of the file, said in the reader's language (a plain ValueError would reach the reader in
    English)."""

    def __init__(self, template: str, **values: object) -> None:
        self.template = template
        self.values = values
        super().__init__(_fill(template, values))


class InputError(Exception):
    """Bad input: names the file, the line and/or field, what is wrong and what to do.

    `message` and `hint` are English msgids of the `errors` catalogue; their `{fields}` are
    filled from `values`, which are shown as written in every language (a quoted value, a
    number, a name):

        InputError("is a {kind!r} record, not {want!r}", path=p, field="kind", kind=k, want=w)

    The CLI prints it as one line in the reader's language and exits with code 2, without a
    traceback; `--json` carries the English.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
        **values: object,
    ) -> None:
        self.template = message
        self.hint_template = hint
        self.values = values
        self.message = _fill(message, values)
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.hint = _fill(hint, values) if hint is not None else None
        super().__init__(self.one_line())

    def _say(self, template: str, say: Callable[[str], str]) -> str:
        """A template in the reader's language, filled. `say` is the translation of a text
        written without values (transitional, for errors still made with an f-string)."""
        translated = _E(template)
        if translated == template and not self.values:
            return say(template)
        return _fill(translated, self.values)

    def location(self, say: Callable[[str], str] = str) -> str:
        """`file:line: field` prefix, with the parts that are known."""
        loc = ""
        if self.path:
            loc = self.path
            if self.line is not None:
                loc += f":{self.line}"
        if self.field:
            field = _E("field {field}").format(field=repr(self.field))
            loc = f"{loc}: {field}" if loc else field
        return loc

    def one_line(self, say: Callable[[str], str] = str) -> str:
        """The whole error as a single line of text in the reader's language; the file,
        the line and the values stay as written."""
        loc = self.location(say)
        message = self._say(self.template, say)
        text = f"{loc}: {message}" if loc else message
        if self.hint_template:
            text += f" ({self._say(self.hint_template, say)})"
        return " ".join(text.split())

    def as_dict(self) -> dict[str, object]:
        """Machine form, used by `--json` output (English)."""
        return {
            "error": self.message,
            "path": self.path,
            "line": self.line,
            "field": self.field,
            "hint": self.hint,
        }


def _fill(template: str, values: dict[str, object]) -> str:
    """A template with its values; a template without values is a finished text (it may
    hold braces of its own, a JSON excerpt say)."""
    return template.format(**values) if values else template


EXCERPT_CHARS = 12


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """A short, masked quotation of input text for an error message (issue 14 item 8).

    At most `limit` characters, quoted; anything but plain ASCII letters, digits and a few
    separators is shown as `?` and a longer value ends in `…`, so an error about a file
    that is not what was expected cannot print a line of it (a password hash, a key).
    """
    text = str(value)
    if looks_like_credential(text):
        # Not even a prefix of a key: its first characters narrow a search for the rest.
        return "'…' (masked: it looks like a credential)"
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
