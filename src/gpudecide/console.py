"""What every command shares: the consoles, `--json` and `--workspace` options, exit codes.

Commands live in `cli.py` and in each analysis package's own `cli.py`; all of them use these,
so bad input looks the same everywhere: one line, exit code 2, no traceback.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, cast

import typer
from rich.console import Console

from gpudecide.errors import InputError, from_os_error
from gpudecide.help_text import localize_help, shows_help
from gpudecide.i18n import (
    LANGUAGES,
    Language,
    current_language,
    set_language,
    speaking,
    translator,
)
from gpudecide.jsonio import check_finite
from gpudecide.workspace_root import configured_language, find_root

if TYPE_CHECKING:
    from rich.progress import Progress
    from typer.models import CommandInfo

    from gpudecide.workspace import Workspace

__all__ = [
    "CLICK_MESSAGES",
    "LANG_ENV",
    "AuthorOpt",
    "ClickException",
    "JsonOpt",
    "LangOpt",
    "UsageError",
    "WorkspaceOpt",
    "argv_language",
    "choose_language",
    "emit_json",
    "err",
    "error_line",
    "fail",
    "guard",
    "invoked_only",
    "language",
    "open_workspace",
    "os_error",
    "out",
    "print_written",
    "progress",
    "run_app",
]


# markup=False, emoji=False: every line may hold user text (a path, a job name, a field
# value); `file.csv:100:` must not turn into an emoji nor `[x]` into a style (issue 14 item 9).
# Style a line with `out.print(text, style="yellow")`, never with markup tags.
out = Console(highlight=False, soft_wrap=True, markup=False, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False, emoji=False)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object for machines.")]
LANG_ENV = "GPUDECIDE_LANG"
# The root options: who produces this run's evidence, and the language people read.
AuthorOpt = Annotated[
    str | None,
    typer.Option(
        "--author",
        envvar="GPUDECIDE_AUTHOR",
        help="Who produces this run's evidence, as every record names it (default: the "
        "workspace's author, else git's user.name and user.email, else the OS user).",
    ),
]
LangOpt = Annotated[
    str | None,
    typer.Option(
        "--lang",
        envvar=LANG_ENV,
        metavar="en|ru|kk",
        help="Language of what commands print for people (default: the workspace's "
        "report.language, else en); --json output is the same in every language.",
    ),
]
WorkspaceOpt = Annotated[
    Path | None,
    typer.Option("--workspace", "-w", help="Workspace folder (default: found from here up)."),
]


# The language of what commands print for people: the root `--lang` (or $GPUDECIDE_LANG)
# when given, else the workspace's `report.language` once a command opens its workspace,
# else English. It is set once per run (`gpudecide.i18n.set_language`); --json output is
# never translated (machines read ids).
_chosen: Language | None = None


def choose_language(lang: str | None) -> None:
    """Set the language of this run's human output from the root `--lang` (None: not
    given; then $GPUDECIDE_LANG, else English until a workspace says otherwise)."""
    global _chosen
    if lang is not None and lang not in LANGUAGES:
        choices = ", ".join(LANGUAGES)
        raise typer.BadParameter(f"{lang!r} is not one of {choices}", param_hint="--lang")
    env = os.environ.get(LANG_ENV, "").strip().lower()
    _chosen = lang if lang is not None else (env if env in LANGUAGES else None)
    set_language(_chosen or "en")


def language(ws: Workspace | None = None, configured: Language | None = None) -> Language:
    """The language people read a command's output in: `--lang`, else $GPUDECIDE_LANG, else
    the workspace's `report.language` (`configured`, where the workspace is not opened),
    else English; the run speaks it from now on."""
    lang: Language = _chosen or "en"
    if _chosen is None:
        env = os.environ.get(LANG_ENV, "").strip().lower()
        if env in LANGUAGES:
            lang = env
        elif ws is not None:
            lang = ws.config.report.language
        elif configured is not None:
            lang = configured
    set_language(lang)
    return lang


def argv_language(argv: list[str]) -> Language:
    """The language of `--help` and of errors, known without click (it answers `--help`
    while parsing, and an error may come before the root option is read): `--lang` among
    the arguments, else as `language` decides with the workspace found from here up, whose
    `report.language` is read without opening it (its models are not needed to answer). A
    gpudecide.yaml that cannot be read, or names no language, gives English here; the command
    itself reports what is wrong with it."""
    args = argv[: argv.index("--")] if "--" in argv else argv
    for i, arg in enumerate(args):
        value = args[i + 1] if arg == "--lang" and i + 1 < len(args) else None
        if arg.startswith("--lang="):
            value = arg.split("=", 1)[1]
        if value is not None and value.strip().lower() in LANGUAGES:
            return cast(Language, value.strip().lower())
    root = find_root(Path.cwd())
    return language(configured=configured_language(root) if root is not None else None)


_ = translator("report")
_E = translator("errors")


def print_written(path: Path | str) -> None:
    """The line a command ends with: where the evidence record it wrote went."""
    out.print(_("evidence: {path}").format(path=path), markup=False)


def _say_error(text: str) -> str:
    """An error text gpudecide did not make from a template, in the run's language: one of
    click's usage errors (`CLICK_MESSAGES`, its values kept, a nested problem said too), else
    the errors catalogue's entry for the whole text, else the text as written."""
    if current_language() == "en":
        return text
    for template, pattern in _click_patterns():
        found = pattern.match(text)
        if found:
            values = {
                k: _say_error(v) if k == "problem" else v for k, v in found.groupdict().items()
            }
            return _E(template).format(**values)
    return _E(text)


@lru_cache(maxsize=1)
def _click_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """Click's messages as patterns, the longest first ("No such command X. Did you mean Y?"
    before "No such command X.")."""
    out = []
    for template in sorted(CLICK_MESSAGES, key=len, reverse=True):
        parts = re.split(r"\{(\w+)\}", template)
        body = "".join(
            re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)" for i, part in enumerate(parts)
        )
        out.append((template, re.compile(body + r"\Z", re.DOTALL)))
    return out


def error_line(error: InputError, lang: Language) -> str:
    """`error: ...` in the reader's language: the message, hint and field word through the
    `errors` catalogue's patterns; file names, lines and quoted values stay as written."""
    with speaking(lang):
        return f"{_E('error')}: {error.one_line(_say_error)}"


def fail(error: InputError, as_json: bool) -> NoReturn:
    """Print the error as one line (and as JSON on stdout with --json, always English); exit 2."""
    if as_json:
        print(json.dumps(error.as_dict(), ensure_ascii=False))
    err.print(error_line(error, argv_language(sys.argv[1:])), markup=False)
    raise typer.Exit(2)


def emit_json(obj: Any) -> None:
    """The one JSON object a command prints with --json; never NaN or Infinity (not JSON)."""
    check_finite(obj)
    text = json.dumps(obj, indent=2, ensure_ascii=False, default=str, allow_nan=False)
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except OSError as exc:
        raise from_os_error(exc, "<stdout>") from None


def os_error(exc: OSError) -> InputError:
    """An OSError as the one-line error the CLI prints (see errors.from_os_error)."""
    return from_os_error(exc)


@contextmanager
def guard(as_json: bool) -> Iterator[None]:
    """Bad input and file-system faults become one line and exit code 2, never a traceback."""
    try:
        yield
    except InputError as exc:
        fail(exc, as_json)
    except OSError as exc:
        fail(os_error(exc), as_json)
    except ValueError as exc:
        # Only our own JSON writers raise this one: a figure that is not a finite number.
        if "not a finite number" not in str(exc) and "Out of range float" not in str(exc):
            raise
        problem = InputError("result holds a value that is not a finite number: {exc}", exc=exc)
        fail(problem, as_json)


# Typer carries its own copy of click; its exception classes are reached through the one it
# exports (BadParameter derives from UsageError, which derives from ClickException).
_CLICK_BASES = {c.__name__: c for c in typer.BadParameter.__mro__}
UsageError: type[Exception] = _CLICK_BASES["UsageError"]
ClickException: type[Exception] = _CLICK_BASES["ClickException"]


# Click's wording (typer's copy) of the usage errors a command line can have: patterns of
# the errors catalogue (tests/i18n/test_errors.py provokes each through the real script).
CLICK_MESSAGES = (
    "No such command {name}.",
    "No such command {name}. Did you mean {suggestion}?",
    "No such option: {name}",
    "No such option: {name} (Possible options: {possible})",
    "Missing command.",
    "Missing argument {name}.",
    "Option {name} requires an argument.",
    "Got unexpected extra argument(s) ({args})",
    "Invalid value for {name}: {problem}",
    "{value} is not one of {choices}",
)


def _one_line_usage(exc: Any) -> str:
    ctx = getattr(exc, "ctx", None)
    where = f"{ctx.command_path}: " if ctx is not None else ""
    see = _E("see `{command} --help`")
    helper = f" ({see.format(command=ctx.command_path)})" if ctx is not None else ""
    message = _say_error(exc.format_message())
    return " ".join(f"{_E('error')}: {where}{message}{helper}".split())


# The root options that take a value (`gpudecide --lang ru evidence`): the word after one is
# not the command's name.
_ROOT_VALUE_OPTIONS = frozenset({"--lang", "--author"})


def invoked_only(app: typer.Typer, args: list[str]) -> typer.Typer:
    """`app` with only the command or group that `args` names, where they name one: typer
    builds a click command from every registered function's signature on each run (about
    a third of the bare libraries' import here), and a run needs one. Any other command
    line (the root's help, a misspelt name that click answers with its suggestions) runs no
    command: it gets every command as a listing (`_listing`), its name and help alone."""
    name = None
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
        elif arg == "--":
            # what follows is positional: the word after `--` is the command's name
            name = args[i + 1] if i + 1 < len(args) else None
            break
        elif arg.startswith("-"):
            skip = arg in _ROOT_VALUE_OPTIONS
        else:
            name = arg
            break
    commands = [
        c
        for c in app.registered_commands
        if (c.name or typer.main.get_command_name(getattr(c.callback, "__name__", ""))) == name
    ]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return _listing(app)
    only = copy.copy(app)
    only.registered_commands = commands
    only.registered_groups = groups
    return only


def _listing(app: typer.Typer) -> typer.Typer:
    """`app` with every command in place but without its parameters: what the root's help
    and click's "did you mean" print of a command is its name and help, and typer would read
    the signature of each of some sixty functions to build them (~70 ms a run here). The
    root's and each group's own callback stay, so their options work as they do."""
    listed = copy.copy(app)
    listed.registered_commands = [_help_only(c) for c in app.registered_commands]
    listed.registered_groups = []
    for group in app.registered_groups:
        shown = copy.copy(group)
        if group.typer_instance is not None:
            shown.typer_instance = _listing(group.typer_instance)
        listed.registered_groups.append(shown)
    return listed


def _help_only(info: CommandInfo) -> CommandInfo:
    """A command as the listing shows it: its name, help and flags, and no parameter."""
    callback = info.callback

    def listed() -> None:  # never run: a command line that names a command gets the real one
        raise RuntimeError(f"{listed.__name__}: a listed command was run")

    listed.__name__ = getattr(callback, "__name__", "command")
    listed.__doc__ = getattr(callback, "__doc__", None)
    shown = copy.copy(info)
    shown.callback = listed
    return shown


def run_app(app: typer.Typer) -> None:
    """Run the CLI: usage errors in one line (exit 2), output faults in one line, no traceback.

    `cli.main` calls this. Click's standalone mode would print a multi-line box for a usage
    error and a traceback for stdout on a full disk (`> /dev/full`).
    """
    # Pydantic would look through every installed distribution's entry points for plugins
    # when it builds its first validator (~30 ms of each run): the command line uses none,
    # and a decision audited afterwards should not run third-party hooks on its records.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # A run starts with no language chosen yet: `--lang` and the workspace decide it.
    choose_language(None)
    argv = sys.argv[1:]
    command = typer.main.get_command(invoked_only(app, argv))
    # what the language and help checks read: the options before `--`
    args = argv[: argv.index("--")] if "--" in argv else argv
    localize_help(command, argv_language(args) if shows_help(command, args) else "en")
    try:
        code = command.main(standalone_mode=False)
    except UsageError as exc:
        # A group called without a command has printed its help already: no error line to add
        if type(exc).__name__ != "NoArgsIsHelpError":
            with speaking(argv_language(args)):
                err.print(_one_line_usage(exc), markup=False)
        sys.exit(2)
    except ClickException as exc:
        with speaking(argv_language(args)):
            text = _say_error(getattr(exc, "format_message", exc.__str__)())
            err.print(" ".join(f"{_E('error')}: {text}".split()), markup=False)
        sys.exit(int(getattr(exc, "exit_code", 1)))
    except (typer.Abort, KeyboardInterrupt):
        with speaking(argv_language(args)):
            err.print(_E("interrupted"))
        sys.exit(130)
    except OSError as exc:
        _exit_output_fault(exc)
    try:
        sys.stdout.flush()
    except OSError as exc:
        _exit_output_fault(exc)
    sys.exit(code if isinstance(code, int) else 0)


def _exit_output_fault(exc: OSError) -> NoReturn:
    with suppress(OSError):
        fault = from_os_error(exc, exc.filename or "<stdout>")
        err.print(error_line(fault, argv_language(sys.argv[1:])), markup=False)
    # stdout cannot take the rest: point fd 1 at /dev/null so the flush at exit cannot fail
    # again and print a traceback after our one line.
    with suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    sys.exit(2)


@contextmanager
def progress(enabled: bool) -> Iterator[Progress | None]:
    """A progress bar on stderr, only when it is a terminal (never in --json output)."""
    if not enabled or not err.is_terminal:
        yield None
        return
    # rich.progress loads only when a bar is shown (~13 ms of every other run)
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        yield bar


def open_workspace(path: Path | None, required: bool) -> Workspace | None:
    """The workspace at `path`, else the one found from the current folder up."""
    # The workspace and evidence models load here, when a command opens its workspace,
    # not with the command line (`--help` outside a workspace never needs them).
    root = path if path is not None else find_root(Path.cwd())
    if root is None:
        if required:
            raise InputError(
                "not inside a gpudecide workspace",
                hint="pass --workspace DIR, or create one with `gpudecide init DIR`",
            )
        return None
    from gpudecide import workspace
    from gpudecide.author import set_author

    ws = workspace.load(root)
    language(ws)
    set_author(ws.config.author or None, source="workspace")
    return ws
