"""The figures of an "audit" evidence record as a typed model (`AuditFigures`), for readers
in any package (SPEC E2, E5, A2, A7, A8).

    figures_of(record)                       AuditFigures
    figures_of(record).hazards[0].id         "unknown_format"
    figures_of(record).layers["training"]    the E2 items of one layer
    figures_of(record).contour                what it audited: {executor, storage, artifacts}
    figures_of(record).retention.key_custody  who holds the keys, as retention.yaml says

`gpudecide.artifacts.audit` builds the figures and validates them against these models; the
record keeps `AuditFigures.model_dump(mode="json")`, key for key. Every text a person reads
is there in English and as a message (`message`, `messages`), said in the reader's language
with `gpudecide.message.render`; what a file holds (`formats[path].details`) is what its
header or its pickle's opcodes say, as the detector read it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpudecide import evidence as ev
from gpudecide.figure_model import StoredMessage

__all__ = [
    "ArtifactClassRow",
    "AuditContour",
    "AuditFigures",
    "Egress",
    "EgressWindow",
    "FileFormat",
    "FolderFormat",
    "Hazard",
    "Item",
    "KeyCustody",
    "Number",
    "Question",
    "RecordMessages",
    "ResumePoint",
    "RetentionClassFigures",
    "RetentionClassUse",
    "RetentionFigures",
    "RetentionOpen",
    "Skip",
    "Transfer",
    "UnitFigures",
    "figures_of",
]


# A count or a measure as the audit wrote it: an int stays an int in the file, a float a float.
Number = int | float


def _absent(value: object) -> bool:
    return value is None


class _Figures(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Skip(_Figures):
    """A path that was not hashed, and why (in English)."""

    path: str
    reason: str


class FileFormat(_Figures):
    """What one file is: its format, roles, header details and findings (English)."""

    kind: Literal["file"]
    format: str
    roles: list[str]
    size: int
    details: dict[str, Any]
    findings: list[str]


class FolderFormat(_Figures):
    """A folder recognised as a checkpoint layout (Trainer, PEFT, DCP, DeepSpeed)."""

    kind: Literal["folder"]
    format: str


class UnitFigures(_Figures):
    """One checkpoint or weights set and whether training can continue from it (A2)."""

    path: str
    kind: str
    resumable: bool
    weights: str | None
    optimizer_state: str | None
    scheduler: str | None
    rng_state: str | None
    grad_scaler: str | None
    step: int | None
    epoch: Number | None
    step_stored: bool
    step_source: str | None
    notes: list[str]


class ResumePoint(_Figures):
    """The unit training resumes from."""

    path: str
    step: int | None
    epoch: Number | None


class Item(_Figures):
    """One E2 item: found (with the file that proves it), missing or not applicable."""

    name: str
    status: Literal["found", "missing", "not_applicable"]
    path: str | None
    detail: str
    message: StoredMessage | None


class Hazard(_Figures):
    """A lock-in hazard (E5, A7): a stop factor, its file and what is wrong."""

    id: str
    path: str | None
    detail: str
    stop_factor: bool
    spec: str
    message: StoredMessage


class Transfer(_Figures):
    """One file copied from the source, and how long it took."""

    path: str
    bytes: int
    seconds: Number


class EgressWindow(_Figures):
    """The measured egress and the window a migration of the whole run needs (E5, V1)."""

    throughput_mb_s: Number | None
    bytes: int
    run_bytes: int
    extrapolated_from: str
    migration_window_hours: Number | None


class Egress(EgressWindow):
    """The copy from `--source` that measured the egress."""

    source: str
    files: int
    seconds: Number
    list_seconds: Number
    streams: int
    max_migration_hours: Number | None
    per_file: list[Transfer]
    note: str


class Question(_Figures):
    """An A8 question, answered from retention.yaml (with its line) or open; `asked_at`:
    where the question stands in retention.yaml, answered or not (none without a policy;
    absent in records written before it was kept)."""

    id: str
    question: str
    status: Literal["open", "answered"]
    answer: str | None
    source: str | None
    asked_at: str | None = Field(default=None, exclude_if=_absent)


class RetentionClassUse(_Figures):
    """The retention class an artifact class present in the export falls under (A1, A3)."""

    retention_class: str
    lifetime_days: int
    restore_test_interval_days: int


class RetentionClassFigures(_Figures):
    """A retention class as retention.yaml defines it (A3): lifetime, location, encryption,
    backup, restore-test interval, and the line it is defined at."""

    description: str
    lifetime_days: int
    location: str
    encryption: str
    backup: str
    restore_test_interval_days: int
    source: str


class ArtifactClassRow(_Figures):
    """One artifact class of A1: whether the export holds it, the retention class it falls
    under (none: no retention decided) and the line that says so."""

    artifact_class: str
    present: bool
    retention_class: str | None
    source: str | None


# Who holds the encryption keys, as retention.yaml's `questions.key_custody` says.
KeyCustody = Literal["team", "provider", "shared", "unknown"]


class RetentionOpen(_Figures):
    """No retention.yaml: every A8 question is open, no artifact class has a retention.

    The fields from `key_custody` on are absent in records written before they were kept."""

    policy: None
    questions: list[Question]
    artifact_classes_present: list[str]
    uncovered: list[str]
    manifest_class: str | None
    manifest_class_defined: bool | None
    notes: list[str]
    key_custody: None = None
    key_custody_source: None = None
    artifact_classes: list[ArtifactClassRow] | None = Field(default=None, exclude_if=_absent)
    retention_classes: dict[str, RetentionClassFigures] | None = Field(
        default=None, exclude_if=_absent
    )


class RetentionFigures(_Figures):
    """The A8 answers and the retention classes of what the export holds, from the policy;
    `key_custody`: who holds the keys (A8), with the line it is said at; `artifact_classes`:
    every A1 class, `retention_classes`: every class the policy defines (A3).

    The fields from `key_custody` on are absent in records written before they were kept."""

    policy: str
    questions: list[Question]
    artifact_classes_present: list[str]
    classes: dict[str, RetentionClassUse]
    uncovered: list[str]
    manifest_class: str | None
    manifest_class_source: str | None
    manifest_class_defined: bool | None
    notes: list[str]
    key_custody: KeyCustody | None = None
    key_custody_source: str | None = None
    artifact_classes: list[ArtifactClassRow] | None = Field(default=None, exclude_if=_absent)
    retention_classes: dict[str, RetentionClassFigures] | None = Field(
        default=None, exclude_if=_absent
    )


class AuditContour(_Figures):
    """What the audit read (SPEC E5; the decision's contour of a record): no executor (an
    audit runs nothing), the storage it read the export from (the `--source` URL without
    credentials, else the folder), and whose artifacts they are: `vendor_export` when the
    export came from the vendor of the option it names (a managed option, or one whose
    contour is the vendor's), else `produced_here`."""

    executor: None
    storage: str
    artifacts: Literal["vendor_export", "produced_here"]


class RecordMessages(_Figures):
    """`figures["messages"]`: the record's summary and its notes (one per note) as messages."""

    summary: StoredMessage
    notes: list[StoredMessage]


class AuditFigures(_Figures):
    """The figures of an "audit" evidence record."""

    export: str
    source: str | None
    file_count: int
    total_bytes: int
    skipped: list[Skip]
    formats: dict[str, Annotated[FileFormat | FolderFormat, Field(discriminator="kind")]]
    units: list[UnitFigures]
    resumable: bool
    resumable_from: ResumePoint | None
    layers: dict[str, list[Item]]
    missing: list[str]
    hazards: list[Hazard]
    stop_factor: bool
    egress: Egress | None
    retention: RetentionFigures | RetentionOpen
    plan: str | None
    verdict: ev.Verdict
    summary: str
    notes: list[str]
    messages: RecordMessages
    option: str | None = Field(default=None, exclude_if=_absent)
    contour: AuditContour | None = Field(default=None, exclude_if=_absent)


def figures_of(record: ev.Evidence) -> AuditFigures:
    """An "audit" record's figures as their model.

    A record of another kind is a LookupError; figures of another shape (an edited or older
    record) are pydantic's ValidationError (a ValueError), naming the field.
    """
    if record.kind != "audit":
        raise LookupError(f"{record.kind!r} is not an audit record")
    return AuditFigures.model_validate(record.figures)
