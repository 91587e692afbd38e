"""What every command shares: the consoles, `--json` and `--workspace` options, exit codes.

Commands live in `cli.py` and in each analysis package's own `cli.py`; all of them use these,
so bad input looks the same everywhere: one line, exit code 2, no traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from gpudecide import workspace
from gpudecide.errors import InputError

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object for machines.")]
WorkspaceOpt = Annotated[
    Path | None,
    typer.Option("--workspace", "-w", help="Workspace folder (default: found from here up)."),
]


def fail(error: InputError, as_json: bool) -> NoReturn:
    """Print the error as one line (and as JSON on stdout with --json); exit 2."""
    if as_json:
        print(json.dumps(error.as_dict(), ensure_ascii=False))
    err.print(f"error: {error.one_line()}", markup=False)
    raise typer.Exit(2)


def emit_json(obj: Any) -> None:
    """The one JSON object a command prints with --json."""
    print(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


@contextmanager
def guard(as_json: bool) -> Iterator[None]:
    """Bad input of any kind becomes one line and exit code 2, never a traceback."""
    try:
        yield
    except InputError as exc:
        fail(exc, as_json)
    except PermissionError as exc:
        fail(InputError("permission denied", path=exc.filename), as_json)
    except IsADirectoryError as exc:
        fail(InputError("is a directory, not a file", path=exc.filename), as_json)
    except FileNotFoundError as exc:
        fail(InputError("no such file or directory", path=exc.filename), as_json)


@contextmanager
def progress(enabled: bool) -> Iterator[Progress | None]:
    """A progress bar on stderr, only when it is a terminal (never in --json output)."""
    if not enabled or not err.is_terminal:
        yield None
        return
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


def open_workspace(path: Path | None, required: bool) -> workspace.Workspace | None:
    """The workspace at `path`, else the one found from the current folder up."""
    root = path if path is not None else workspace.find_root(Path.cwd())
    if root is None:
        if required:
            raise InputError(
                "not inside a gpudecide workspace",
                hint="pass --workspace DIR, or create one with `gpudecide init DIR`",
            )
        return None
    return workspace.load(root)
