"""`gpudecide sign` and `gpudecide verify`: the archive signed with the team's key, checked
with its public key (SPEC A5, D4, R3).

    gpudecide sign [WORKSPACE] --key team.pem      report rewritten, archive signed
    gpudecide verify [WORKSPACE] --pub team.pub    signature, digests, validity, freshness

Exit 0: signed / verified; 1: not signed, or a check failed (each failure named); 2: bad
input (a key file that is not a usable key, a wrong passphrase, no workspace).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpudecide.console import JsonOpt, emit_json, guard, open_workspace, out
from gpudecide.fmt import moment
from gpudecide.i18n import translator
from gpudecide.message import render
from gpudecide.report.signature import AUTHOR_FROM, DEFAULT_VALID_DAYS

if TYPE_CHECKING:
    from securesystemslib.signer import CryptoSigner

    from gpudecide.attest.archive import Problem, SignRun, Verification
    from gpudecide.workspace import Workspace

__all__ = [
    "WorkspaceArg",
    "register",
    "sign_cmd",
    "verify_cmd",
]

_ = translator("attest")
_n = _.n

WorkspaceArg = Annotated[
    Path | None, typer.Argument(help="Workspace folder (default: found from here up).")
]


def _workspace(path: Path | None) -> Workspace:
    ws = open_workspace(path, required=True)
    assert ws is not None  # required=True raises instead of returning None
    return ws


def _interactive() -> bool:
    """Whether a person at a terminal can be asked for the passphrase."""
    return sys.stdin.isatty()


def _signer(key: Path, passphrase_file: Path | None) -> CryptoSigner:
    """The signing key; a protected key with no passphrase given is asked for in a
    terminal (hidden), never read from the command line."""
    from gpudecide.attest import keys  # the key libraries load when a key is used

    passphrase = keys.passphrase_from(passphrase_file)
    try:
        return keys.load_signer(key, passphrase)
    except keys.PassphraseNeeded:
        if not _interactive():
            raise
    typed = typer.prompt(
        _("Passphrase of {path}").format(path=key), hide_input=True, err=True, default=""
    )
    return keys.load_signer(key, typed.encode("utf-8"))


def _problem_lines(problems: list[Problem]) -> None:
    for p in problems:
        out.print(f"  {render(p.text)}", markup=False)
        for detail in p.details:
            out.print(f"    {render(detail)}", markup=False)


def _show_sign(run: SignRun, as_json: bool) -> None:
    st = run.statement
    if as_json:
        body: dict[str, Any] = {
            "signed": st is not None,
            "envelope": str(run.envelope) if run.envelope else None,
            "keyid": st.predicate.signer.keyid if st else None,
            "signed_at_utc": st.predicate.signed_at_utc if st else None,
            "valid_until_utc": st.predicate.valid_until_utc if st else None,
            "subjects": [s.name for s in st.subject] if st else [],
            "problems": [p.as_dict() for p in run.problems],
        }
        emit_json(body)
        return
    if st is None:
        out.print(_("nothing was signed:"), markup=False)
        _problem_lines(run.problems)
        out.print(
            _(
                "every current evidence record must be fresh and readable: re-run the "
                "analyses (or `gpudecide evidence --prune`), then sign"
            ),
            markup=False,
        )
        return
    pred = st.predicate
    files = ", ".join(p.name for p in sorted(run.report.values()))
    out.print(_("signed with key {keyid}").format(keyid=pred.signer.keyid), markup=False)
    out.print(
        _n(
            "{n} evidence record and the report ({files})",
            "{n} evidence records and the report ({files})",
            len(pred.records),
        ).format(n=len(pred.records), files=files),
        markup=False,
    )
    out.print(
        _("signature: {path}, valid until {when}").format(
            path=run.envelope, when=moment(pred.valid_until_utc)
        ),
        markup=False,
    )


def _show_verify(v: Verification, as_json: bool) -> None:
    st = v.statement
    pred = st.predicate if st else None
    if as_json:
        body: dict[str, Any] = {
            "verified": v.ok,
            "envelope": str(v.envelope),
            "keyid": v.keyid,
            "signed_by": list(v.signed_by),
            "signature_ok": v.signature_ok,
            "signed_at_utc": pred.signed_at_utc if pred else None,
            "valid_until_utc": pred.valid_until_utc if pred else None,
            "signer": pred.signer.model_dump() if pred else None,
            "subjects": [s.name for s in st.subject] if st else [],
            "problems": [p.as_dict() for p in v.problems],
        }
        emit_json(body)
        return
    if pred is not None:
        source = AUTHOR_FROM.get(pred.signer.author_from, pred.signer.author_from)
        out.print(
            _("signed {when} by {author} on {host} (as declared: {source})").format(
                when=moment(pred.signed_at_utc),
                author=pred.signer.author,
                host=pred.signer.host,
                source=_(source),
            ),
            markup=False,
        )
    if v.ok:
        assert pred is not None
        out.print(_("signature good: key {keyid}").format(keyid=v.keyid), markup=False)
        out.print(
            _n(
                "{n} evidence record and the report match what was signed, valid until {when}",
                "{n} evidence records and the report match what was signed, valid until {when}",
                len(pred.records),
            ).format(n=len(pred.records), when=moment(pred.valid_until_utc)),
            markup=False,
        )
        return
    out.print(
        _n("verify failed: {n} problem", "verify failed: {n} problems", len(v.problems)).format(
            n=len(v.problems)
        ),
        markup=False,
    )
    _problem_lines(v.problems)


def sign_cmd(
    key: Annotated[
        Path,
        typer.Option(
            "--key",
            help="The team's private signing key (PEM: Ed25519 or ECDSA P-256, "
            "optionally protected by a passphrase).",
        ),
    ],
    workspace_dir: WorkspaceArg = None,
    passphrase_file: Annotated[
        Path | None,
        typer.Option(
            "--passphrase-file",
            help="File whose first line is the key's passphrase (else "
            "$GPUDECIDE_KEY_PASSPHRASE, else asked in a terminal).",
        ),
    ] = None,
    valid_days: Annotated[
        int,
        typer.Option(
            "--valid-days",
            help="Days the signature stays valid; written into the signed statement.",
        ),
    ] = DEFAULT_VALID_DAYS,
    as_json: JsonOpt = False,
) -> None:
    """Sign the archive: every current evidence record and the report (rewritten first),
    in an in-toto statement signed with the team's key, written beside the report.

    Exit 1, signing nothing, when a current record is stale, edited or unreadable.
    """
    with guard(as_json):
        ws = _workspace(workspace_dir)
        signer = _signer(key, passphrase_file)
        from gpudecide.attest import archive

        run = archive.sign_workspace(ws, signer, _report_writer[0], valid_days=valid_days)
    _show_sign(run, as_json)
    if run.problems:
        raise typer.Exit(1)


def verify_cmd(
    pub: Annotated[
        Path,
        typer.Option("--pub", help="The team's public key (PEM) the archive was signed with."),
    ],
    workspace_dir: WorkspaceArg = None,
    max_age: Annotated[
        int | None,
        typer.Option(
            "--max-age",
            min=0,
            help="Refuse a signature older than this many days (the statement's own "
            "validity is always checked).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check the archive's signature with the team's public key: the signature, every
    signed file's SHA-256, records added after signing, validity and freshness.

    Exit 1 naming each failure, also when the archive is not signed.
    """
    with guard(as_json):
        ws = _workspace(workspace_dir)
        from gpudecide.attest import archive, keys

        public = keys.load_public_key(pub)
        result = archive.verify_workspace(ws, public, max_age_days=max_age)
    _show_verify(result, as_json)
    if not result.ok:
        raise typer.Exit(1)


# The report builder `sign` rewrites the report with: it knows every analysis, so the
# command line that registers `sign` hands it over (attest stands below the report).
_report_writer: list[Callable[[Workspace], dict[str, Path]]] = []


def register(app: typer.Typer, write_report: Callable[[Workspace], dict[str, Path]]) -> None:
    """Add `sign` and `verify` to the main CLI app; `write_report` rewrites the report."""
    _report_writer[:] = [write_report]
    app.command("sign")(sign_cmd)
    app.command("verify")(verify_cmd)
