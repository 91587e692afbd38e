"""Shared by the attest tests: real keys generated per test, a small workspace with evidence,
and the `sign` / `verify` commands through an app built the way the root CLI builds it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
from cryptography.hazmat.primitives import serialization as ser
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from typer.testing import CliRunner, Result

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.author import set_author
from gpudecide.i18n import set_language

PASSPHRASE = "correct horse battery staple 7Qx!"


@dataclass(frozen=True)
class KeyPair:
    """A private key file, its public key file, and the text each holds."""

    private: Path
    public: Path
    private_pem: str
    public_pem: str


def write_key(
    folder: Path, name: str, key: PrivateKeyTypes, passphrase: str | None = None
) -> KeyPair:
    """The key as PEM files (PKCS#8, SubjectPublicKeyInfo), protected when `passphrase`."""
    folder.mkdir(parents=True, exist_ok=True)
    protect: ser.KeySerializationEncryption = (
        ser.BestAvailableEncryption(passphrase.encode()) if passphrase else ser.NoEncryption()
    )
    private_pem = key.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8, protect).decode()
    public_pem = (
        key.public_key()
        .public_bytes(ser.Encoding.PEM, ser.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    private, public = folder / f"{name}.pem", folder / f"{name}.pub"
    private.write_text(private_pem)
    public.write_text(public_pem)
    return KeyPair(private, public, private_pem, public_pem)


def ed25519_key(folder: Path, name: str = "team-ed25519") -> KeyPair:
    return write_key(folder, name, ed25519.Ed25519PrivateKey.generate())


def p256_key(folder: Path, name: str = "team-p256", passphrase: str | None = PASSPHRASE) -> KeyPair:
    return write_key(folder, name, ec.generate_private_key(ec.SECP256R1()), passphrase)


def rsa_key(folder: Path) -> KeyPair:
    return write_key(
        folder, "team-rsa", rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )


def add_record(ws: workspace.Workspace, kind: str, value: int = 1) -> Path:
    """A sealed record of `kind` computed from the workspace's log file."""
    log = ws.root / "logs" / "jobs.txt"
    if not log.exists():
        log.write_text("JobID|State\n1|COMPLETED\n")
    record = ev.Evidence(
        kind=kind,
        title=f"{kind} check",
        spec_ids=["A5"],
        verdict="info",
        summary=f"{kind}: {value}",
        figures={"value": value},
        inputs=[ev.input_ref(log, ws.root)],
    )
    return ev.write(record, ws.evidence_dir)


def make_workspace(root: Path, language: str = "en") -> workspace.Workspace:
    """A template workspace with two evidence records (kinds no report section knows, so
    the report is quick to write)."""
    workspace.init(root)
    if language != "en":
        cfg = root / workspace.CONFIG_NAME
        cfg.write_text(cfg.read_text().replace("language: en", f"language: {language}"))
    ws = workspace.load(root)
    add_record(ws, "probe")
    add_record(ws, "survey")
    return ws


def app() -> typer.Typer:
    """The real command line (`sign` and `verify` as the root CLI registers them)."""
    from gpudecide.cli import app as root

    return root


def invoke(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> Result:
    """Run one command; the reader's language comes from the workspace or `env` only."""
    base = {"GPUDECIDE_LANG": None, "GPUDECIDE_KEY_PASSPHRASE": None}
    return CliRunner(env={**base, **(env or {})}).invoke(app(), list(args), input=stdin)


@pytest.fixture(autouse=True)
def _fresh_run() -> Iterator[None]:
    """Each test starts as a fresh run: English, no declared author."""
    yield
    set_language("en")
    set_author(None)
    set_author(None, source="workspace")
