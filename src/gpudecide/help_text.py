"""`--help` in the reader's language (English, Russian, Kazakh).

The help texts are written in English in the commands (docstrings and `help=`), as typer
wants them. Before a run, `localize_help` walks the click command tree typer builds and puts
each text's translation from the `cli` catalogue in its place, with the few words typer and
click print themselves (panel titles, "Usage:", "[default: ...]"). The language is the one
the commands speak (`console.argv_language`), read from the command line before click
parses it because `--help` is answered during parsing. A text with no translation stays
English; `tests/i18n/test_help.py` fails when one lacks it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any, Protocol

from typer import Context
from typer.core import TyperGroup

from gpudecide.i18n import Language, speaking, translator
from gpudecide.report.i18n import N_

__all__ = ["Command", "commands", "help_texts", "localize_help", "shows_help"]


_ = translator("cli")

# The words typer's help panels print (its module constants), by constant name.
_TYPER_WORDS: dict[str, str] = {
    "ARGUMENTS_PANEL_TITLE": N_("Arguments"),
    "OPTIONS_PANEL_TITLE": N_("Options"),
    "COMMANDS_PANEL_TITLE": N_("Commands"),
    "DEFAULT_STRING": N_("[default: {}]"),
    "ENVVAR_STRING": N_("[env var: {}]"),
    "REQUIRED_LONG_STRING": N_("[required]"),
    "DEPRECATED_STRING": N_("(deprecated) "),
}
_USAGE = N_("Usage:")
_HELP_OPTION = N_("Show this message and exit.")


class Command(Protocol):
    """What this module reads and sets of a command of the tree. typer builds the tree from
    its own copy of click (a private module), so the commands are described by what they
    have, not by that class."""

    help: str | None
    short_help: str | None
    epilog: str | None
    params: list[Any]

    def get_help_option(self, ctx: Any) -> Any: ...

    def get_usage(self, ctx: Any) -> str: ...


def commands(root: Command) -> Iterator[Command]:
    """The root and every command under it."""
    yield root
    if isinstance(root, TyperGroup):
        for name in sorted(root.commands):
            yield from commands(root.commands[name])


def help_texts(root: Command) -> set[str]:
    """Every help text of the tree as written in the code (the `cli` catalogue's msgids)."""
    texts: set[str] = set()
    for cmd in commands(root):
        texts.update(t for t in (cmd.help, cmd.short_help, cmd.epilog) if t)
        texts.update(str(h) for p in cmd.params if (h := getattr(p, "help", None)))
    return texts


def shows_help(root: Command, args: list[str]) -> bool:
    """Whether this command line can print a help page: `--help`, or a group named without
    one of its commands (typer shows the group's help then). Finding the language can mean
    reading the workspace, which other runs are spared."""
    if "--help" in args:
        return True
    cmd = root
    for arg in args:
        if isinstance(cmd, TyperGroup) and arg in cmd.commands:
            cmd = cmd.commands[arg]
    return isinstance(cmd, TyperGroup)


def localize_help(root: Command, lang: Language) -> None:
    """Put the `lang` translation of every help text of the tree in place (English: as
    written), and typer's own panel words in that language."""
    if lang == "en" and "typer.rich_utils" not in sys.modules:
        # typer's panel words are still its English defaults; its help renderer (rich's
        # Markdown, markdown-it) loads only when a help page or a usage error is printed.
        return
    import typer.rich_utils as rich_utils

    with speaking(lang):
        for name, msgid in _TYPER_WORDS.items():
            setattr(rich_utils, name, _(msgid))
        if lang == "en":
            return
        for cmd in commands(root):
            if cmd.help:
                cmd.help = _(cmd.help)
            if cmd.short_help:
                cmd.short_help = _(cmd.short_help)
            if cmd.epilog:
                cmd.epilog = _(cmd.epilog)
            for param in cmd.params:
                text = getattr(param, "help", None)
                if text:
                    # Options and typer's arguments carry `help`; click's base class does not.
                    setattr(param, "help", _(text))  # noqa: B010
            _localize_usage_and_help_option(cmd)


def _localize_usage_and_help_option(cmd: Command) -> None:
    option = cmd.get_help_option(Context(cmd))  # type: ignore[arg-type]
    if option is not None:
        option.help = _(_HELP_OPTION)
    english, local = "Usage:", _(_USAGE)
    plain_usage = cmd.get_usage

    def get_usage(ctx: Context) -> str:
        text = plain_usage(ctx)
        return local + text[len(english) :] if text.startswith(english) else text

    cmd.get_usage = get_usage  # type: ignore[method-assign]
