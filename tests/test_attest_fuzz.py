"""Fuzzing the signature file's reader: malformed JSON, base64 and statements, and a real
envelope mutated byte by byte, are each one `Unreadable` reason (never a traceback), and
`verify` on any of them is a failure naming the problem (exit 1), never a pass."""

from __future__ import annotations

import atexit
import base64
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from securesystemslib.dsse import Envelope
from securesystemslib.signer import CryptoSigner

from gpudecide.attest import archive
from gpudecide.attest.envelope import (
    ENVELOPE_NAME,
    PAYLOAD_TYPE,
    Unreadable,
    envelope_json,
    parse_envelope,
    parse_statement,
)
from gpudecide.message import english
from gpudecide.sections import build_report

from .attest_fixtures import make_workspace
from .conftest import examples

SETTINGS = settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

SIGNER = CryptoSigner.generate_ed25519()
# One real workspace, signed once; each example replaces only its signature file.
_TMP = Path(tempfile.mkdtemp(prefix="gpudecide-attest-fuzz-"))
atexit.register(shutil.rmtree, _TMP, True)
WS = make_workspace(_TMP / "ws")
archive.sign_workspace(WS, SIGNER, build_report)
REAL = (WS.report_dir / ENVELOPE_NAME).read_bytes()
REAL_DOC: dict[str, Any] = json.loads(REAL)
REAL_STATEMENT: dict[str, Any] = json.loads(base64.b64decode(REAL_DOC["payload"]))


def _outcome(data: bytes) -> str:
    """Parse as `verify` does: an envelope and a statement, or the one reason why not."""
    try:
        envelope = parse_envelope(data)
        parse_statement(envelope)
    except Unreadable as exc:
        assert english(exc.text)  # a sentence a person can read
        assert "\n" not in english(exc.text)
        return "unreadable"
    return "read"


def _verify(data: bytes) -> archive.Verification:
    (WS.report_dir / ENVELOPE_NAME).write_bytes(data)
    return archive.verify_workspace(WS, SIGNER.public_key)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
b64ish = st.one_of(
    st.text(
        alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n",
        max_size=60,
    ),
    st.binary(max_size=40).map(lambda b: base64.b64encode(b).decode()),
    st.text(max_size=20),
)
envelope_like = st.fixed_dictionaries(
    {},
    optional={
        "payload": b64ish | json_values,
        "payloadType": st.sampled_from([PAYLOAD_TYPE, "text/plain", ""]) | json_values,
        "signatures": st.lists(
            st.fixed_dictionaries(
                {},
                optional={"keyid": st.text(max_size=70) | json_values, "sig": b64ish | json_values},
            ),
            max_size=3,
        )
        | json_values,
    },
)


@SETTINGS
@given(st.binary(max_size=300))
def test_any_bytes_are_read_or_refused(data: bytes) -> None:
    assert _outcome(data) in ("read", "unreadable")


@SETTINGS
@given(envelope_like)
def test_envelope_shaped_json_is_read_or_refused(doc: dict[str, Any]) -> None:
    data = json.dumps(doc).encode()
    assert _outcome(data) in ("read", "unreadable")
    assert not _verify(data).ok


def _statement_with(path: list[str | int], value: Any) -> dict[str, Any]:
    statement = json.loads(json.dumps(REAL_STATEMENT))
    node: Any = statement
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return statement


PATHS: list[list[str | int]] = [
    ["_type"],
    ["predicateType"],
    ["subject"],
    ["subject", 0],
    ["subject", 0, "name"],
    ["subject", 0, "digest"],
    ["subject", 0, "digest", "sha256"],
    ["predicate"],
    ["predicate", "signed_at_utc"],
    ["predicate", "valid_until_utc"],
    ["predicate", "signer"],
    ["predicate", "signer", "keyid"],
    ["predicate", "signer", "author"],
    ["predicate", "records"],
]


@SETTINGS
@given(st.sampled_from(PATHS), json_values, st.booleans())
def test_a_changed_statement_never_verifies(
    path: list[str | int], value: Any, resign: bool
) -> None:
    """A statement changed anywhere: refused by the reader, or read and then refused by the
    signature; re-signed with the right key, a bad one is still refused by the reader or by
    the subjects (a name outside evidence/ and report/ is never read)."""
    statement = _statement_with(path, value)
    payload = json.dumps(statement).encode()
    if resign:
        envelope = Envelope(payload, PAYLOAD_TYPE, {})
        envelope.sign(SIGNER)
        data = envelope_json(envelope).encode()
    else:
        data = json.dumps({**REAL_DOC, "payload": base64.b64encode(payload).decode()}).encode()
    result = _verify(data)
    if statement == REAL_STATEMENT:
        assert result.ok == resign or result.ok
        return
    assert not result.ok or (resign and _outcome(data) == "read")
    if not resign:
        assert not result.signature_ok


@SETTINGS
@given(st.integers(min_value=0, max_value=len(REAL) - 1), st.binary(min_size=1, max_size=3))
def test_a_real_envelope_mutated_never_verifies(at: int, junk: bytes) -> None:
    data = REAL[:at] + junk + REAL[at + len(junk) :]
    assert _outcome(data) in ("read", "unreadable")
    result = _verify(data)
    if data != REAL and result.ok:
        # Only a change JSON or base64 decoding cannot see (whitespace, an escape) passes.
        assert parse_envelope(data).payload == parse_envelope(REAL).payload
        assert parse_envelope(data).signatures == parse_envelope(REAL).signatures


def test_the_real_envelope_verifies() -> None:
    assert _verify(REAL).ok
