"""Sign the workspace's archive and check it (SPEC A5, D4, R3: who produced the evidence,
and is the file in the archive the one they produced?).

`sign_workspace` rewrites the report (so it names the signature that covers it), then signs
an in-toto statement whose subjects are every current evidence record and the report files
(path inside the workspace and SHA-256), in a DSSE envelope written to
report/signature.intoto.json. It signs only an archive whose current records are all fresh
and readable: a signature must never vouch for a record that is already untrue.

`verify_workspace` checks, against the team's public key: the signature (securesystemslib's
DSSE verification over the exact pre-authentication encoding), the validity in the signed
statement (and the auditor's own `max_age_days`), every subject's digest, records added
after signing, and the freshness of every signed record. Each failure is one `Problem`.

Identity and content of a record are unchanged by signing; the envelope is a separate file,
so old records and old workspaces need nothing to be signed later.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import Key, Signer

from gpudecide import __version__
from gpudecide import evidence as ev
from gpudecide.attest.envelope import (
    ENVELOPE_NAME,
    MAX_ENVELOPE_BYTES,
    PAYLOAD_TYPE,
    ArchivePredicate,
    ArchiveStatement,
    Digest,
    SignedRecord,
    Subject,
    Tool,
    Unreadable,
    check_statement,
    envelope_json,
    parse_envelope,
    parse_statement,
    parse_utc,
    utc_text,
)
from gpudecide.attest.envelope import Signer as SignerInfo
from gpudecide.errors import InputError
from gpudecide.fsutil import atomic_write_text, read_regular, sha256_path
from gpudecide.message import Message, english, message, nmessage
from gpudecide.report.signature import DEFAULT_VALID_DAYS, SignatureShown, pending, signing
from gpudecide.workspace import Workspace

__all__ = [
    "DEFAULT_VALID_DAYS",
    "MAX_VALID_DAYS",
    "Problem",
    "SignRun",
    "Verification",
    "envelope_path",
    "sign_workspace",
    "signature_of",
    "verify_workspace",
]

MAX_VALID_DAYS = 3650
_SIGNABLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")

# Why a signed record is no longer true (evidence.Freshness), as a problem names it.
_UNTRUE = {
    ev.Freshness.STALE: message("attest", "an input changed"),
    ev.Freshness.MISSING_INPUT: message("attest", "an input is gone"),
    ev.Freshness.BAD_INPUT: message("attest", "an input cannot be read"),
}


@dataclass(frozen=True)
class Problem:
    """One reason the archive is not what was signed (or cannot be signed): the file it
    concerns (a path inside the workspace; None: the signature itself), the sentence, and
    the details of a record's freshness (`evidence.freshness` problems, as messages)."""

    subject: str | None
    text: Message
    details: tuple[Message, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Machine form (English), for --json."""
        return {
            "subject": self.subject,
            "problem": english(self.text),
            "details": [english(d) for d in self.details],
        }


@dataclass(frozen=True)
class SignRun:
    """What `sign` did: the envelope and statement written, or the problems that stopped it
    (then nothing was written)."""

    envelope: Path | None
    statement: ArchiveStatement | None
    problems: list[Problem]
    report: dict[str, Path] = field(default_factory=dict)


@dataclass(frozen=True)
class Verification:
    """What `verify` found: the statement (when it could be read), whether the signature
    holds, and every problem. `ok` only when there is none."""

    envelope: Path
    keyid: str
    statement: ArchiveStatement | None
    signature_ok: bool
    problems: list[Problem]
    signed_by: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """The archive is what the key's holder signed, still valid and still true."""
        return self.signature_ok and not self.problems


def envelope_path(ws: Workspace) -> Path:
    """Where the workspace's signature is written: beside the report."""
    return ws.report_dir / ENVELOPE_NAME


def _name(ws: Workspace, path: Path) -> str:
    return path.relative_to(ws.root).as_posix()


@dataclass(frozen=True)
class _Holding:
    """The evidence folder as it is: current records by subject name, damaged files."""

    current: dict[str, ev.Evidence]
    damaged: dict[str, str]


def _holding(ws: Workspace) -> _Holding:
    found: list[tuple[str, ev.Evidence]] = []
    damaged: dict[str, str] = {}
    folder = ws.evidence_dir
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            found.append((_name(ws, path), ev.load(path)))
        except InputError as exc:
            damaged[_name(ws, path)] = exc.one_line()
    found.sort(key=lambda nr: (nr[1].created_at_utc, nr[1].id))
    newest = {id(r) for r in ev.current([r for _name, r in found]).values()}
    return _Holding({n: r for n, r in found if id(r) in newest}, damaged)


def _untrue(name: str, record: ev.Evidence, root: Path) -> Problem | None:
    """Why a record is no longer true of its inputs, or None when it is fresh."""
    state, details = ev.freshness(record, root)
    if state is ev.Freshness.FRESH:
        return None
    if state is ev.Freshness.TAMPERED:
        text = message(
            "attest",
            "{name}: edited after it was written (its content hash does not match)",
            name=name,
        )
        return Problem(name, text)
    text = message(
        "attest", "{name}: no longer true of its inputs ({why})", name=name, why=_UNTRUE[state]
    )
    return Problem(name, text, tuple(details))


def _damaged(name: str, reason: str) -> Problem:
    return Problem(
        name,
        message(
            "attest",
            "{name}: not a readable evidence record ({reason})",
            name=name,
            reason=reason,
        ),
    )


def _fit(text: str, limit: int) -> str:
    """Text the statement may hold: one line, at most `limit` characters."""
    line = "".join(c if c.isprintable() else " " for c in text)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def sign_workspace(
    ws: Workspace,
    signer: Signer,
    write_report: Callable[[Workspace], dict[str, Path]],
    *,
    valid_days: int = DEFAULT_VALID_DAYS,
    now: datetime | None = None,
) -> SignRun:
    """Rewrite the report (`write_report`: the report builder, which knows every analysis),
    then sign every current evidence record and the report files.

    Refused, with nothing written, when a current record is not fresh, a file in the
    evidence folder is not a readable record, or a record's file name is not a plain one;
    an empty evidence folder is an InputError.
    """
    if not 1 <= valid_days <= MAX_VALID_DAYS:
        raise InputError(
            "a signature is valid for 1 to {limit} days, not {days}",
            field="--valid-days",
            limit=MAX_VALID_DAYS,
            days=valid_days,
        )
    held = _holding(ws)
    if not held.current and not held.damaged:
        raise InputError(
            "no evidence records to sign",
            path=ws.evidence_dir,
            hint="run the analyses first (`gpudecide profile`, `gpudecide cost`, ...)",
        )
    problems = [_damaged(n, why) for n, why in sorted(held.damaged.items())]
    for name, record in sorted(held.current.items()):
        if not _SIGNABLE.fullmatch(name.split("/", 1)[1]):
            problems.append(
                Problem(
                    name,
                    message(
                        "attest",
                        "{name}: a file name gpudecide does not sign (letters, digits, . _ - only)",
                        name=name,
                    ),
                )
            )
        elif (untrue := _untrue(name, record, ws.root)) is not None:
            problems.append(untrue)
    if problems:
        return SignRun(None, None, problems)

    signed_at = parse_utc(utc_text(now or datetime.now(UTC)))
    valid_until = signed_at + timedelta(days=valid_days)
    who = ev.producer(ws.root, ws.config.author or None)
    keyid = signer.public_key.keyid
    records = [
        SignedRecord(
            name=name,
            id=_fit(r.id, 200),
            kind=_fit(r.kind, 200),
            option=_fit(ev.subject(r)[1] or "", 200) or None,
            identity_sha256=r.identity_sha256(),
        )
        for name, r in sorted(held.current.items())
    ]
    shown = SignatureShown(
        keyid=keyid,
        signed_at_utc=utc_text(signed_at),
        valid_until_utc=utc_text(valid_until),
        author=who.author,
        author_from=who.author_from,
        host=_fit(who.host, 200),
        records=len(records),
        envelope=_name(ws, envelope_path(ws)),
    )
    # The report is rewritten first, naming this signature, and then signed as it is.
    with signing(shown):
        report = write_report(ws)
    files = [ws.root / r.name for r in records] + sorted(report.values())
    statement = ArchiveStatement(
        subject=[
            Subject(name=_name(ws, p), digest=Digest(sha256=sha256_path(p)[0])) for p in files
        ],
        predicate=ArchivePredicate(
            signed_at_utc=shown.signed_at_utc,
            valid_until_utc=shown.valid_until_utc,
            signer=SignerInfo(
                keyid=keyid, author=who.author, author_from=who.author_from, host=shown.host
            ),
            tool=Tool(version=_fit(__version__, 200)),
            team=_fit(ws.config.team, 200),
            decision=_fit(ws.config.decision, 2000),
            records=records,
        ),
    )
    check_statement(statement)
    envelope = Envelope(statement.payload(), PAYLOAD_TYPE, {})
    envelope.sign(signer)
    path = envelope_path(ws)
    atomic_write_text(path, envelope_json(envelope))
    return SignRun(path, statement, [], report)


def _read_envelope(ws: Workspace) -> Envelope | Problem:
    """The workspace's envelope, or the problem that it is missing or unreadable."""
    path = envelope_path(ws)
    name = _name(ws, path)
    if not os.path.lexists(path):
        return Problem(
            None,
            message(
                "attest",
                "not signed: there is no {name} (sign the archive with "
                "`gpudecide sign --key KEY.pem`)",
                name=name,
            ),
        )
    try:
        data = read_regular(path, MAX_ENVELOPE_BYTES)
    except InputError as exc:
        return Problem(
            name,
            message("attest", "the signature file cannot be read: {problem}", problem=exc.message),
        )
    try:
        return parse_envelope(data)
    except Unreadable as exc:
        return Problem(name, exc.text)


def _signature(envelope: Envelope, key: Key) -> tuple[bool, Problem | None]:
    """Whether the envelope holds a signature by `key` that verifies over its PAE."""
    if not envelope.signatures:
        return False, Problem(None, message("attest", "the signature file holds no signature"))
    if key.keyid not in envelope.signatures:
        text = message(
            "attest",
            "signed by key {found}, not by the key given ({given})",
            found=", ".join(sorted(envelope.signatures)),
            given=key.keyid,
        )
        return False, Problem(None, text)
    try:
        envelope.verify([key], 1)
    except (VerificationError, ValueError):
        text = message(
            "attest",
            "the signature does not verify with key {keyid}: the signed statement or the "
            "signature was changed",
            keyid=key.keyid,
        )
        return False, Problem(None, text)
    return True, None


def _validity(
    statement: ArchiveStatement, now: datetime, max_age_days: int | None
) -> list[Problem]:
    pred = statement.predicate
    problems = []
    if now > parse_utc(pred.valid_until_utc):
        problems.append(
            Problem(
                None,
                nmessage(
                    "attest",
                    "the signature expired on {when}: it was valid for {days} day from {signed}",
                    "the signature expired on {when}: it was valid for {days} days from {signed}",
                    count="days",
                    when=pred.valid_until_utc,
                    days=(parse_utc(pred.valid_until_utc) - parse_utc(pred.signed_at_utc)).days,
                    signed=pred.signed_at_utc,
                ),
            )
        )
    age = now - parse_utc(pred.signed_at_utc)
    if max_age_days is not None and age > timedelta(days=max_age_days):
        problems.append(
            Problem(
                None,
                nmessage(
                    "attest",
                    "the signature is older than --max-age allows: signed {signed}, {days} day ago",
                    "the signature is older than --max-age allows: signed {signed}, "
                    "{days} days ago",
                    count="days",
                    days=age.days,
                    signed=pred.signed_at_utc,
                ),
            )
        )
    return problems


def _subjects(ws: Workspace, statement: ArchiveStatement) -> tuple[list[Problem], set[str]]:
    """Problems of the signed files as they are now, and the names that still match."""
    problems: list[Problem] = []
    matching: set[str] = set()
    for s in statement.subject:
        path = ws.root / s.name
        try:
            digest = sha256_path(path)[0]
        except FileNotFoundError:
            text = message("attest", "{name}: signed, but the file is gone", name=s.name)
            problems.append(Problem(s.name, text))
            continue
        except OSError as exc:
            text = message(
                "attest",
                "{name}: cannot be read ({reason})",
                name=s.name,
                reason=exc.strerror or type(exc).__name__,
            )
            problems.append(Problem(s.name, text))
            continue
        if digest != s.digest.sha256:
            problems.append(
                Problem(s.name, message("attest", "{name}: changed since signing", name=s.name))
            )
        else:
            matching.add(s.name)
    return problems, matching


def verify_workspace(
    ws: Workspace, key: Key, *, max_age_days: int | None = None, now: datetime | None = None
) -> Verification:
    """Check the workspace's signature with the team's public key: every problem found."""
    path = envelope_path(ws)
    envelope = _read_envelope(ws)
    if isinstance(envelope, Problem):
        return Verification(path, key.keyid, None, False, [envelope])
    signature_ok, bad = _signature(envelope, key)
    problems = [bad] if bad is not None else []
    signed_by = tuple(sorted(envelope.signatures))
    try:
        statement = parse_statement(envelope)
    except Unreadable as exc:
        problems.append(Problem(_name(ws, path), exc.text))
        return Verification(path, key.keyid, None, signature_ok, problems, signed_by)
    problems += _validity(statement, (now or datetime.now(UTC)).astimezone(UTC), max_age_days)
    changed, matching = _subjects(ws, statement)
    problems += changed
    held = _holding(ws)
    signed = statement.digests()
    for name in sorted(set(held.current) - set(signed)):
        text = message(
            "attest", "{name}: added after signing (the signature does not cover it)", name=name
        )
        problems.append(Problem(name, text))
    problems += [_damaged(n, why) for n, why in sorted(held.damaged.items()) if n not in signed]
    for record in statement.predicate.records:
        if record.name not in matching:
            continue  # changed or gone: said above
        loaded = held.current.get(record.name)
        if loaded is None:  # signed, and replaced since by a newer record of its subject
            try:
                loaded = ev.load(ws.root / record.name)
            except InputError as exc:
                problems.append(_damaged(record.name, exc.one_line()))
                continue
        if (untrue := _untrue(record.name, loaded, ws.root)) is not None:
            problems.append(untrue)
    return Verification(path, key.keyid, statement, signature_ok, problems, signed_by)


def signature_of(ws: Workspace) -> SignatureShown | None:
    """What the report shows of the workspace's signature: the one `sign` is making, else
    the signature file's key id, time of signing and signer as it states them (unchecked:
    the report has no public key), with the evidence files that differ from what was
    signed; None when the workspace is not signed."""
    making = pending()
    if making is not None:
        return making
    envelope = _read_envelope(ws)
    name = _name(ws, envelope_path(ws))
    if isinstance(envelope, Problem):
        if envelope.subject is None:  # not signed
            return None
        return SignatureShown(envelope=name, problem=envelope.text)
    try:
        statement = parse_statement(envelope)
    except Unreadable as exc:
        return SignatureShown(envelope=name, problem=exc.text)
    pred = statement.predicate
    signed = {n: d for n, d in statement.digests().items() if n.startswith("evidence/")}
    held = _holding(ws)
    changed = sorted(set(held.current) - set(signed))
    for n, digest in signed.items():
        try:
            if sha256_path(ws.root / n)[0] != digest:
                changed.append(n)
        except OSError:
            changed.append(n)
    return SignatureShown(
        keyid=pred.signer.keyid,
        signed_at_utc=pred.signed_at_utc,
        valid_until_utc=pred.valid_until_utc,
        author=pred.signer.author,
        author_from=pred.signer.author_from,
        host=pred.signer.host,
        records=len(pred.records),
        envelope=name,
        changed=tuple(sorted(set(changed))),
    )
