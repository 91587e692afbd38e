"""Signed, attributable evidence: the archive of a decision signed with the team's key.

`gpudecide sign` puts every current evidence record and the report files (name and
SHA-256) in an in-toto Statement v1, in a DSSE envelope signed with an Ed25519 or ECDSA
P-256 key (securesystemslib); `gpudecide verify` checks it with the public key. The report
shows the signer's key id and the time of signing (`signature_of`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from gpudecide.report.signature import SignatureShown, pending

if TYPE_CHECKING:
    from gpudecide.workspace import Workspace

__all__ = ["SignatureShown", "signature_of"]


def signature_of(ws: Workspace) -> SignatureShown | None:
    """What the report shows of the workspace's signature (see `archive.signature_of`);
    the signing libraries load only when a signature file exists."""
    if pending() is None and not os.path.lexists(ws.report_dir / "signature.intoto.json"):
        return None  # not signed (archive.ENVELOPE_NAME): nothing to read
    from gpudecide.attest import archive

    return archive.signature_of(ws)
