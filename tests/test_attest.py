"""`gpudecide sign` / `gpudecide verify` (issue 26, SPEC A5, D4, R3): the archive signed
with a real team key and checked with the libraries' own verifiers; every way the archive
can differ from what was signed is exit 1 and named; a bad key file is exit 2 in one line;
no key and no passphrase is ever printed or written."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from google.protobuf import json_format
from in_toto_attestation.v1 import statement_pb2
from in_toto_attestation.v1.statement import Statement
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.attest import archive, keys, signature_of
from gpudecide.attest.envelope import ENVELOPE_NAME, PAYLOAD_TYPE, PREDICATE_TYPE
from gpudecide.report.signature import SignatureShown, signing
from gpudecide.sections import build_report

from .attest_fixtures import (
    PASSPHRASE,
    KeyPair,
    _fresh_run,  # noqa: F401 (autouse)
    add_record,
    ed25519_key,
    invoke,
    make_workspace,
    p256_key,
    rsa_key,
)

REPORT_FILES = {"report/index.html", "report/report.md", "report/report.json"}


@pytest.fixture
def ws(tmp_path: Path) -> workspace.Workspace:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def ed(tmp_path: Path) -> KeyPair:
    return ed25519_key(tmp_path / "keys")


@pytest.fixture
def p256(tmp_path: Path) -> KeyPair:
    return p256_key(tmp_path / "keys")


def _sign(ws: workspace.Workspace, key: KeyPair, *extra: str) -> dict[str, object]:
    res = invoke("sign", str(ws.root), "--key", str(key.private), "--json", *extra)
    assert res.exit_code == 0, res.output
    body: dict[str, object] = json.loads(res.stdout)
    return body


def _verify(ws: workspace.Workspace, key: KeyPair, *extra: str) -> tuple[int, str]:
    res = invoke("verify", str(ws.root), "--pub", str(key.public), *extra)
    return res.exit_code, res.output


def _envelope(ws: workspace.Workspace) -> dict[str, object]:
    doc: dict[str, object] = json.loads((ws.report_dir / ENVELOPE_NAME).read_text())
    return doc


def _everything_written(root: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in sorted(root.rglob("*")) if p.is_file()
    )


# --- a signature the libraries' own verifiers accept ---


def test_signed_archive_verifies_with_securesystemslib_and_cryptography(
    ws: workspace.Workspace, ed: KeyPair
) -> None:
    body = _sign(ws, ed)
    doc = _envelope(ws)
    # securesystemslib's own DSSE parser and verifier, with the key made from the PEM.
    public = load_pem_public_key(ed.public.read_bytes())
    key = SSlibKey.from_crypto(public)
    envelope = Envelope.from_dict(json.loads(json.dumps(doc)))
    assert set(envelope.verify([key], 1)) == {key.keyid} == {body["keyid"]}
    # cryptography's verify on the exact DSSE pre-authentication encoding, built here.
    payload = base64.b64decode(str(doc["payload"]))
    sig = base64.b64decode(doc["signatures"][0]["sig"])  # type: ignore[index]
    pae = b"DSSEv1 %d %b %d %b" % (len(PAYLOAD_TYPE), PAYLOAD_TYPE.encode(), len(payload), payload)
    public.verify(sig, pae)  # type: ignore[union-attr,call-arg]
    assert doc["payloadType"] == PAYLOAD_TYPE
    # The in-toto attestation library accepts the statement as a Statement v1.
    statement = json.loads(payload)
    Statement.copy_from_pb(json_format.ParseDict(statement, statement_pb2.Statement())).validate()
    assert statement["predicateType"] == PREDICATE_TYPE
    # Subjects: every current record and the three report files, each with its SHA-256.
    names = {s["name"] for s in statement["subject"]}
    records = {f"evidence/{p.name}" for p in ws.evidence_dir.glob("*.json")}
    assert names == records | REPORT_FILES and len(records) == 2
    for s in statement["subject"]:
        assert (
            s["digest"]["sha256"] == hashlib.sha256((ws.root / s["name"]).read_bytes()).hexdigest()
        )
    pred = statement["predicate"]
    assert pred["signer"]["keyid"] == key.keyid
    assert {r["kind"] for r in pred["records"]} == {"probe", "survey"}
    code, out = _verify(ws, ed)
    assert code == 0, out
    assert f"signature good: key {key.keyid}" in out
    assert "2 evidence records and the report match what was signed" in out


def test_p256_key_with_a_passphrase_from_a_file_or_the_environment(
    ws: workspace.Workspace, p256: KeyPair, tmp_path: Path
) -> None:
    secret = tmp_path / "passphrase.txt"
    secret.write_text(PASSPHRASE + "\n")
    body = _sign(ws, p256, "--passphrase-file", str(secret))
    key = SSlibKey.from_crypto(load_pem_public_key(p256.public.read_bytes()))
    assert body["keyid"] == key.keyid and key.scheme == "ecdsa-sha2-nistp256"
    envelope = Envelope.from_dict(_envelope(ws))
    assert set(envelope.verify([key], 1)) == {key.keyid}
    assert _verify(ws, p256)[0] == 0
    res = invoke(
        "sign", str(ws.root), "--key", str(p256.private), env={keys.PASSPHRASE_ENV: PASSPHRASE}
    )
    assert res.exit_code == 0, res.output
    assert _verify(ws, p256)[0] == 0
    # Neither the passphrase nor a line of either key is in what was printed or written.
    written = _everything_written(ws.root) + res.output + json.dumps(body)
    assert PASSPHRASE not in written
    for pem in (p256.private_pem,):
        for line in pem.splitlines()[1:-1]:
            assert line not in written


def test_no_key_material_in_evidence_report_or_output(ws: workspace.Workspace, ed: KeyPair) -> None:
    res = invoke("sign", str(ws.root), "--key", str(ed.private))
    assert res.exit_code == 0, res.output
    code, out = _verify(ws, ed)
    assert code == 0
    written = _everything_written(ws.root) + res.output + out
    body = "".join(ed.private_pem.splitlines()[1:-1])
    assert body not in written and body[:20] not in written
    # The public key itself is not copied either: the key id names it.
    assert "".join(ed.public_pem.splitlines()[1:-1]) not in written


# --- every difference from what was signed: exit 1, named ---


def test_record_edited_and_resealed_fails(ws: workspace.Workspace, ed: KeyPair) -> None:
    _sign(ws, ed)
    path = sorted(ws.evidence_dir.glob("probe-*.json"))[0]
    record = ev.load(path)
    edited = record.model_copy(update={"figures": {"value": 99}, "summary": "probe: 99"})
    edited.content_sha256 = edited.compute_content_sha256()  # resealed: its own hash matches
    path.write_text(edited.model_dump_json(indent=2) + "\n")
    assert ev.freshness(ev.load(path, verify=True), ws.root)[0] is ev.Freshness.FRESH
    code, out = _verify(ws, ed)
    assert code == 1
    assert f"evidence/{path.name}: changed since signing" in out
    assert "verify failed: 1 problem" in out


def test_record_added_after_signing_is_named(ws: workspace.Workspace, ed: KeyPair) -> None:
    _sign(ws, ed)
    added = add_record(ws, "extra")
    code, out = _verify(ws, ed)
    assert code == 1
    assert f"evidence/{added.name}: added after signing (the signature does not cover it)" in out
    # A newer record of a signed subject is added too (the old one stays signed and fresh).
    newer = add_record(ws, "probe", value=2)
    res = invoke("verify", str(ws.root), "--pub", str(ed.public), "--json")
    assert res.exit_code == 1
    named = {p["subject"] for p in json.loads(res.stdout)["problems"]}
    assert named == {f"evidence/{added.name}", f"evidence/{newer.name}"}


def test_input_changed_after_signing_is_stale(ws: workspace.Workspace, ed: KeyPair) -> None:
    _sign(ws, ed)
    (ws.root / "logs" / "jobs.txt").write_text("JobID|State\n1|FAILED\n")
    code, out = _verify(ws, ed)
    assert code == 1
    assert "no longer true of its inputs (an input changed)" in out
    assert "logs/jobs.txt: input changed since the evidence was computed" in out


def test_report_rewritten_or_gone_after_signing(ws: workspace.Workspace, ed: KeyPair) -> None:
    _sign(ws, ed)
    (ws.report_dir / "report.md").write_text("# another report\n")
    (ws.report_dir / "index.html").unlink()
    code, out = _verify(ws, ed)
    assert code == 1
    assert "report/report.md: changed since signing" in out
    assert "report/index.html: signed, but the file is gone" in out


def test_wrong_key_fails(ws: workspace.Workspace, ed: KeyPair, tmp_path: Path) -> None:
    _sign(ws, ed)
    other = ed25519_key(tmp_path / "other", "someone-else")
    code, out = _verify(ws, other)
    assert code == 1
    signer = SSlibKey.from_crypto(load_pem_public_key(ed.public.read_bytes())).keyid
    given = SSlibKey.from_crypto(load_pem_public_key(other.public.read_bytes())).keyid
    assert f"signed by key {signer}, not by the key given ({given})" in out


def test_forged_signature_and_changed_statement_fail(ws: workspace.Workspace, ed: KeyPair) -> None:
    _sign(ws, ed)
    doc = _envelope(ws)
    sigs = doc["signatures"]
    assert isinstance(sigs, list)
    original = dict(sigs[0])
    raw = bytearray(base64.b64decode(original["sig"]))
    raw[5] ^= 0x01
    sigs[0] = {**original, "sig": base64.b64encode(bytes(raw)).decode()}
    (ws.report_dir / ENVELOPE_NAME).write_text(json.dumps(doc))
    code, out = _verify(ws, ed)
    assert code == 1 and "the signature does not verify with key" in out
    # The statement changed to match an edited record, the old signature kept.
    statement = json.loads(base64.b64decode(str(doc["payload"])))
    statement["subject"][0]["digest"]["sha256"] = "0" * 64
    doc["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    sigs[0] = original
    (ws.report_dir / ENVELOPE_NAME).write_text(json.dumps(doc))
    code, out = _verify(ws, ed)
    assert code == 1 and "the signature does not verify with key" in out


def test_missing_signature_is_said_plainly(ws: workspace.Workspace, ed: KeyPair) -> None:
    code, out = _verify(ws, ed)
    assert code == 1
    assert "not signed: there is no report/signature.intoto.json" in out
    _sign(ws, ed)
    doc = _envelope(ws)
    doc["signatures"] = []
    (ws.report_dir / ENVELOPE_NAME).write_text(json.dumps(doc))
    code, out = _verify(ws, ed)
    assert code == 1 and "the signature file holds no signature" in out
    (ws.report_dir / ENVELOPE_NAME).write_text("{not json")
    code, out = _verify(ws, ed)
    assert code == 1 and "the signature file is not valid JSON" in out


def test_expired_signature_and_max_age(ws: workspace.Workspace, ed: KeyPair) -> None:
    signer = keys.load_signer(ed.private)
    long_ago = datetime.now(UTC) - timedelta(days=400)
    run = archive.sign_workspace(ws, signer, build_report, valid_days=365, now=long_ago)
    assert run.envelope is not None and not run.problems
    code, out = _verify(ws, ed)
    assert code == 1
    assert "the signature expired on " in out and "it was valid for 365 days from" in out
    # Within its validity, the auditor's own --max-age still refuses an old signature.
    archive.sign_workspace(
        ws, signer, build_report, valid_days=365, now=datetime.now(UTC) - timedelta(days=3)
    )
    assert _verify(ws, ed)[0] == 0
    code, out = _verify(ws, ed, "--max-age", "1")
    assert code == 1
    assert "the signature is older than --max-age allows" in out and "3 days ago" in out
    assert _verify(ws, ed, "--max-age", "5")[0] == 0


# --- sign refuses an archive that is already untrue ---


def test_sign_refuses_stale_or_damaged_records(ws: workspace.Workspace, ed: KeyPair) -> None:
    (ws.root / "logs" / "jobs.txt").write_text("changed\n")
    (ws.evidence_dir / "broken.json").write_text("{")
    res = invoke("sign", str(ws.root), "--key", str(ed.private))
    assert res.exit_code == 1
    assert "nothing was signed:" in res.output
    assert "evidence/broken.json: not a readable evidence record" in res.output
    assert res.output.count("no longer true of its inputs (an input changed)") == 2
    assert not (ws.report_dir / ENVELOPE_NAME).exists()


def test_sign_without_evidence_is_bad_input(tmp_path: Path, ed: KeyPair) -> None:
    workspace.init(tmp_path / "empty")
    res = invoke("sign", str(tmp_path / "empty"), "--key", str(ed.private))
    assert res.exit_code == 2
    assert res.stderr.strip().endswith(
        "no evidence records to sign (run the analyses first (`gpudecide profile`, "
        "`gpudecide cost`, ...))"
    )


# --- bad key files: exit 2, one line, no key material ---


def _one_line(res_output: str, stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize(
    "case", ["not_pem", "public_as_private", "fifo", "folder", "missing", "rsa", "garbled"]
)
def test_bad_signing_key_is_one_line_exit_2(
    ws: workspace.Workspace, ed: KeyPair, tmp_path: Path, case: str
) -> None:
    bad = tmp_path / "bad-key"
    if case == "not_pem":
        bad.write_text("this is a shopping list, not a key\n")
    elif case == "public_as_private":
        bad = ed.public
    elif case == "fifo":
        os.mkfifo(bad)
    elif case == "folder":
        bad.mkdir()
    elif case == "rsa":
        bad = rsa_key(tmp_path / "rsa").private
    elif case == "garbled":
        lines = ed.private_pem.splitlines()
        bad.write_text("\n".join([lines[0], "AAAA" + lines[1][4:], *lines[2:]]) + "\n")
    res = invoke("sign", str(ws.root), "--key", str(bad))
    assert res.exit_code == 2, res.output
    line = _one_line(res.output, res.stderr)
    assert line.startswith(f"error: {bad}")
    want = {
        "not_pem": "not a PEM key file",
        "public_as_private": "is a public key or a certificate; signing needs the private key",
        "fifo": "not a regular file",
        "folder": "not a regular file",
        "missing": "no such file",
        "rsa": "holds a key of type RSA; gpudecide signs with Ed25519 or ECDSA P-256",
        "garbled": "cannot be read as a PEM private key",
    }[case]
    assert want in line
    for pem_line in ed.private_pem.splitlines()[1:-1]:
        assert pem_line not in res.output
    assert not (ws.report_dir / ENVELOPE_NAME).exists()


def test_passphrase_wrong_or_missing_is_one_line_exit_2(
    ws: workspace.Workspace, p256: KeyPair, tmp_path: Path
) -> None:
    wrong = "not the passphrase at all"
    res = invoke("sign", str(ws.root), "--key", str(p256.private), env={keys.PASSPHRASE_ENV: wrong})
    assert res.exit_code == 2
    line = _one_line(res.output, res.stderr)
    assert "the passphrase does not open this key" in line
    assert wrong not in res.output and PASSPHRASE not in res.output
    # No passphrase and no terminal to ask in: said, not waited for.
    res = invoke("sign", str(ws.root), "--key", str(p256.private))
    assert res.exit_code == 2
    assert "the key is protected by a passphrase and none was given" in _one_line(
        res.output, res.stderr
    )
    empty = tmp_path / "empty-passphrase"
    empty.write_text("\n")
    res = invoke("sign", str(ws.root), "--key", str(p256.private), "--passphrase-file", str(empty))
    assert res.exit_code == 2 and "the passphrase file is empty" in res.stderr
    fifo = tmp_path / "passphrase-fifo"
    os.mkfifo(fifo)
    res = invoke("sign", str(ws.root), "--key", str(p256.private), "--passphrase-file", str(fifo))
    assert res.exit_code == 2 and "not a regular file" in _one_line(res.output, res.stderr)


def test_passphrase_asked_in_a_terminal_is_not_echoed(
    ws: workspace.Workspace, p256: KeyPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpudecide.attest import cli

    monkeypatch.setattr(cli, "_interactive", lambda: True)
    res = invoke("sign", str(ws.root), "--key", str(p256.private), stdin=PASSPHRASE + "\n")
    assert res.exit_code == 0, res.output
    assert f"Passphrase of {p256.private}" in res.stderr
    assert PASSPHRASE not in res.output
    assert _verify(ws, p256)[0] == 0
    res = invoke("sign", str(ws.root), "--key", str(p256.private), stdin="guess\n")
    assert res.exit_code == 2 and "the passphrase does not open this key" in res.stderr


@pytest.mark.parametrize("case", ["private_as_public", "not_pem", "folder", "fifo"])
def test_bad_public_key_is_one_line_exit_2(
    ws: workspace.Workspace, ed: KeyPair, tmp_path: Path, case: str
) -> None:
    _sign(ws, ed)
    bad = tmp_path / "bad.pub"
    if case == "private_as_public":
        bad = ed.private
    elif case == "not_pem":
        bad.write_bytes(b"\x30\x82\x01\x22binary DER")
    elif case == "folder":
        bad.mkdir()
    else:
        os.mkfifo(bad)
    res = invoke("verify", str(ws.root), "--pub", str(bad))
    assert res.exit_code == 2, res.output
    line = _one_line(res.output, res.stderr)
    want = {
        "private_as_public": "is a private key; verifying needs only the public key",
        "not_pem": "not a PEM key file",
        "folder": "not a regular file",
        "fifo": "not a regular file",
    }[case]
    assert want in line
    for pem_line in ed.private_pem.splitlines()[1:-1]:
        assert pem_line not in res.output


# --- what the report shows ---


def test_signature_of_names_key_time_and_changes(ws: workspace.Workspace, ed: KeyPair) -> None:
    assert signature_of(ws) is None
    body = _sign(ws, ed)
    shown = signature_of(ws)
    assert shown is not None and shown.problem is None
    assert shown.keyid == body["keyid"] and shown.signed_at_utc == body["signed_at_utc"]
    assert shown.records == 2 and shown.changed == ()
    rows = {r.label: r.value for r in shown.rows()}
    assert rows["Signed with key"] == body["keyid"]
    assert rows["Signed at"] == body["signed_at_utc"]
    assert shown.as_dict()["keyid"] == body["keyid"]
    added = add_record(ws, "extra")
    later = signature_of(ws)
    assert later is not None and later.changed == (f"evidence/{added.name}",)
    assert later.status() == "1 evidence file differs from what was signed: sign the archive again"
    (ws.report_dir / ENVELOPE_NAME).write_text("[]")
    broken = signature_of(ws)
    assert broken is not None and broken.problem is not None and not broken.keyid


def test_the_report_being_signed_sees_the_signature_being_made(ws: workspace.Workspace) -> None:
    making = SignatureShown(keyid="k1", signed_at_utc="2026-01-01T00:00:00Z", records=1)
    with signing(making):
        assert signature_of(ws) is making
    assert signature_of(ws) is None


def test_the_envelope_name_is_the_one_the_report_looks_for() -> None:
    from gpudecide.attest.envelope import ENVELOPE_NAME

    assert ENVELOPE_NAME == "signature.intoto.json"
