"""The team's keys as PEM files: a private key to sign with, a public key to verify with.

Ed25519 and ECDSA P-256 (securesystemslib's `ed25519` and `ecdsa-sha2-nistp256` schemes),
loaded by pyca/cryptography; a private key may be protected by a passphrase. A key file is
read only when it is a regular file, at most MAX_KEY_BYTES, and every problem with it is one
line naming the file (exit 2). No message ever quotes a byte of a key or of a passphrase.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes, PublicKeyTypes
from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key
from securesystemslib.signer import CryptoSigner, SSlibKey

from gpudecide.errors import InputError
from gpudecide.fsutil import read_regular

__all__ = [
    "MAX_KEY_BYTES",
    "MAX_PASSPHRASE_BYTES",
    "PASSPHRASE_ENV",
    "PassphraseNeeded",
    "load_public_key",
    "load_signer",
    "passphrase_from",
]

MAX_KEY_BYTES = 64 << 10
MAX_PASSPHRASE_BYTES = 4 << 10
# Where a passphrase may come from without being typed: never a command-line option, which
# every user of the machine can read in the process list.
PASSPHRASE_ENV = "GPUDECIDE_KEY_PASSPHRASE"

_PEM_LABEL = re.compile(rb"-----BEGIN ([A-Z0-9 ]{1,40})-----")


class PassphraseNeeded(InputError):
    """The private key is protected by a passphrase and none was given."""


def _kind(key: PrivateKeyTypes | PublicKeyTypes) -> str:
    """A key's algorithm as an error names it (never its value)."""
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey):
        return f"ECDSA {key.curve.name}"
    return type(key).__name__.removesuffix("PrivateKey").removesuffix("PublicKey").lstrip("_")


def _supported(key: PrivateKeyTypes | PublicKeyTypes) -> bool:
    if isinstance(key, ed25519.Ed25519PrivateKey | ed25519.Ed25519PublicKey):
        return True
    return isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) and (
        isinstance(key.curve, ec.SECP256R1)
    )


def _pem(path: Path) -> tuple[bytes, str]:
    """The file's bytes and its first PEM label; a file that is no PEM is refused."""
    data = read_regular(path, MAX_KEY_BYTES)
    found = _PEM_LABEL.search(data)
    if found is None:
        raise InputError(
            "not a PEM key file",
            path=path,
            hint="give the key in PEM, e.g. `openssl pkey -in KEY -out KEY.pem`",
        )
    return data, found.group(1).decode("ascii")


def load_signer(path: Path, passphrase: bytes | None = None) -> CryptoSigner:
    """A signer from a PEM private key; `passphrase` opens a protected one (and is not
    needed by one without). `PassphraseNeeded` when the key is protected and none came."""
    data, label = _pem(path)
    if "PRIVATE KEY" not in label:
        raise InputError(
            "is a public key or a certificate; signing needs the private key",
            path=path,
            hint="pass the private key with --key; the public one is for `gpudecide verify --pub`",
        )
    if label == "OPENSSH PRIVATE KEY":
        raise InputError(
            "is an OpenSSH private key; signing reads PEM (PKCS#8)",
            path=path,
            hint="convert a copy: `ssh-keygen -p -m PKCS8 -f COPY`",
        )
    try:
        try:
            key = load_pem_private_key(data, None)
        except TypeError:  # protected: a passphrase is needed
            if passphrase is None:
                raise PassphraseNeeded(
                    "the key is protected by a passphrase and none was given",
                    path=path,
                    hint="set GPUDECIDE_KEY_PASSPHRASE, pass --passphrase-file FILE, or "
                    "run it in a terminal to be asked",
                ) from None
            try:
                key = load_pem_private_key(data, passphrase)
            except (ValueError, TypeError):
                raise InputError(
                    "the passphrase does not open this key",
                    path=path,
                    hint="check the passphrase (a trailing newline of --passphrase-file "
                    "is dropped)",
                ) from None
    except (ValueError, UnsupportedAlgorithm):
        raise InputError(
            "cannot be read as a PEM private key",
            path=path,
            hint="use an Ed25519 or ECDSA P-256 key in PEM",
        ) from None
    if not _supported(key):
        raise InputError(
            "holds a key of type {algorithm}; gpudecide signs with Ed25519 or ECDSA P-256",
            path=path,
            hint="use an Ed25519 or ECDSA P-256 key in PEM",
            algorithm=_kind(key),
        )
    return CryptoSigner(key)


def load_public_key(path: Path) -> SSlibKey:
    """The public key (PEM, SubjectPublicKeyInfo) a signature is checked with."""
    data, label = _pem(path)
    if "PRIVATE KEY" in label:
        raise InputError(
            "is a private key; verifying needs only the public key",
            path=path,
            hint="give the auditor the public key: `openssl pkey -in KEY.pem -pubout -out KEY.pub`",
        )
    try:
        key = load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm):
        raise InputError(
            "cannot be read as a PEM public key",
            path=path,
            hint="use an Ed25519 or ECDSA P-256 key in PEM",
        ) from None
    if not _supported(key):
        raise InputError(
            "holds a key of type {algorithm}; gpudecide signs with Ed25519 or ECDSA P-256",
            path=path,
            hint="use an Ed25519 or ECDSA P-256 key in PEM",
            algorithm=_kind(key),
        )
    return SSlibKey.from_crypto(key)


def passphrase_from(file: Path | None) -> bytes | None:
    """The passphrase of the signing key: the first line of `file`, else the environment's
    GPUDECIDE_KEY_PASSPHRASE, else None (the key needs none, or it is asked for)."""
    if file is not None:
        data = read_regular(file, MAX_PASSPHRASE_BYTES)
        line = data[:-1] if data.endswith(b"\n") else data
        line = line[:-1] if line.endswith(b"\r") else line
        if not line:
            raise InputError("the passphrase file is empty", path=file)
        return line
    value = os.environ.get(PASSPHRASE_ENV)
    return value.encode("utf-8") if value else None
