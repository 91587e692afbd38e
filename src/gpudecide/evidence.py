"""The evidence record every analysis writes and the decision reads (DESIGN: "the one idea").

A record is one JSON file, written atomically, named by a hash of what it says, carrying the
SHA-256 of every input it was computed from. If an input changed since, the record is stale;
if the file itself was edited, its content hash no longer matches.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from gpudecide import __version__
from gpudecide.errors import InputError
from gpudecide.fsutil import (
    NotRegularFileError,
    atomic_write_text,
    file_kind,
    read_regular,
    sha256_path,
)
from gpudecide.jsonio import check_finite, loads_bounded

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
    tool_version: str = __version__
    created_at_utc: str = ""
    content_sha256: str = ""

    def identity_sha256(self) -> str:
        """Hash of what was computed from what: same analysis of same inputs, same id."""
        core = {
            "kind": self.kind,
            "figures": self.figures,
            "inputs": [i.model_dump() for i in self.inputs],
        }
        return hashlib.sha256(_canonical(core)).hexdigest()

    def compute_content_sha256(self) -> str:
        """Hash of the whole record except the hash itself (tamper evidence)."""
        body = self.model_dump(exclude={"content_sha256"})
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


def record_ref(path: Path, root: Path | None = None) -> InputRef:
    """Cite an evidence record by id and identity hash (an edited record is refused)."""
    record = load(path, verify=True)
    return InputRef(
        path=shown_path(path, root), sha256=record.identity_sha256(), size=0, record_id=record.id
    )


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


def seal(record: Evidence, now: datetime | None = None) -> Evidence:
    """Fill id, time and content hash."""
    # Microseconds: two runs in one second must still have an order ("latest" is defined).
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    record = record.model_copy(update={"created_at_utc": stamp})
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
            f"the {record.kind} result is not a finite number: {exc}",
            hint="an input holds an impossible value; check the inputs of this analysis",
        ) from None
    if evidence_dir.exists() and not evidence_dir.is_dir():
        raise InputError(
            "is a file, not a folder for evidence records",
            path=evidence_dir,
            hint="move the file away or pass another evidence folder",
        )
    sealed = record if record.content_sha256 else seal(record)
    text = sealed.model_dump_json(indent=2) + "\n"
    if len(text) > MAX_RECORD_BYTES:
        raise InputError(
            f"the {record.kind} record would be over {MAX_RECORD_BYTES >> 20} MiB",
            path=evidence_dir,
            hint="an input is far larger than this analysis expects",
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
            f"not a gpudecide evidence record: {first['msg']}",
            path=path,
            field=field,
            hint="re-run the analysis that wrote it",
        ) from None
    if verify and record.compute_content_sha256() != record.content_sha256:
        raise InputError(
            "the record was edited after it was written (content hash does not match)",
            path=path,
            field="content_sha256",
            hint="re-run the analysis that wrote it",
        )
    return record


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


def _check_input(p: Path, cited: bool = False) -> tuple[Freshness, str] | str:
    """An input's digest now (a cited record's identity), or (state, problem) when it is
    gone or not a readable file."""
    try:
        if cited:
            return load(p, verify=True).identity_sha256()
        return sha256_path(p)[0]
    except FileNotFoundError:
        return Freshness.MISSING_INPUT, "input is gone"
    except NotRegularFileError as exc:
        return Freshness.BAD_INPUT, f"bad input: {exc.strerror}"
    except InputError as exc:
        return Freshness.BAD_INPUT, f"bad input: {exc.message}"
    except OSError as exc:
        try:
            kind = file_kind(p.stat().st_mode)
        except OSError:
            kind = "not readable"
        return Freshness.BAD_INPUT, f"bad input: cannot read ({exc.strerror or kind})"


_RANK = {
    Freshness.FRESH: 0,
    Freshness.STALE: 1,
    Freshness.MISSING_INPUT: 2,
    Freshness.BAD_INPUT: 3,
}


MAX_CITATION_DEPTH = 8  # records citing records: the chain is short (profile -> cost -> decision)


def freshness(record: Evidence, root: Path, _depth: int = 0) -> tuple[Freshness, list[str]]:
    """Check the record against its own hash and against its inputs as they are now.

    An input replaced by a directory, a FIFO or a device is `bad_input` (it is never read:
    a FIFO would block, /dev/zero would never end), not stale.
    """
    if record.compute_content_sha256() != record.content_sha256:
        return Freshness.TAMPERED, ["the record was edited after it was written"]
    problems: list[str] = []
    state = Freshness.FRESH
    for ref in record.inputs:
        p = Path(ref.path)
        if not p.is_absolute():
            p = root / p
        now = _check_input(p, cited=ref.record_id is not None)
        if ref.record_id is not None and now == ref.sha256 and _depth < MAX_CITATION_DEPTH:
            # The cited record is the one computed from; it must still be true of its inputs.
            inner, why = freshness(load(p), root, _depth + 1)
            if inner is not Freshness.FRESH:
                now = (Freshness.STALE, f"cites a record that is {inner.value}: {'; '.join(why)}")
        if isinstance(now, tuple):
            found, problem = now
            problems.append(f"{ref.path}: {problem}")
        elif now != ref.sha256:
            found = Freshness.STALE
            problems.append(f"{ref.path}: input changed since the evidence was computed")
        else:
            continue
        if _RANK[found] > _RANK[state]:
            state = found
    return state, problems


@dataclass(frozen=True)
class Damaged:
    """A file in the evidence folder that is not a readable record, and why."""

    path: Path
    reason: str


def scan(evidence_dir: Path) -> tuple[list[Evidence], list[Damaged]]:
    """Every readable record (oldest first) and every damaged one, without stopping at one.

    A truncated, binary or otherwise unreadable record is listed in `damaged` with its
    one-line reason; the others are still returned (issue 14 item 13).
    """
    if not evidence_dir.is_dir():
        return [], []
    records: list[Evidence] = []
    damaged: list[Damaged] = []
    for p in sorted(evidence_dir.glob("*.json")):
        try:
            records.append(load(p, verify=False))
        except InputError as exc:
            damaged.append(Damaged(p, exc.one_line()))
    records.sort(key=lambda r: (r.created_at_utc, r.id))
    return records, damaged


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
