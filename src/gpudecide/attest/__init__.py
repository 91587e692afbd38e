"""Signed, attributable evidence: the archive of a decision signed with the team's key.

`gpudecide sign` puts every current evidence record and the report files (name and
SHA-256) in an in-toto Statement v1, in a DSSE envelope signed with an Ed25519 or ECDSA
P-256 key (securesystemslib); `gpudecide verify` checks it with the public key. The report
shows the signer's key id and the time of signing (`signature_of`).
"""

from gpudecide.attest.archive import signature_of
from gpudecide.attest.shown import SignatureShown

__all__ = ["SignatureShown", "signature_of"]
