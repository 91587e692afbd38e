"""The words of every governance finding, in the reader's language (domain "governance").

A finding is stored with its id and parameters; `render` words it. Each text is a literal
`_()` call so that Babel extracts it into the catalogues.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpudecide.i18n import translator

_ = translator("governance")

_TEXTS: dict[str, Callable[[str], str]] = {
    "no_accountable": lambda lang: _(
        "nobody is Accountable for {activity}: an incident has no owner", lang
    ),
    "multiple_accountable": lambda lang: _(
        "{activity} has more than one Accountable ({who}): nobody decides alone", lang
    ),
    "accountable_not_team": lambda lang: _(
        "{activity}: the Accountable {who} is a vendor, not a person of the team", lang
    ),
    "vendor_only": lambda lang: _(
        "{activity} is done and owned by vendors only: no person of the team", lang
    ),
    "r1_vendor": lambda lang: _(
        "{activity} is given to the vendor {who}: experiment quality stays with the team (R1)",
        lang,
    ),
    "no_on_call": lambda lang: _(
        "{activity} is an on-call duty but nobody of the team owning it is on call", lang
    ),
    "role_uncovered": lambda lang: _(
        "{activity} needs a {role}; its Responsible ({who}) is not one", lang
    ),
    "bus_factor": lambda lang: _(
        "{who} carries {count} of {total} on-call duties (more than {limit:.0%})", lang
    ),
    "no_node_replacement": lambda lang: _(
        "a dedicated option with nobody Responsible for replacing a failed node ({activity})",
        lang,
    ),
    "path_unanswered": lambda lang: _(
        "what the option supports is not stated: the standard path fit is unknown", lang
    ),
    "path_mismatch": lambda lang: _(
        "the option does not support what the work needs: {need}", lang
    ),
    "path_mismatch_managed": lambda lang: _(
        "the managed standard path does not cover {need}: this points to dedicated (R4)", lang
    ),
    "control_missing": lambda lang: _("no {control}: a control of R5 is missing", lang),
    "ssh_not_control": lambda lang: _(
        "SSH access is offered but {missing} of the R5 controls are missing: SSH is not control",
        lang,
    ),
    "protection_missing": lambda lang: _(
        "boundary {boundary} is {status} but the threat model requires it against {against}",
        lang,
    ),
    "protection_claimed": lambda lang: _(
        "boundary {boundary} (required against {against}) rests on a claim, not evidence", lang
    ),
    "weak_gpu_sharing": lambda lang: _(
        "GPU sharing by {mode} isolates neither memory nor faults between tenants", lang
    ),
    "residue_encrypted_only": lambda lang: _(
        "{item}: only encrypted; training decrypts it, so encryption does not close it (I4)",
        lang,
    ),
    "residue_open": lambda lang: _("{item} after the job: {handling}", lang),
    "one_mechanism_many_families": lambda lang: _(
        "one mechanism ({mechanism}) is claimed for {boundaries}: families {families} need "
        "their own controls (I5)",
        lang,
    ),
    "regulated_missing": lambda lang: _("regulated evidence missing: {item}", lang),
    "residency_violated": lambda lang: _(
        "{asset}: {roles} in {found}, but the requirement allows only {allowed} ({basis})", lang
    ),
    "sites_unknown": lambda lang: _(
        "the option declares no sites: where {asset} is stored and processed is unknown", lang
    ),
    "secret_found": lambda lang: _("{path}:{line}: {type} (value masked)", lang),
}


def render(fid: str, lang: str, params: dict[str, Any]) -> str:
    """The finding's sentence in `lang`; the id itself when it has no text."""
    text = _TEXTS.get(fid)
    if text is None:
        return fid
    try:
        return text(lang).format(**params)
    except (KeyError, ValueError, IndexError):
        # A translation with a broken placeholder must not hide the finding: fall back.
        return text("en").format(**params)
