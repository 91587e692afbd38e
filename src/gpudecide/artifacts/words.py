"""The words of the artifact commands and the audit section, declared once (domain "artifacts").

The schema's ids (an E2 layer, an item, a status, a hazard, a lint rule's word) are shown to
people through the tables below: each maps an id to its English msgid, translated where it is
shown (`word`). Sentences that are stored (a hazard's detail, a skipped file's reason, a lint
finding) are `gpudecide.message.Message`s made where the fact is known; `as_written` wraps
text that has no message of its own (a scanner's diagnostics, an OS error, a team's value),
shown as written in every language.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpudecide.i18n import N_, translator
from gpudecide.message import Message, message

__all__ = [
    "ARTIFACT_CLASS_NAMES",
    "BASES",
    "CUSTODIES",
    "DOMAIN",
    "HAZARDS",
    "ITEMS",
    "LAYERS",
    "RULE_WORDS",
    "SEVERITIES",
    "STATUSES",
    "as_written",
    "joined",
    "rule_label",
    "word",
]

DOMAIN = "artifacts"
_ = translator(DOMAIN)

# The four layers of an export (E2) and their items, as a person reads them.
LAYERS = {
    "data": N_("data"),
    "training": N_("training"),
    "execution": N_("execution"),
    "provenance": N_("provenance"),
}
ITEMS = {
    "final_weights": N_("final weights"),
    "intermediate_checkpoints": N_("intermediate checkpoints"),
    "optimizer_state": N_("optimizer state"),
    "scheduler": N_("scheduler"),
    "random_seeds": N_("random seeds"),
    "exact_config": N_("exact config"),
    "step_epoch": N_("step and epoch"),
    "grad_scaler": N_("gradient scaler"),
    "container_digest": N_("container digest"),
    "driver_version": N_("driver version"),
    "library_versions": N_("library versions"),
    "base_model_id": N_("base model id"),
    "base_model_revision": N_("base model revision"),
    "dataset_snapshot": N_("dataset snapshot"),
    "code_commit": N_("code commit"),
    "evaluation_metrics": N_("evaluation metrics"),
}
STATUSES = {
    "found": N_("found"),
    "missing": N_("missing"),
    "not_applicable": N_("not applicable"),
    "open": N_("open"),
    "answered": N_("answered"),
}
# What each hazard means (E5): shown next to the audit's detail, and by the decision rules.
HAZARDS = {
    "adapter_base_revision_missing": N_("the adapter does not pin its base model revision"),
    "weights_without_optimizer_state": N_("weights without the state to continue training"),
    "unknown_format": N_("a file in a format no open tool reads"),
    "dangerous_pickle": N_("a pickle that runs code when loaded"),
    "untrusted_pickle_import": N_("a pickle that imports code outside the allow list"),
    "pickle_frame_mismatch": N_("a pickle whose frames do not add up"),
    "pickle_not_scanned_too_large": N_("a pickle too large to scan"),
    "archive_not_scanned": N_("an archive that could not be scanned"),
    "corrupt_file": N_("a damaged file"),
    "egress_throttled": N_("egress too slow for the migration window"),
    "declared_artifact_missing": N_("a declared artifact is missing"),
}
# The artifact classes of A1 (retention.yaml's `artifact_classes` keys), as a person reads them.
ARTIFACT_CLASS_NAMES = {
    "base_weights": N_("base model weights"),
    "adapters": N_("adapters"),
    "full_checkpoints": N_("full checkpoints"),
    "optimizer_state": N_("optimizer state"),
    "tokenizer": N_("tokenizer"),
    "training_config": N_("training configuration"),
    "environment_snapshot": N_("environment snapshot"),
    "metrics": N_("metrics"),
    "final_weights": N_("final weights"),
}
# Who holds the encryption keys (retention.yaml's `questions.key_custody`).
CUSTODIES = {
    "team": N_("only the team"),
    "provider": N_("the provider"),
    "shared": N_("the team and the provider"),
    "unknown": N_("not known"),
}
# The words of the lint rules ("A6 commit") and severities, as a person reads them.
RULE_WORDS = {
    "required": N_("required"),
    "files": N_("files"),
    "optimizer": N_("optimizer"),
    "vocabulary": N_("vocabulary"),
    "commit": N_("commit"),
    "digest": N_("digest"),
    "mutable": N_("mutable"),
    "time": N_("time"),
    "version": N_("version"),
    "retention": N_("retention"),
    "execution": N_("execution"),
    "provenance": N_("provenance"),
}
SEVERITIES = {"error": N_("error"), "warning": N_("warning")}
# What the migration window was extrapolated from (the egress figures' `extrapolated_from`);
# the plan's field name is an identifier and stays as it is.
BASES = {"export size (no run_size_gb in the plan)": N_("export size (no run_size_gb in the plan)")}

# A message that is its one field: text without a message of its own. The template is passed
# as a variable, which keeps it out of the catalogues (a msgid of a field alone would be a
# sentence that fits every text).
_AS_WRITTEN = "{text}"
_JOINED = "{parts}"


def word(table: Mapping[str, str], key: str) -> str:
    """The name of a known id in the reader's language; an unknown id as it is."""
    return _(table[key]) if key in table else key


def rule_label(rule: str) -> str:
    """A lint rule ("A6 commit") in the reader's language: the SPEC id kept, the word said."""
    spec, _sep, rule_word = rule.partition(" ")
    return f"{spec} {word(RULE_WORDS, rule_word)}" if rule_word else rule


def as_written(text: str) -> Message:
    """Text with no message of its own, shown as written in every language."""
    return message(DOMAIN, _AS_WRITTEN, text=text)


def joined(parts: Sequence[Message]) -> Message:
    """Several messages read as one, separated by "; " (as the English details are)."""
    if len(parts) == 1:
        return parts[0]
    return message(DOMAIN, _JOINED, parts=list(parts))
