"""The workspace's retention policy, `retention.yaml` (SPEC A1, A3, A8).

A1: every artifact class has a lifetime. A3: the retention class decides location,
encryption, backups and how often a restore is tested. A8: after a job or endpoint is
deleted, who keeps what, who decides, whether a legal hold is possible, how copies are
deleted, who sees the keys. The audit answers the A8 questions from this file or lists them
as open; `manifest lint` checks that a manifest's retention class is defined here.

Who sees the keys is answered twice: in words (`questions.key_access`: who, and where it
is written down) and as one of four values (`questions.key_custody`: team, provider, shared,
unknown), which the decision compares with the isolation answers of every option (a policy
that says only the team sees the keys while an option's provider holds them is a
contradiction, SPEC A8, I1).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field

from gpudecide.errors import InputError
from gpudecide.i18n import N_
from gpudecide.inputs import load_yaml_model, node_line, yaml_root

__all__ = [
    "A8_QUESTIONS",
    "ARTIFACT_CLASSES",
    "FILE_NAME",
    "KEY_CUSTODY",
    "ArtifactClass",
    "KeyCustody",
    "LoadedPolicy",
    "RetentionClass",
    "RetentionPolicy",
    "RetentionQuestions",
    "find",
    "load",
]

FILE_NAME = "retention.yaml"

ArtifactClass = Literal[
    "base_weights",
    "adapters",
    "full_checkpoints",
    "optimizer_state",
    "tokenizer",
    "training_config",
    "environment_snapshot",
    "metrics",
    "final_weights",
]
ARTIFACT_CLASSES: tuple[str, ...] = ArtifactClass.__args__  # type: ignore[attr-defined]

# Who holds the encryption keys of the artifacts: only the team (its HSM or KMS, the
# provider never sees them), the provider (its managed keys, or the team's key in the
# provider's KMS), both (shared), or not known yet.
KeyCustody = Literal["team", "provider", "shared", "unknown"]
KEY_CUSTODY: tuple[str, ...] = get_args(KeyCustody)

# A8, in the article's order; the keys are the fields of `questions` in retention.yaml, the
# questions msgids (the audit shows them in the reader's language).
A8_QUESTIONS: dict[str, str] = {
    "checkpoints_kept_after_deletion": N_(
        "After the job or endpoint is deleted, are checkpoints kept separately, and where?"
    ),
    "retention_owner": N_("Who sets retention?"),
    "legal_hold": N_("Is a legal hold possible, and who places it?"),
    "copy_deletion": N_(
        "How are copies (replicas, backups, caches) deleted, and how is it confirmed?"
    ),
    "key_access": N_("Who sees the encryption keys?"),
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RetentionClass(_Strict):
    """One retention class (A3)."""

    description: str = Field(default="", description="What this class is for.")
    lifetime_days: int = Field(ge=1, description="Days an artifact of this class is kept.")
    location: str = Field(min_length=1, description="Where it is stored (site, bucket, region).")
    encryption: str = Field(min_length=1, description="How it is encrypted, and whose key.")
    backup: str = Field(min_length=1, description="Backup copies: where, how often.")
    restore_test_interval_days: int = Field(
        ge=1, description="Days between two restore tests (A4: saved = restored and loaded)."
    )


class RetentionQuestions(_Strict):
    """The A8 questions; null leaves a question open (it is listed as open by the audit)."""

    checkpoints_kept_after_deletion: str | None = None
    retention_owner: str | None = None
    legal_hold: str | None = None
    copy_deletion: str | None = None
    key_access: str | None = None
    key_custody: KeyCustody | None = Field(
        default=None,
        description="Who holds the keys: team | provider | shared | unknown (null: not said).",
    )


class RetentionPolicy(_Strict):
    """Schema of retention.yaml."""

    version: Literal[1] = Field(default=1, description="Schema version of this file.")
    classes: dict[str, RetentionClass] = Field(
        default_factory=dict, description="Retention classes by name (A3)."
    )
    artifact_classes: dict[ArtifactClass, str] = Field(
        default_factory=dict, description="Artifact class (A1) -> retention class name."
    )
    questions: RetentionQuestions = Field(
        default_factory=RetentionQuestions, description="The A8 questions."
    )


@dataclass
class LoadedPolicy:
    """A validated policy, where it came from, and the line of every answer: `lines` by
    A8 question (and `key_custody`), `class_lines` by retention class, `mapping_lines` by
    artifact class."""

    path: Path
    policy: RetentionPolicy
    lines: dict[str, int | None]
    class_lines: dict[str, int | None] = field(default_factory=dict)
    mapping_lines: dict[str, int | None] = field(default_factory=dict)

    def at(self, line: int | None, shown: str | None = None) -> str:
        """`retention.yaml:12` (the file as `shown`, else its path; no line: the file)."""
        name = shown if shown is not None else str(self.path)
        return f"{name}:{line}" if line is not None else name

    def answers(self, shown: str | None = None) -> list[dict[str, object]]:
        """Each A8 question with its answer and source line, or marked open; `asked_at`
        is where the question stands in the file, answered or not."""
        out: list[dict[str, object]] = []
        for key, question in A8_QUESTIONS.items():
            answer = getattr(self.policy.questions, key)
            answered = isinstance(answer, str) and answer.strip() != ""
            where = self.at(self.lines.get(key), shown)
            out.append(
                {
                    "id": key,
                    "question": question,
                    "status": "answered" if answered else "open",
                    "answer": answer if answered else None,
                    "source": where if answered else None,
                    "asked_at": where,
                }
            )
        return out


def _undefined_class(
    path: Path, line: int | None, field: str, cls: str, policy: RetentionPolicy
) -> InputError:
    """An artifact class mapped to a retention class that `classes` does not define."""
    if policy.classes:
        return InputError(
            "retention class {cls!r} is not defined under `classes`",
            path=path,
            line=line,
            field=field,
            hint="define it, or use one of: {defined}",
            cls=cls,
            defined=", ".join(sorted(policy.classes)),
        )
    return InputError(
        "retention class {cls!r} is not defined under `classes`",
        path=path,
        line=line,
        field=field,
        hint="define it under `classes`: none is defined yet",
        cls=cls,
    )


def _key_lines(root: yaml.Node | None, section: str) -> dict[str, int]:
    """The line of every key of the mapping `section` (a class's name, not its first field)."""
    if not isinstance(root, yaml.MappingNode):
        return {}
    node = next((v for k, v in root.value if getattr(k, "value", None) == section), None)
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(k.value): k.start_mark.line + 1 for k, _v in node.value}


def load(path: Path) -> LoadedPolicy:
    """Read and validate retention.yaml; bad input is one InputError naming file:line:field."""
    policy = load_yaml_model(path, RetentionPolicy)
    root = yaml_root(path)
    for artifact, cls in policy.artifact_classes.items():
        if cls not in policy.classes:
            line = node_line(root, ("artifact_classes", artifact))
            raise _undefined_class(path, line, f"artifact_classes.{artifact}", cls, policy)
    lines = {key: node_line(root, ("questions", key)) for key in (*A8_QUESTIONS, "key_custody")}
    defined_at = _key_lines(root, "classes")
    class_lines = {name: defined_at.get(name) for name in policy.classes}
    mapping_lines: dict[str, int | None] = {
        str(a): node_line(root, ("artifact_classes", a)) for a in policy.artifact_classes
    }
    return LoadedPolicy(path, policy, lines, class_lines, mapping_lines)


def find(explicit: Path | None, workspace_root: Path | None) -> Path | None:
    """The policy file to use: the one given, else the workspace's, else none."""
    if explicit is not None:
        if not os.path.lexists(explicit):
            raise InputError("no such file", path=explicit, field="--retention")
        return explicit
    if workspace_root is not None and (workspace_root / FILE_NAME).is_file():
        return workspace_root / FILE_NAME
    return None
