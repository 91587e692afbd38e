"""The words of every governance finding, in the reader's language (domain "governance").

A finding is stored with its id and parameters; `render` words it, `as_message` turns it into
a message (`gpudecide.report.i18n.message`) that a decision rule can nest in its own text.
Each text is a literal `N_()` so that Babel extracts it into the catalogues. Parameters that
hold one of the schema's words (a boundary status, a residue handling, a site role, a
detector's name) are nested as messages of their own, so that they are translated too; the
team's own words (activity ids, asset names, legal basis) stay as written.
"""

from __future__ import annotations

from typing import Any

from gpudecide.i18n import translator
from gpudecide.report.i18n import message, render_message

_ = translator("governance")
Message = dict[str, Any]


def N_(msgid: str) -> str:
    """Mark an English msgid for extraction; it is translated where it is shown."""
    return msgid


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
    "role_uncovered": N_("{activity} needs a {role}; its Responsible ({who}) is not one"),
    "bus_factor": N_("{who} carries {count} of {total} on-call duties (more than {limit:.0%})"),
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
    "ssh_not_control": N_(
        "SSH access is offered but {missing} of the R5 controls are missing: SSH is not control"
    ),
    "protection_missing": N_(
        "boundary {boundary} is {status} but the threat model requires it against {against}"
    ),
    "protection_claimed": N_(
        "boundary {boundary} (required against {against}) rests on a claim, not evidence"
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

# The schema's words a finding's parameter may hold, shown as they are in English.
WORDS: dict[str, str] = {
    # Boundary states (isolation.boundary_status) and the chart's "open".
    "evidenced": N_("evidenced"),
    "claimed": N_("claimed"),
    "weak": N_("weak"),
    "missing": N_("missing"),
    "unknown": N_("unknown"),
    "open": N_("open"),
    "claim": N_("claim"),
    # Residue handling (I4) and an item nobody answered.
    "kept": N_("kept"),
    "unanswered": N_("unanswered"),
    "cleared": N_("cleared"),
    "deleted": N_("deleted"),
    "not_kept": N_("not_kept"),
    "encrypted_only": N_("encrypted_only"),
    # Site roles (I7).
    "storage": N_("storage"),
    "processing": N_("processing"),
    "backup": N_("backup"),
}

# detect-secrets' detector names (the `type` of a secrets finding).
DETECTORS: frozenset[str] = frozenset(
    {
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


def word(value: str) -> Message | str:
    """A schema word as a message (translated where shown); anything else as it is."""
    if value in WORDS:
        return message("governance", WORDS[value])
    if value in DETECTORS:
        return message("governance", value)
    return value


def words(values: list[str]) -> Message | str:
    """Schema words joined by ", " as one message ("backup, processing, storage")."""
    if not values:
        return ""
    if len(values) == 1:
        return word(values[0])
    return message("governance", _JOIN, first=word(values[0]), rest=words(values[1:]))


def _nested(key: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if key == "roles":
        return words([v.strip() for v in value.split(",")])
    if key in ("status", "handling", "type"):
        return word(value)
    return value


def as_message(fid: str, params: dict[str, Any]) -> Message:
    """The finding as a message of the "governance" domain (the id itself when it has no text)."""
    text = TEXTS.get(fid)
    if text is None:
        return message("governance", fid)
    return message("governance", text, **{k: _nested(k, v) for k, v in params.items()})


def render(fid: str, lang: str, params: dict[str, Any]) -> str:
    """The finding's sentence in `lang`; the id itself when it has no text."""
    msg = as_message(fid, params)
    try:
        return render_message(msg, lang)
    except (KeyError, ValueError, IndexError):
        # A translation with a broken placeholder must not hide the finding: fall back.
        return render_message(msg, "en")
