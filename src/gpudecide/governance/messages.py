"""The words of every governance finding, in the reader's language (domain "governance").

A finding is stored with its id and parameters; `as_message` turns them into a message
(`gpudecide.message.Message`) that is said in the reader's language where it is shown and
that a decision rule can nest in its own text; `render` says it now. Each text is a literal
(`N_()`, `nmessage()`) so that Babel extracts it into the catalogues; a finding with a
count takes the plural form that fits it. Parameters that hold one of the schema's words (a
boundary status, a residue handling, a site role, a detector's name) are nested as messages
of their own, so that they are translated too; the team's own words (activity ids, asset
names, legal basis) stay as written.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable
from typing import Any

from gpudecide.i18n import N_, translator
from gpudecide.message import Message, english, message, nmessage
from gpudecide.message import render as render_stored

__all__ = [
    "ADVERSARY_NAMES",
    "CUSTODY_NAMES",
    "PLURAL_TEXTS",
    "TEXTS",
    "WORDS",
    "as_message",
    "english_text",
    "render",
    "term",
    "terms",
    "word",
    "words",
]

_ = translator("governance")
_Params = dict[str, Any]

TEXTS: dict[str, str] = {
    "no_accountable": N_("nobody is Accountable for {activity}: an incident has no owner"),
    "multiple_accountable": N_(
        "{activity} has more than one Accountable ({who}): nobody decides alone"
    ),
    "accountable_not_team": N_(
        "{activity}: the Accountable {who} is a vendor, not a person of the team"
    ),
    "vendor_only": N_("{activity} is done and owned by vendors only: no person of the team"),
    "r1_vendor": N_(
        "{activity} is given to the vendor {who}: experiment quality stays with the team (R1)"
    ),
    "no_on_call": N_("{activity} is an on-call duty but nobody of the team owning it is on call"),
    "no_on_call_duty": N_(
        "raci.yaml names no on-call duty for this option: nobody of the team answers when it breaks"
    ),
    "placeholder_party": N_(
        "{activity} names {who}, still the template's placeholder: name the real person or vendor"
    ),
    "role_uncovered": N_("{activity} needs a {role}; its Responsible ({who}) is not one"),
    "no_node_replacement": N_(
        "a dedicated option with nobody Responsible for replacing a failed node ({activity})"
    ),
    "path_unanswered": N_(
        "what the option supports is not stated: the standard path fit is unknown"
    ),
    "path_mismatch": N_("the option does not support what the work needs: {need}"),
    "path_mismatch_managed": N_(
        "the managed standard path does not cover {need}: this points to dedicated (R4)"
    ),
    "control_missing": N_("no {control}: a control of R5 is missing"),
    "protection_missing": N_(
        "boundary {boundary} is {status} but the threat model requires it against {against}"
    ),
    "protection_claimed": N_(
        "boundary {boundary} (required against {against}) rests on a claim, not evidence"
    ),
    "keys_provider_custody": N_(
        "the provider can use the keys that decrypt the data (keys.custody=provider): the keys "
        "boundary does not hold against {against}"
    ),
    "keys_shared_custody": N_(
        "the team's key is held in the provider's KMS (keys.custody=shared): against {against} "
        "it holds only as far as the KMS key policy and its audit log, the evidence to keep"
    ),
    "keys_custody_unknown": N_(
        "who can use the keys that decrypt the data is not stated (keys.custody; required "
        "against {against})"
    ),
    "weak_gpu_sharing": N_(
        "GPU sharing by {mode} isolates neither memory nor faults between tenants"
    ),
    "residue_encrypted_only": N_(
        "{item}: only encrypted; training decrypts it, so encryption does not close it (I4)"
    ),
    "residue_open": N_("{item} after the job: {handling}"),
    "one_mechanism_many_families": N_(
        "one mechanism ({mechanism}) is claimed for {boundaries}: families {families} need "
        "their own controls (I5)"
    ),
    "regulated_missing": N_("regulated evidence missing: {item}"),
    "residency_violated": N_(
        "{asset}: {roles} in {found}, but the requirement allows only {allowed} ({basis})"
    ),
    "sites_unknown": N_(
        "the option declares no sites: where {asset} is stored and processed is unknown"
    ),
    "secret_found": N_("{path}:{line}: {type} (value masked)"),
}


def _bus_factor(p: _Params) -> Message:
    # The finding keeps its parameter `count` (the evidence's shape); the message calls it
    # `duties`, since `count` names the field that picks the plural form.
    return nmessage(
        "governance",
        "{who} carries {duties} of {total} on-call duty (more than {limit:.0%})",
        "{who} carries {duties} of {total} on-call duties (more than {limit:.0%})",
        count="total",
        who=p["who"],
        duties=p["count"],
        total=p["total"],
        limit=p["limit"],
    )


def _ssh_not_control(p: _Params) -> Message:
    return nmessage(
        "governance",
        "SSH access is offered but {missing} of the R5 controls is missing: SSH is not control",
        "SSH access is offered but {missing} of the R5 controls are missing: SSH is not control",
        count="missing",
        missing=p["missing"],
    )


# Findings whose sentence counts something: the form follows the count (R2, R5).
PLURAL_TEXTS: dict[str, Callable[[_Params], Message]] = {
    "bus_factor": _bus_factor,
    "ssh_not_control": _ssh_not_control,
}

# The schema's words a finding's parameter or a report cell may hold, shown translated;
# any other value (the team's words, an id) is shown as written.
WORDS: frozenset[str] = frozenset(
    {
        # Boundary states (isolation.boundary_status), the chart's "open", a bare claim.
        N_("evidenced"),
        N_("claimed"),
        N_("weak"),
        N_("missing"),
        N_("unknown"),
        N_("open"),
        N_("claim"),
        N_("not checked"),
        # Residue handling (I4) and an item nobody answered.
        N_("kept"),
        N_("unanswered"),
        N_("cleared"),
        N_("deleted"),
        N_("not_kept"),
        N_("encrypted_only"),
        # Site roles (I7).
        N_("storage"),
        N_("processing"),
        N_("backup"),
        # detect-secrets' detector names (the `type` of a secrets finding).
        N_("AWS Access Key"),
        N_("Artifactory Credentials"),
        N_("Azure Storage Account access key"),
        N_("Base64 High Entropy String"),
        N_("Basic Auth Credentials"),
        N_("Cloudant Credentials"),
        N_("Discord Bot Token"),
        N_("GitHub Token"),
        N_("GitLab Token"),
        N_("Hex High Entropy String"),
        N_("IBM COS HMAC Credentials"),
        N_("IBM Cloud IAM Key"),
        N_("JSON Web Token"),
        N_("Mailchimp Access Key"),
        N_("NPM tokens"),
        N_("OpenAI Token"),
        N_("Private Key"),
        N_("Public IP (ipv4)"),
        N_("PyPI Token"),
        N_("Secret Keyword"),
        N_("SendGrid API Key"),
        N_("Slack Token"),
        N_("SoftLayer Credentials"),
        N_("Square OAuth Secret"),
        N_("Stripe Access Key"),
        N_("Telegram Bot Token"),
        N_("Twilio API Key"),
    }
)
_JOIN = N_("{first}, {rest}")

# The adversaries of the threat model (I2) in the article's words, for the report.
ADVERSARY_NAMES: dict[str, str] = {
    "another_team": N_("another team of the organisation"),
    "vendor_neighbour": N_("a neighbouring customer of the vendor"),
    "platform_admin": N_("the platform administrator"),
    "contractor": N_("a contractor"),
    "compromised_account": N_("a compromised account"),
    "external_attacker": N_("an external attacker"),
}
# Who can use the keys that decrypt the data (isolation.yaml `custody`), for the report.
CUSTODY_NAMES: dict[str, str] = {
    "team": N_("only the team (its own HSM or KMS)"),
    "provider": N_("the provider (keys it manages)"),
    "shared": N_("the team's key in the provider's KMS"),
    "unknown": N_("not stated"),
}


def word(value: str) -> Message | str:
    """A schema word as a message (translated where shown); anything else as it is."""
    return message("governance", value) if value in WORDS else value


def words(values: list[str]) -> Message | str:
    """Schema words joined by ", " as one message ("backup, processing, storage")."""
    if not values:
        return ""
    if len(values) == 1:
        return word(values[0])
    return message("governance", _JOIN, first=word(values[0]), rest=words(values[1:]))


def term(value: str) -> str:
    """A schema word in the reader's language now (a report cell); anything else as it is."""
    return _(value) if value in WORDS else value


def terms(values: Iterable[str]) -> str:
    """Schema words in the reader's language, joined by ", "."""
    return ", ".join(term(v) for v in values)


def _nested(key: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if key == "roles":
        return words([v.strip() for v in value.split(",")])
    if key in ("status", "handling", "type"):
        return word(value)
    return value


def as_message(fid: str, params: _Params) -> Message:
    """The finding as a message of the "governance" domain; the id itself when it has no
    text or its parameters do not fill the text (a record of another shape)."""
    plural = PLURAL_TEXTS.get(fid)
    if plural is not None:
        try:
            return plural(params)
        except KeyError:
            return message("governance", fid)
    text = TEXTS.get(fid)
    if text is None or not _fields(text) <= params.keys():
        return message("governance", fid)
    return message("governance", text, **{k: _nested(k, v) for k, v in params.items()})


def _fields(text: str) -> set[str]:
    return {name for _lit, name, _spec, _conv in string.Formatter().parse(text) if name}


def render(fid: str, params: _Params) -> str:
    """The finding's sentence in the reader's language; the id itself when it has no text."""
    try:
        msg = as_message(fid, params)
        return render_stored(msg)
    except (KeyError, ValueError, IndexError):
        # A translation with a broken placeholder must not hide the finding: the English.
        return english_text(fid, params)


def english_text(fid: str, params: _Params) -> str:
    """The finding's sentence in English: the `text` its record keeps beside the id."""
    return english(as_message(fid, params))
