"""The evidence record every analysis writes and the decision reads (DESIGN: "the one idea").

A record is one JSON file, written atomically, named by a hash of what it says, carrying the
SHA-256 of every input it was computed from. If an input changed since, the record is stale;
if the file itself was edited, its content hash no longer matches.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from gpudecide import __version__
from gpudecide.errors import InputError
from gpudecide.fsutil import atomic_write_text, sha256_path

Verdict = Literal["pass", "fail", "warn", "info"]


class InputRef(BaseModel):
    """One input file with the digest it had when the evidence was computed."""

    path: str = Field(description="Path as given, relative to the workspace when inside it.")
    sha256: str
    size: int


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


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def input_ref(path: str | Path, root: Path | None = None) -> InputRef:
    """Digest an input file; the stored path is relative to `root` when the file is inside it."""
    p = Path(path)
    shown = str(p)
    if root is not None:
        try:
            shown = str(p.resolve().relative_to(root.resolve()))
        except ValueError:
            shown = str(p.resolve())
    digest, size = sha256_path(p)
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
    """Seal the record and write it atomically to `evidence_dir/<id>.json`."""
    sealed = record if record.content_sha256 else seal(record)
    path = evidence_dir / f"{sealed.id}.json"
    atomic_write_text(path, sealed.model_dump_json(indent=2) + "\n")
    return path


def load(path: Path) -> Evidence:
    """Read one record; a file that is not a record is an input error."""
    try:
        return Evidence.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise InputError(
            f"not a gpudecide evidence record: {first['msg']}",
            path=path,
            field=field,
            hint="re-run the analysis that wrote it",
        ) from None


def freshness(record: Evidence, root: Path) -> tuple[Freshness, list[str]]:
    """Check the record against its own hash and against its inputs as they are now."""
    if record.compute_content_sha256() != record.content_sha256:
        return Freshness.TAMPERED, ["the record was edited after it was written"]
    problems: list[str] = []
    state = Freshness.FRESH
    for ref in record.inputs:
        p = Path(ref.path)
        if not p.is_absolute():
            p = root / p
        if not p.exists():
            problems.append(f"{ref.path}: input is gone")
            state = Freshness.MISSING_INPUT
        elif sha256_path(p)[0] != ref.sha256:
            problems.append(f"{ref.path}: input changed since the evidence was computed")
            if state is Freshness.FRESH:
                state = Freshness.STALE
    return state, problems


def load_all(evidence_dir: Path) -> list[Evidence]:
    """Every record in a directory, oldest first."""
    if not evidence_dir.is_dir():
        return []
    records = [load(p) for p in sorted(evidence_dir.glob("*.json"))]
    return sorted(records, key=lambda r: (r.created_at_utc, r.id))


def latest(records: list[Evidence], kind: str) -> Evidence | None:
    """The newest record of a kind."""
    of_kind = [r for r in records if r.kind == kind]
    return of_kind[-1] if of_kind else None
