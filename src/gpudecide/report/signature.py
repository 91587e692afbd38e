"""What the report shows of the archive's signature: the signer's key id and the time of
signing, as the signature file states them (the report cannot check a signature: it has no
public key; `gpudecide verify` does).

While `gpudecide sign` rewrites the report, the signature being made is shown (`signing`),
so the signed report names the signature that covers it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, NamedTuple

from gpudecide import fmt
from gpudecide.i18n import N_, translator
from gpudecide.message import Message, english, render

__all__ = [
    "AUTHOR_FROM",
    "DEFAULT_VALID_DAYS",
    "Row",
    "SignatureShown",
    "pending",
    "signing",
]

# Days a signature stays valid unless `sign --valid-days` says otherwise.
DEFAULT_VALID_DAYS = 365

_ = translator("attest")
_n = _.n

# Where the signer's declared name came from (evidence.Producer.author_from).
AUTHOR_FROM = {
    "option": N_("from --author"),
    "workspace": N_("from gpudecide.yaml"),
    "git": N_("from git"),
    "os": N_("the login name"),
}


class Row(NamedTuple):
    """One line of the signature block: a label, its value in the reader's language, and
    whether the value is an identifier shown verbatim (a key id, a name, a command)."""

    label: str
    value: str
    verbatim: bool = False


@dataclass(frozen=True)
class SignatureShown:
    """The archive's signature as the report shows it. `problem` is set (and the rest
    empty) when the signature file cannot be read; `changed` names the evidence files that
    differ from what was signed (changed, gone, or added after signing)."""

    keyid: str = ""
    signed_at_utc: str = ""
    valid_until_utc: str = ""
    author: str = ""
    author_from: str = ""
    host: str = ""
    records: int = 0
    envelope: str = ""
    changed: tuple[str, ...] = ()
    problem: Message | None = None

    def status(self) -> str:
        """One sentence on the signature, in the reader's language."""
        if self.problem is not None:
            return render(self.problem)
        if self.changed:
            return _n(
                "{n} evidence file differs from what was signed: sign the archive again",
                "{n} evidence files differ from what was signed: sign the archive again",
                len(self.changed),
            ).format(n=len(self.changed))
        return _(
            "The evidence on record is what was signed; `gpudecide verify` checks the "
            "signature and the report files with the team's public key."
        )

    def rows(self) -> list[Row]:
        """The signature block, label by label, in the reader's language."""
        if self.problem is not None:
            return [Row(_("Signature"), render(self.problem))]
        source = AUTHOR_FROM.get(self.author_from)
        who = f"{self.author}, {self.host}"
        rows = [
            Row(_("Signed with key"), self.keyid, True),
            Row(_("Signed at"), fmt.moment(self.signed_at_utc)),
            Row(_("Valid until"), fmt.moment(self.valid_until_utc)),
            Row(_("Signed by (as declared)"), who, True),
            Row(_("Name taken"), _(source) if source else self.author_from),
            Row(
                _("Covers"),
                _n(
                    "{n} evidence record and the report",
                    "{n} evidence records and the report",
                    self.records,
                ).format(n=fmt.fmt(self.records)),
            ),
            Row(_("Check it"), f"gpudecide verify --pub KEY.pub  ({self.envelope})", True),
        ]
        if self.changed:
            rows.append(Row(_("Changed since signing"), ", ".join(self.changed), True))
        return rows

    def as_dict(self) -> dict[str, Any]:
        """Machine form (report.json): ids and UTC times as the statement has them."""
        return {
            "keyid": self.keyid or None,
            "signed_at_utc": self.signed_at_utc or None,
            "valid_until_utc": self.valid_until_utc or None,
            "signer": {"author": self.author, "author_from": self.author_from, "host": self.host}
            if self.keyid
            else None,
            "records": self.records,
            "envelope": self.envelope,
            "changed": list(self.changed),
            "problem": english(self.problem) if self.problem is not None else None,
        }


_PENDING: ContextVar[SignatureShown | None] = ContextVar("gpudecide_signing", default=None)


@contextmanager
def signing(shown: SignatureShown) -> Iterator[None]:
    """Inside the block the report shows `shown`: the signature `sign` is making."""
    token = _PENDING.set(shown)
    try:
        yield
    finally:
        _PENDING.reset(token)


def pending() -> SignatureShown | None:
    """The signature being made now, if `sign` is rewriting the report."""
    return _PENDING.get()
