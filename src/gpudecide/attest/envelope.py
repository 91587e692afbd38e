"""The signed archive statement and its DSSE envelope, as written and as read back.

The statement is an in-toto Statement v1 (https://in-toto.io/Statement/v1): its subjects
are the workspace's current evidence records and report files, each named by its path
inside the workspace and its SHA-256; its predicate (`PREDICATE_TYPE`) says when it was
signed, until when it is valid, who declared they signed it, and which record each evidence
subject is. It travels in a DSSE envelope (payload type `application/vnd.in-toto+json`)
signed with securesystemslib.

Reading is strict and bounded because the envelope is what an auditor checks: a file that
is not the shape written here is `Unreadable` with one message, never a traceback, and
nothing in it can point the verifier outside `evidence/` and `report/` (subject names are
plain file names under those two folders) or put a control character on a terminal.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)
from pydantic_core import PydanticCustomError
from securesystemslib.dsse import Envelope
from securesystemslib.signer import Signature

from gpudecide.errors import InputError
from gpudecide.evidence import AuthorSource
from gpudecide.jsonio import loads_bounded
from gpudecide.message import Message, message

__all__ = [
    "ENVELOPE_NAME",
    "MAX_ENVELOPE_BYTES",
    "MAX_SIGNATURES",
    "MAX_SUBJECTS",
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "QUOTE_CHARS",
    "STATEMENT_TYPE",
    "ArchivePredicate",
    "ArchiveStatement",
    "Digest",
    "KeyId",
    "LongText",
    "Sha256",
    "SignedRecord",
    "Signer",
    "Subject",
    "SubjectName",
    "Text",
    "Tool",
    "Unreadable",
    "UtcTime",
    "check_statement",
    "envelope_json",
    "parse_envelope",
    "parse_statement",
    "parse_utc",
    "quoted",
    "utc_text",
]

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "urn:gpudecide:archive-signature:v1"
# The envelope is written beside the report (report/ of the workspace).
ENVELOPE_NAME = "signature.intoto.json"
# A statement names files and records, never their content: far below this.
MAX_ENVELOPE_BYTES = 16 << 20
MAX_SUBJECTS = 100_000
MAX_SIGNATURES = 16
# Untrusted text quoted in a message: this long at most, control characters masked.
QUOTE_CHARS = 120


class Unreadable(Exception):
    """The envelope or the statement in it is not one gpudecide can check; `text` says why."""

    def __init__(self, text: Message) -> None:
        super().__init__(text["msgid"])
        self.text = text


def quoted(value: object, limit: int = QUOTE_CHARS) -> str:
    """Untrusted text as a message may show it: one line, control characters as `?`, at
    most `limit` characters."""
    text = "".join(c if c.isprintable() else "?" for c in str(value))
    return text if len(text) <= limit else text[:limit] + "…"


def _printable(value: str) -> str:
    if not all(c.isprintable() for c in value):
        raise PydanticCustomError("control_character", "holds a control character")
    return value


def _utc(value: str) -> str:
    try:
        datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise PydanticCustomError("not_a_time", "is not a time of day") from None
    return value


Text = Annotated[str, StringConstraints(max_length=200), AfterValidator(_printable)]
LongText = Annotated[str, StringConstraints(max_length=2000), AfterValidator(_printable)]
# A plain file name under evidence/ or report/: the verifier reads nothing else.
SubjectName = Annotated[
    str, StringConstraints(pattern=r"^(evidence|report)/[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
KeyId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._:-]{1,128}$")]
UtcTime = Annotated[
    str,
    StringConstraints(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"),
    AfterValidator(_utc),
]


def utc_text(moment: datetime) -> str:
    """A time as the statement writes it: UTC, whole seconds, `Z`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_utc(text: str) -> datetime:
    """A statement's time (validated by `UtcTime`) as an aware datetime."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


class _Model(BaseModel):
    # Unknown fields are ignored, as the in-toto attestation framework asks of consumers;
    # only the fields below are ever read.
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class Digest(_Model):
    """A subject's digest; SHA-256 is the one gpudecide writes and checks."""

    sha256: Sha256


class Subject(_Model):
    """One signed file: its path inside the workspace and its SHA-256."""

    name: SubjectName
    digest: Digest


class Signer(_Model):
    """Who signed: the key id, and the person and host as the signer declared them."""

    keyid: KeyId
    author: Text
    author_from: AuthorSource
    host: Text


class Tool(_Model):
    """The program that wrote the statement."""

    name: Literal["gpudecide"] = "gpudecide"
    version: Text


class SignedRecord(_Model):
    """What an evidence subject is: the record's id, kind, option and identity hash."""

    name: SubjectName
    id: Text
    kind: Text
    option: Text | None = None
    identity_sha256: Sha256


class ArchivePredicate(_Model):
    """The predicate of an archive signature."""

    signed_at_utc: UtcTime
    valid_until_utc: UtcTime
    signer: Signer
    tool: Tool
    team: Text = ""
    decision: LongText = ""
    records: list[SignedRecord] = Field(max_length=MAX_SUBJECTS)


class ArchiveStatement(_Model):
    """An in-toto Statement v1 whose subjects are the archive's files."""

    type: Literal["https://in-toto.io/Statement/v1"] = Field(
        default="https://in-toto.io/Statement/v1", alias="_type"
    )
    subject: list[Subject] = Field(min_length=1, max_length=MAX_SUBJECTS)
    predicate_type: Literal["urn:gpudecide:archive-signature:v1"] = Field(
        default="urn:gpudecide:archive-signature:v1", alias="predicateType"
    )
    predicate: ArchivePredicate

    def payload(self) -> bytes:
        """The statement as the envelope carries it (compact, keys sorted)."""
        body = self.model_dump(mode="json", by_alias=True)
        return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    def digests(self) -> dict[str, str]:
        """Subject name -> SHA-256."""
        return {s.name: s.digest.sha256 for s in self.subject}


# --- the DSSE envelope ---


class _SignatureEntry(_Model):
    keyid: KeyId
    sig: Annotated[str, StringConstraints(max_length=4096)]


class _EnvelopeDoc(_Model):
    payload: Annotated[str, StringConstraints(max_length=MAX_ENVELOPE_BYTES)]
    payloadType: Annotated[str, StringConstraints(max_length=200)]  # DSSE's name
    signatures: list[_SignatureEntry] = Field(max_length=MAX_SIGNATURES)


def _where(error: Any) -> str:
    return ".".join(str(p) for p in error["loc"]) or "$"


def _base64(text: str, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise Unreadable(
            message("attest", "the signature file is damaged: {where} is not base64", where=where)
        ) from None


class _NotJson(Exception):
    """Untrusted bytes that are not bounded JSON; the reason is English, quoted as a value."""


def _json(data: bytes) -> Any:
    """JSON of untrusted bytes, with the bounds of every JSON input (depth, duplicates)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotJson("not UTF-8 text") from None
    try:
        return loads_bounded(text, "<signature>")
    except InputError as exc:
        raise _NotJson(quoted(exc.message)) from None


def parse_envelope(data: bytes) -> Envelope:
    """The DSSE envelope in `data` (the JSON form: payload, payloadType, signatures, each
    signature with its keyid and base64 sig); `Unreadable` when it is not one."""
    if len(data) > MAX_ENVELOPE_BYTES:
        raise Unreadable(
            message(
                "attest",
                "the signature file is larger than {limit} MiB: it is not gpudecide's",
                limit=MAX_ENVELOPE_BYTES >> 20,
            )
        )
    try:
        doc = _json(data)
    except _NotJson as exc:
        raise Unreadable(
            message("attest", "the signature file is not valid JSON: {problem}", problem=str(exc))
        ) from None
    try:
        parsed = _EnvelopeDoc.model_validate(doc, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise Unreadable(
            message(
                "attest",
                "the signature file is not a DSSE envelope: {where}: {problem}",
                where=quoted(_where(first)),
                problem=quoted(first["msg"]),
            )
        ) from None
    payload = _base64(parsed.payload, "payload")
    signatures: dict[str, Signature] = {}
    for i, entry in enumerate(parsed.signatures):
        sig = _base64(entry.sig, f"signatures.{i}.sig")
        if entry.keyid in signatures:
            raise Unreadable(
                message(
                    "attest",
                    "the signature file is damaged: key {keyid} signed twice",
                    keyid=entry.keyid,
                )
            )
        signatures[entry.keyid] = Signature(entry.keyid, sig.hex())
    return Envelope(payload, parsed.payloadType, signatures)


def envelope_json(envelope: Envelope) -> str:
    """The envelope as the file holds it (DSSE's JSON form, securesystemslib's encoding)."""
    return json.dumps(envelope.to_dict(), indent=2, ensure_ascii=False) + "\n"


def _in_toto_check(doc: Any) -> None:
    """The in-toto attestation library's own check of a Statement v1 (type, subjects with
    a digest, a predicate type and a predicate); `Unreadable` when it refuses."""
    from google.protobuf import json_format
    from in_toto_attestation.v1 import statement_pb2
    from in_toto_attestation.v1.statement import Statement

    try:
        proto = json_format.ParseDict(doc, statement_pb2.Statement(), ignore_unknown_fields=True)
        Statement.copy_from_pb(proto).validate()
    # Whatever the library raises on a hostile statement (its parse errors, ValueError,
    # TypeError, protobuf's own) means it refused it.
    except Exception as exc:
        raise Unreadable(
            message(
                "attest",
                "the signed statement is not an in-toto Statement v1: {problem}",
                problem=quoted(exc),
            )
        ) from None


def check_statement(statement: ArchiveStatement) -> None:
    """Hold a statement about to be signed to the in-toto library's check."""
    _in_toto_check(json.loads(statement.payload()))


def parse_statement(envelope: Envelope) -> ArchiveStatement:
    """The archive statement an envelope carries; `Unreadable` when it carries another
    payload, a statement the in-toto library refuses, or one that is not gpudecide's."""
    if envelope.payload_type != PAYLOAD_TYPE:
        raise Unreadable(
            message(
                "attest",
                "the envelope holds {payload_type}, not an in-toto statement",
                payload_type=quoted(envelope.payload_type),
            )
        )
    try:
        doc = _json(envelope.payload)
    except _NotJson as exc:
        raise Unreadable(
            message("attest", "the signed statement is not valid JSON: {problem}", problem=str(exc))
        ) from None
    if not isinstance(doc, dict):
        raise Unreadable(
            message(
                "attest",
                "the signed statement is not an in-toto Statement v1: {problem}",
                problem="not a JSON object",
            )
        )
    _in_toto_check(doc)
    try:
        return ArchiveStatement.model_validate(doc, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise Unreadable(
            message(
                "attest",
                "the signed statement is not gpudecide's archive signature: {where}: {problem}",
                where=quoted(_where(first)),
                problem=quoted(first["msg"]),
            )
        ) from None
