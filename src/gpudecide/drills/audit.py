"""The cordon audit trail and the circuit breaker's memory of it (SPEC G2, G3; issue 28).

Every run of `gpudecide cordon` appends JSON lines to the trail (default
`audit/cordon.jsonl`): who, when, which node, what it was going to do and why, the exact
commands, the breaker's say and what ran. With `--apply` the trail is written first and the
scheduler told after: one `intent` line per node before any command runs (flushed to the
disk; a trail that cannot be written stops the run before scontrol or kubectl), one `result`
line per node once the commands ran. A run killed between the two leaves its intent lines:
the breaker takes those nodes as out.

The breaker reads the trail back (`remember`): a node taken out within `breaker.window_hours`
still counts against the share, so successive runs cannot take out more than one run could.
An entry is expanded to the nodes it names (a Slurm hostlist an older version passed on as
it was counts as its nodes); an entry that names no node of the scheduler at all (a
selector, an option) counts as the whole fleet: nobody can say what it took out.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from gpudecide.drills import hostlist
from gpudecide.drills.nodenames import Orchestrator, problem
from gpudecide.errors import InputError, excerpt, from_os_error
from gpudecide.fsutil import open_regular
from gpudecide.jsonio import utc_iso

__all__ = [
    "Entry",
    "Memory",
    "OutNode",
    "Phase",
    "append",
    "entry",
    "remember",
    "require_writable",
    "who",
    "writable_folder",
]

Phase = Literal["intent", "result"]


@dataclass(frozen=True)
class OutNode:
    """A node the trail shows taken out: since when, by which line, and whether for an
    uncorrectable error (outside the breaker's share)."""

    node: str
    at: datetime
    line: int
    uncorrectable: bool


@dataclass
class Memory:
    """What the trail says is still out within the window."""

    routine: dict[str, OutNode] = field(default_factory=dict)
    uncorrectable: dict[str, OutNode] = field(default_factory=dict)
    # (line, what it named): entries naming no node of the scheduler.
    unknown: list[tuple[int, str]] = field(default_factory=list)


Entry = dict[str, Any]


def who() -> str:
    """`user@host` of this run (the uid where the user has no name)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()}"


def entry(
    phase: Phase,
    run: str,
    *,
    node: str,
    action: str,
    why: str,
    commands: list[str],
    breaker: str,
    applied: bool,
    results: list[dict[str, Any]] | None = None,
    evidence: str | None = None,
    at: datetime | None = None,
) -> Entry:
    """One line of the trail."""
    return {
        "at": utc_iso(at or datetime.now(UTC)),
        "who": who(),
        "run": run,
        "phase": phase,
        "node": node,
        "nodes": [node],
        "action": action,
        "why": why,
        "commands": commands,
        "breaker": breaker,
        "uncorrectable": breaker == "bypassed",
        "applied": applied,
        "results": results or [],
        "evidence": evidence,
    }


def writable_folder(folder: Path) -> bool:
    """Whether files can be made in `folder`: it is a writable folder, or it does not exist
    yet and its nearest existing parent is one (nothing is created to find out)."""
    current = folder
    while not current.exists():
        if current.parent == current:
            return False
        current = current.parent
    return current.is_dir() and os.access(current, os.W_OK | os.X_OK)


def require_writable(path: Path) -> None:
    """The trail can take lines: a regular file (or none yet) in a folder we can write;
    else the one-line error, before anything runs or is made."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise from_os_error(exc, path) from None
    if mode is not None and not stat.S_ISREG(mode):
        raise InputError(
            "the audit trail is not a regular file",
            path=path,
            hint="give --audit a file (default: audit/cordon.jsonl in the workspace)",
        )
    if not writable_folder(path.parent) or (mode is not None and not os.access(path, os.W_OK)):
        raise InputError(
            "the audit trail cannot be written",
            path=path,
            hint="nothing runs before its audit line is written: give --audit a writable file",
        )


def append(path: Path, lines: list[Entry]) -> None:
    """Append the lines in one write and flush them to the disk; an error is the one-line
    InputError (the caller acts only once this returned)."""
    if not lines:
        return
    require_writable(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise from_os_error(exc, path.parent) from None
    data = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines).encode("utf-8")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise InputError("the audit trail is not a regular file", path=path)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise from_os_error(exc, path) from None


def _bad(path: Path, line: int, what: str) -> InputError:
    return InputError(
        "not an audit line of gpudecide cordon: {what}",
        path=path,
        line=line,
        hint="the breaker reads the trail to count nodes already out: repair the line, or move "
        "the trail away and give --audit a new one",
        what=what,
    )


def _names(text: str, orchestrator: Orchestrator) -> list[str] | None:
    """The nodes an entry's node text stands for; None when it names no node."""
    if problem(text, orchestrator) is None:
        return [text]
    if orchestrator != "slurm":
        return None
    try:
        names = hostlist.expand(text)
    except hostlist.HostlistError:
        return None
    if names and all(problem(n, "slurm") is None for n in names):
        return names
    return None


def _took_out(item: Entry) -> bool:
    """Whether a result line's node left service: its first command (cordon or drain) ran."""
    results = item.get("results")
    if not item.get("applied") or not isinstance(results, list) or not results:
        return False
    first = results[0]
    return isinstance(first, dict) and first.get("rc") == 0


def remember(path: Path, now: datetime, window_hours: float, orchestrator: Orchestrator) -> Memory:
    """The nodes the trail shows taken out within the window (none when there is no trail).

    A line that is no audit entry is bad input naming its line: the breaker does not guess
    what an unreadable trail held."""
    memory = Memory()
    if not path.exists() and not path.is_symlink():
        return memory
    since = now - timedelta(hours=window_hours)
    pending: dict[tuple[str, str], tuple[Entry, int]] = {}
    done: set[tuple[str, str]] = set()
    with open_regular(path) as handle:
        for n, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise _bad(path, n, "not JSON") from None
            if not isinstance(item, dict) or not isinstance(item.get("node"), str):
                raise _bad(path, n, "no node")
            try:
                at = datetime.fromisoformat(str(item.get("at")).replace("Z", "+00:00"))
            except ValueError:
                raise _bad(path, n, f"time {excerpt(item.get('at'), 32)}") from None
            at = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
            if at < since:
                continue
            key = (str(item.get("run", "")), item["node"])
            if item.get("phase") == "intent":
                if item.get("applied"):
                    pending[key] = (item, n)
                continue
            done.add(key)
            if _took_out(item):
                _count(memory, item, n, at, orchestrator)
    for key, (item, n) in pending.items():
        if key not in done:
            at = datetime.fromisoformat(str(item["at"]).replace("Z", "+00:00"))
            _count(memory, item, n, at if at.tzinfo else at.replace(tzinfo=UTC), orchestrator)
    return memory


def _count(
    memory: Memory, item: Entry, line: int, at: datetime, orchestrator: Orchestrator
) -> None:
    uncorrectable = bool(item.get("uncorrectable")) or item.get("breaker") == "bypassed"
    listed = item.get("nodes")
    texts = listed if isinstance(listed, list) and listed else [item["node"]]
    for text in texts:
        names = _names(str(text), orchestrator)
        if names is None:
            memory.unknown.append((line, str(text)))
            continue
        for name in names:
            out = OutNode(name, at, line, uncorrectable)
            table = memory.uncorrectable if uncorrectable else memory.routine
            table[name] = out
