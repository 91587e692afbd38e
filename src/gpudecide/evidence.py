"""The evidence record every analysis writes and the decision reads (DESIGN: "the one idea").

A record is one JSON file, written atomically, named by a hash of what it says, carrying the
SHA-256 of every input it was computed from. If an input changed since, the record is stale;
if the file itself was edited, its content hash no longer matches.

Every record names its producer (SPEC A5, R3: who produced it, on which host, with which
tool version): the author from `--author`, else the workspace's `author`, else git's
user.name and user.email, else the OS user. That is a declaration, not a proof: anyone can
edit a record and reseal it; `gpudecide sign` (package `attest`) is the proof.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from gpudecide import tool_version
from gpudecide.author import check_author, declared
from gpudecide.errors import InputError
from gpudecide.fsutil import (
    NotRegularFileError,
    atomic_write_text,
    file_kind,
    read_regular,
    sha256_path,
)
from gpudecide.i18n import N_
from gpudecide.jsonio import check_finite, loads_bounded
from gpudecide.message import Message, message
from gpudecide.redact import redact, redact_all

__all__ = [
    "GIT_TIMEOUT_S",
    "MAX_CITATION_DEPTH",
    "MAX_RECORD_BYTES",
    "STATE_WORDS",
    "AuthorSource",
    "Damaged",
    "Evidence",
    "Freshness",
    "InputRef",
    "Producer",
    "Snapshot",
    "Verdict",
    "current",
    "freshness",
    "input_ref",
    "latest",
    "load",
    "load_all",
    "producer",
    "prune",
    "record_ref",
    "relative_figures",
    "scan",
    "seal",
    "shown_path",
    "subject",
    "superseded",
    "write",
]


Verdict = Literal["pass", "fail", "warn", "info"]

# A record is a summary, not a copy of its inputs: one larger than this was fed untrusted
# content without a bound (issue 14 item 3: a 270-byte alias bomb gave a 383 MB record).
MAX_RECORD_BYTES = 64 << 20


class InputRef(BaseModel):
    """One input file with the digest it had when the evidence was computed.

    An input that is itself an evidence record is cited by its id and identity hash
    (`record_id` set, `sha256` = its identity): re-running that analysis on unchanged inputs
    rewrites the record with a new time but the same identity, and this one stays fresh.
    """

    path: str = Field(description="Path as given, relative to the workspace when inside it.")
    sha256: str
    size: int
    record_id: str | None = Field(
        default=None, description="Id of the cited record when the input is evidence."
    )


AuthorSource = Literal["option", "workspace", "git", "os"]


class Producer(BaseModel):
    """Who produced a record and where (SPEC A5, R3). A declaration, not a proof: the
    signature of `gpudecide sign` proves which key vouched for the record."""

    author: str = Field(description="Name (and e-mail) of the person who ran the analysis.")
    author_from: AuthorSource = Field(
        description="Where the name came from: option (--author), workspace (author in "
        "gpudecide.yaml), git (user.name and user.email), os (the login name)."
    )
    host: str = Field(description="Host name of the machine the analysis ran on.")


class Evidence(BaseModel):
    """One analysis result (DESIGN: evidence record)."""

    id: str = ""
    kind: str = Field(description="Analysis that wrote it: profile, queue, replay, cost, ...")
    title: str
    spec_ids: list[str]
    verdict: Verdict
    summary: str = Field(description="One-line conclusion for people.")
    figures: dict[str, Any]
    notes: list[str] = Field(default_factory=list, description="What could not be measured.")
    inputs: list[InputRef] = Field(default_factory=list)
    tool_version: str = Field(default_factory=tool_version)
    producer: Producer | None = Field(
        default=None, description="Who produced the record, on which host (absent: older)."
    )
    created_at_utc: str = ""
    content_sha256: str = ""

    def identity_sha256(self) -> str:
        """Hash of what was computed from what: same analysis of same inputs, same id.

        The producer is left out, like the time: the same analysis of the same inputs run
        by someone else is the same result, so a record citing it stays fresh.
        """
        core = {
            "kind": self.kind,
            "figures": self.figures,
            "inputs": [i.model_dump() for i in self.inputs],
        }
        return hashlib.sha256(_canonical(core)).hexdigest()

    def compute_content_sha256(self) -> str:
        """Hash of the whole record except the hash itself (tamper evidence), the producer
        included: a changed author or host breaks the seal like a changed figure."""
        body = self.model_dump(exclude={"content_sha256"})
        if body.get("producer") is None:
            # A record written before records named their producer was sealed without the
            # key; leaving it out keeps that seal, and such a record, valid.
            body.pop("producer", None)
        return hashlib.sha256(_canonical(body)).hexdigest()


class Freshness(StrEnum):
    """Whether a record still describes its inputs."""

    FRESH = "fresh"
    STALE = "stale"
    MISSING_INPUT = "missing_input"
    TAMPERED = "tampered"
    BAD_INPUT = "bad_input"


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def shown_path(path: str | Path, root: Path | None) -> str:
    """A path as records show it: relative to the workspace when inside it, so a workspace
    copied or moved elsewhere still reads the same; absolute otherwise."""
    p = Path(path)
    if root is None:
        return str(p)
    try:
        return str(p.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(p.resolve())


def record_ref(path: Path, root: Path | None = None, snapshot: Snapshot | None = None) -> InputRef:
    """Cite an evidence record by id and identity hash (an edited record is refused); read
    from `snapshot` when it scanned the record."""
    if snapshot is None:
        record = load(path, verify=True)
        identity = record.identity_sha256()
    else:
        record = snapshot.verified(path)
        identity = snapshot.identity(record)
    return InputRef(path=shown_path(path, root), sha256=identity, size=0, record_id=record.id)


def input_ref(path: str | Path, root: Path | None = None) -> InputRef:
    """Digest an input file; the stored path is relative to `root` when the file is inside it.

    Only a regular file is an input (a FIFO or a device would hang or never end).
    """
    p = Path(path)
    shown = shown_path(p, root)
    try:
        digest, size = sha256_path(p)
    except NotRegularFileError as exc:
        raise InputError(exc.strerror or "not a regular file", path=p) from None
    return InputRef(path=shown, sha256=digest, size=size)


GIT_TIMEOUT_S = 5


def _git_identity(where: Path | None) -> str | None:
    """git's `user.name <user.email>` as git sees it from `where` (the repository's own
    setting, else the user's), or None when git is absent, slow or has neither."""
    cwd = where
    while cwd is not None and not cwd.is_dir():
        cwd = cwd.parent if cwd.parent != cwd else None
    try:
        done = subprocess.run(
            ["git", "config", "--get-regexp", r"^user\.(name|email)$"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError):
        return None
    values: dict[str, str] = {}
    for line in done.stdout.splitlines():
        key, _, value = line.partition(" ")
        # Listed from the system's setting to the repository's: the last one wins, as in git.
        values[key.lower()] = value.strip()
    name, email = values.get("user.name", ""), values.get("user.email", "")
    text = f"{name} <{email}>" if name and email else name or email
    try:
        return check_author(text) or None
    except ValueError:
        return None


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry (a bare container)
        return f"uid {os.getuid()}"


def producer(where: Path | None = None, workspace_author: str | None = None) -> Producer:
    """Who is producing evidence now, and on which host: the declared `--author`, else the
    workspace's author (`workspace_author`, else the one the run declared), else git's
    identity as seen from `where`, else the OS user."""
    option_author = declared("option")
    workspace_author = workspace_author or declared("workspace")
    source: AuthorSource
    if option_author:
        author, source = option_author, "option"
    elif workspace_author:
        author, source = workspace_author, "workspace"
    elif git := _git_identity(where):
        author, source = git, "git"
    else:
        author, source = _os_user(), "os"
    return Producer(author=author, author_from=source, host=socket.gethostname())


def seal(record: Evidence, now: datetime | None = None, where: Path | None = None) -> Evidence:
    """Fill id, time, producer (when the record has none) and content hash; `where` is the
    folder git's identity is read from (default: the current one)."""
    # Microseconds: two runs in one second must still have an order ("latest" is defined).
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    update: dict[str, Any] = {"created_at_utc": stamp}
    if record.producer is None:
        update["producer"] = producer(where)
    record = record.model_copy(update=update)
    record.id = f"{record.kind}-{record.identity_sha256()[:16]}"
    record.content_sha256 = record.compute_content_sha256()
    return record


def write(record: Evidence, evidence_dir: Path) -> Path:
    """Seal the record and write it atomically to `evidence_dir/<id>.json`.

    A figure that is NaN or infinite, or a record over MAX_RECORD_BYTES, is refused before
    anything is written: neither could be read back as the record that was meant.
    """
    try:
        check_finite(record.figures, "figures")
    except ValueError as exc:
        raise InputError(
            "the {kind} result is not a finite number: {exc}",
            hint="an input holds an impossible value; check the inputs of this analysis",
            kind=record.kind,
            exc=exc,
        ) from None
    if evidence_dir.exists() and not evidence_dir.is_dir():
        raise InputError(
            "is a file, not a folder for evidence records",
            path=evidence_dir,
            hint="move the file away or pass another evidence folder",
        )
    # No record holds a credential, whatever text from the inputs reached it (issue 28).
    clean = record.model_copy(
        update={
            "title": redact(record.title),
            "summary": redact(record.summary),
            "notes": [redact(n) for n in record.notes],
            "figures": redact_all(record.figures),
        }
    )
    changed = (clean.title, clean.summary, clean.notes, clean.figures) != (
        record.title,
        record.summary,
        record.notes,
        record.figures,
    )
    sealed = seal(clean, where=evidence_dir) if changed or not record.content_sha256 else record
    text = sealed.model_dump_json(indent=2) + "\n"
    if len(text) > MAX_RECORD_BYTES:
        raise InputError(
            "the {kind} record would be over {MAX_RECORD_BYTES_20} MiB",
            path=evidence_dir,
            hint="an input is far larger than this analysis expects",
            kind=record.kind,
            MAX_RECORD_BYTES_20=MAX_RECORD_BYTES >> 20,
        )
    path = evidence_dir / f"{sealed.id}.json"
    atomic_write_text(path, text)
    return path


def load(path: Path, *, verify: bool = False) -> Evidence:
    """Read one record; a file that is not a record is an input error.

    With `verify=True` a record edited after it was written is an input error too: an
    analysis that takes a record as its input must never build on a changed one (`cost
    --profile edited.json`). Listing and the report read without it and show the record as
    tampered (`freshness`).
    """
    doc = loads_bounded(_record_text(path), path)
    try:
        record = Evidence.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise InputError(
            "not a gpudecide evidence record: {first}",
            path=path,
            field=field,
            hint="re-run the analysis that wrote it",
            first=first["msg"],
        ) from None
    if verify and record.compute_content_sha256() != record.content_sha256:
        raise _edited(path)
    return record


def _edited(path: Path) -> InputError:
    return InputError(
        "the record was edited after it was written (content hash does not match)",
        path=path,
        field="content_sha256",
        hint="re-run the analysis that wrote it",
    )


def _record_text(path: Path) -> str:
    data = read_regular(path, MAX_RECORD_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(
            "not a gpudecide evidence record: not UTF-8 text",
            path=path,
            hint="re-run the analysis that wrote it",
        ) from None


def _check_input(
    p: Path, shown: str, cited: bool, snapshot: Snapshot
) -> tuple[Freshness, Message] | str:
    """An input's digest now (a cited record's identity), or (state, problem) when it is
    gone or not a readable file. Each path is read once per snapshot; a cited record read
    here is kept in it for the caller to check its own inputs without reading it again."""
    key = (p, cited)
    if key not in snapshot.digests:
        snapshot.digests[key] = _read_input(p, shown, cited, snapshot)
    return snapshot.digests[key]


def _read_input(
    p: Path, shown: str, cited: bool, snapshot: Snapshot
) -> tuple[Freshness, Message] | str:
    try:
        if cited:
            record = snapshot.verified(p)
            snapshot.records[p] = record
            return snapshot.identity(record)
        return sha256_path(p)[0]
    except FileNotFoundError:
        return Freshness.MISSING_INPUT, message("report", "{path}: input is gone", path=shown)
    except NotRegularFileError as exc:
        reason = exc.strerror or ""
        return Freshness.BAD_INPUT, message(
            "report", "{path}: bad input: {reason}", path=shown, reason=reason
        )
    except InputError as exc:
        said = message("errors", exc.template, **exc.values)
        return Freshness.BAD_INPUT, message(
            "report", "{path}: bad input: {reason}", path=shown, reason=said
        )
    except OSError as exc:
        try:
            kind = file_kind(p.stat().st_mode)
        except OSError:
            kind = "not readable"
        return Freshness.BAD_INPUT, message(
            "report",
            "{path}: bad input: cannot read ({reason})",
            path=shown,
            reason=exc.strerror or kind,
        )


_RANK = {
    Freshness.FRESH: 0,
    Freshness.STALE: 1,
    Freshness.MISSING_INPUT: 2,
    Freshness.BAD_INPUT: 3,
}


_T = TypeVar("_T")

MAX_CITATION_DEPTH = 8  # records citing records: the chain is short (profile -> cost -> decision)


@dataclass
class Snapshot:
    """The inputs of many records as they are at one moment, each read once: the digest of
    every input file and every cited record, and the freshness of each record checked. The
    ledger, the decision and the report check dozens of records that cite the same logs and
    the same profile; without it each file is hashed and each cited record re-checked once
    per record that cites it. Use one per listing, never across a change of the files."""

    root: Path
    digests: dict[tuple[Path, bool], tuple[Freshness, Message] | str] = field(default_factory=dict)
    records: dict[Path, Evidence] = field(default_factory=dict)
    checked: dict[str, tuple[Freshness, list[Message]]] = field(default_factory=dict)
    # the records `scan` read, by resolved path: a record citing one takes it from here
    scanned: dict[Path, Evidence] = field(default_factory=dict)
    # id(record) -> (the record, whether its seal holds); the record is kept so that its id
    # is never another's while the snapshot lives
    seals: dict[int, tuple[Evidence, bool]] = field(default_factory=dict)
    # id(record) -> (the record, its identity hash): freshness, the decision's citations and
    # its record each need it, and each is a canonical dump of the figures
    identities: dict[int, tuple[Evidence, str]] = field(default_factory=dict)

    def freshness(self, record: Evidence) -> tuple[Freshness, list[Message]]:
        """`freshness` of one of the records, with the inputs as this snapshot read them."""
        return _freshness(record, self, 0)

    def scan(self, evidence_dir: Path) -> tuple[list[Evidence], list[Damaged]]:
        """`scan`, each record kept for the records that cite it (a listing reads every
        record once, not once more for each record citing it)."""
        records, damaged, paths = _scan(evidence_dir)
        self.scanned.update(paths)
        return records, damaged

    def verified(self, path: Path) -> Evidence:
        """`load(path, verify=True)`, from the records this snapshot scanned when it has it."""
        record = self.scanned.get(path.resolve())
        if record is None:
            return load(path, verify=True)
        if not self.sealed(record):
            raise _edited(path)
        return record

    def sealed(self, record: Evidence) -> bool:
        """Whether the record's content hash still matches it (computed once a snapshot)."""
        return _once(
            self.seals, record, lambda: record.compute_content_sha256() == record.content_sha256
        )

    def identity(self, record: Evidence) -> str:
        """`record.identity_sha256()`, computed once a snapshot."""
        return _once(self.identities, record, record.identity_sha256)


def _once(kept: dict[int, tuple[Evidence, _T]], record: Evidence, compute: Callable[[], _T]) -> _T:
    """`compute()` for `record`, from `kept` when it holds that very record (an id alone
    could be another record's once the first is gone; the record kept prevents that)."""
    held = kept.get(id(record))
    if held is None or held[0] is not record:
        held = (record, compute())
        kept[id(record)] = held
    return held[1]


def freshness(record: Evidence, root: Path) -> tuple[Freshness, list[Message]]:
    """Check the record against its own hash and against its inputs as they are now; each
    problem a message (say it with `gpudecide.message.render`, or `english`). Checking many
    records, ask one `Snapshot(root)` for each of them.

    An input replaced by a directory, a FIFO or a device is `bad_input` (it is never read:
    a FIFO would block, /dev/zero would never end), not stale.
    """
    return Snapshot(root).freshness(record)


def _freshness(record: Evidence, snapshot: Snapshot, depth: int) -> tuple[Freshness, list[Message]]:
    if not snapshot.sealed(record):
        return Freshness.TAMPERED, [message("report", "the record was edited after it was written")]
    # The seal makes the record's content its key: a record edited since is caught above.
    key = record.content_sha256
    if key not in snapshot.checked:
        snapshot.checked[key] = _against_inputs(record, snapshot, depth)
    state, problems = snapshot.checked[key]
    return state, list(problems)


def _against_inputs(
    record: Evidence, snapshot: Snapshot, depth: int
) -> tuple[Freshness, list[Message]]:
    problems: list[Message] = []
    state = Freshness.FRESH
    for ref in record.inputs:
        p = Path(ref.path)
        if not p.is_absolute():
            p = snapshot.root / p
        cited = ref.record_id is not None
        now = _check_input(p, ref.path, cited, snapshot)
        if cited and now == ref.sha256 and depth < MAX_CITATION_DEPTH:
            # The cited record is the one computed from; it must still be true of its inputs.
            # It was read (and verified) just above: each file is read once per snapshot.
            inner, why = _freshness(snapshot.records[p], snapshot, depth + 1)
            if inner is not Freshness.FRESH:
                now = (
                    Freshness.STALE,
                    message(
                        "report",
                        "{path}: cites a record that is {state}: {why}",
                        path=ref.path,
                        state=message("report", STATE_WORDS[inner.value]),
                        why=why,
                    ),
                )
        if isinstance(now, tuple):
            found, problem = now
            problems.append(problem)
        elif now != ref.sha256:
            found = Freshness.STALE
            problems.append(
                message(
                    "report", "{path}: input changed since the evidence was computed", path=ref.path
                )
            )
        else:
            continue
        if _RANK[found] > _RANK[state]:
            state = found
    return state, problems


# The freshness states as a sentence names them.
STATE_WORDS = {
    "fresh": N_("fresh"),
    "stale": N_("stale"),
    "missing_input": N_("missing_input"),
    "tampered": N_("tampered"),
    "bad_input": N_("bad_input"),
}


@dataclass(frozen=True)
class Damaged:
    """A file in the evidence folder that is not a readable record, and why."""

    path: Path
    reason: str
    error: InputError | None = None

    def said(self) -> str:
        """The reason in the reader's language."""
        return self.error.one_line() if self.error is not None else self.reason


def scan(evidence_dir: Path) -> tuple[list[Evidence], list[Damaged]]:
    """Every readable record (oldest first) and every damaged one, without stopping at one.

    A truncated, binary or otherwise unreadable record is listed in `damaged` with its
    one-line reason; the others are still returned (issue 14 item 13).
    """
    records, damaged, _ = _scan(evidence_dir)
    return records, damaged


def _scan(evidence_dir: Path) -> tuple[list[Evidence], list[Damaged], dict[Path, Evidence]]:
    """`scan`, and each record by its resolved path."""
    if not evidence_dir.is_dir():
        return [], [], {}
    records: list[Evidence] = []
    paths: dict[Path, Evidence] = {}
    damaged: list[Damaged] = []
    for p in sorted(evidence_dir.glob("*.json")):
        try:
            records.append(load(p, verify=False))
        except InputError as exc:
            damaged.append(Damaged(p, exc.one_line(), exc))
        else:
            paths[p.resolve()] = records[-1]
    records.sort(key=lambda r: (r.created_at_utc, r.id))
    return records, damaged, paths


def load_all(evidence_dir: Path) -> list[Evidence]:
    """Every readable record in a directory, oldest first (`scan` also lists damaged ones)."""
    return scan(evidence_dir)[0]


def latest(records: list[Evidence], kind: str) -> Evidence | None:
    """The newest record of a kind."""
    of_kind = [r for r in records if r.kind == kind]
    return of_kind[-1] if of_kind else None


def subject(record: Evidence) -> tuple[str, str | None]:
    """What a record is about: its kind, and the option it concerns (None: no one option)."""
    option = record.figures.get("option")
    return record.kind, option if isinstance(option, str) else None


def current(records: list[Evidence]) -> dict[tuple[str, str | None], Evidence]:
    """The newest record of every subject (kind and option), records given oldest first."""
    newest: dict[tuple[str, str | None], Evidence] = {}
    for record in records:
        newest[subject(record)] = record
    return newest


def superseded(records: list[Evidence]) -> set[str]:
    """Ids of records a newer record of the same kind and option replaces (oldest first in)."""
    ids = {r.id for r in current(records).values()}
    return {r.id for r in records if r.id not in ids}


def prune(evidence_dir: Path, records: list[Evidence]) -> list[Path]:
    """Delete superseded records no current record cites; the paths removed."""
    old = superseded(records)
    cited = {i.record_id for r in records if r.id not in old for i in r.inputs if i.record_id}
    removed: list[Path] = []
    for record in records:
        if record.id in old and record.id not in cited:
            path = evidence_dir / f"{record.id}.json"
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def relative_figures(obj: Any, root: Path | None) -> Any:
    """Figures with every path inside the workspace written relative to it.

    Texts built from paths ("9 files to <root>/exports/...") are rewritten as well: a record
    must read the same after the workspace is copied or moved (issue 10).
    """
    if root is None:
        return obj
    prefix = str(root.resolve()).rstrip("/") + "/"
    if isinstance(obj, str):
        return obj.replace(prefix, "")
    if isinstance(obj, list):
        return [relative_figures(v, root) for v in obj]
    if isinstance(obj, dict):
        return {k: relative_figures(v, root) for k, v in obj.items()}
    return obj
