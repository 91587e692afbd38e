"""The figures of an `export_test` record, typed (SPEC E1-E4, E5, A2, A4).

Both producers write this one shape: the full test (`scenario.run_export_test`) and the test
on someone else's export (`from_export.run_from_export`). Each key is declared in the order
the records hold it; a key only one producer writes (the full test's `run_id`, curves and
environments; the given export's `from_export` and `audit`) is left out of the JSON when the
producer did not write it, so `model_dump(mode="json")` is the record's figures exactly.

Readers in other packages take `figures_of(record)`. Keys an older or hand-made record
lacks take their defaults, so a reader never needs `.get()`; a stored sentence is a
`gpudecide.message.Message` held as its JSON dict (pydantic cannot read that TypedDict on
Python 3.11).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from gpudecide import evidence as ev
from gpudecide.marks.lifecycle import JobLifecycle

__all__ = [
    "AuditFigures",
    "ContourFigures",
    "CurvePoint",
    "EnvironmentBrief",
    "Environments",
    "ExportTestFigures",
    "JobFigures",
    "ManifestFigures",
    "MessageDict",
    "MetricRow",
    "ModelFigures",
    "RecordMessages",
    "RunStatus",
    "SampleFigures",
    "StepFigures",
    "StepStatus",
    "Throughput",
    "ToleranceFigures",
    "TransferFigures",
    "figures_of",
]

StepStatus = Literal["pass", "fail", "warn", "skip", "error"]
# The record's status: its verdict, or `error` when the tool or the harness could not finish
# the run (verdict `info`: no verdict on the option).
RunStatus = Literal["pass", "fail", "warn", "error"]
# A stored sentence (`gpudecide.message.Message`) as the JSON holds it.
MessageDict = dict[str, Any]


class _Shape(BaseModel):
    """A part of the figures: keys as written; the keys in `OPTIONAL_KEYS` appear in the
    JSON only when the producer set them (None when read from a record that lacks them)."""

    model_config = ConfigDict(extra="allow")
    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _absent_keys_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in self.OPTIONAL_KEYS - self.model_fields_set:
            data.pop(name, None)
        return data


class StepFigures(_Shape):
    """One E3 step: UTC start and end, status, the detail in English and as a message, and
    the step's own figures (its job, the transfer, the listing after deletion, ...)."""

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"detail_message", "figures"})

    name: str
    status: StepStatus
    started_at: str = ""
    finished_at: str = ""
    detail: str = ""
    detail_message: MessageDict | None = None
    figures: dict[str, Any] | None = None


class MetricRow(_Shape):
    """A final metric of the resumed run against the reference (no differences when either
    is missing)."""

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"abs_diff", "rel_diff"})

    metric: str
    reference: float | None = None
    resumed: float | None = None
    abs_diff: float | None = None
    rel_diff: float | None = None
    within: bool = False


class ToleranceFigures(_Shape):
    """The plan's tolerance (E4): relative, absolute or both."""

    relative: float | None = None
    absolute: float | None = None


class TransferFigures(_Shape):
    """Measured throughput of one transfer, as precise as its sample allows (E5, V1): a
    migration window only from a sample at or above the floor, else a note why not."""

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"run_bytes", "note_message"})

    sample_bytes: int
    seconds: float
    gbps: float
    significant_digits: int
    floor_bytes: int
    below_floor: bool
    range_gbps: list[float] | None = None
    migration_window_hours: float | None = None
    note: str = ""
    run_bytes: int | None = None
    note_message: MessageDict | None = None


class SampleFigures(_Shape):
    """The storage's throughput measured on a sample at least the floor's size, written and
    read back (`source`: "probe", a sample written beside the export, or "export", the
    export itself when it was that large), or not measured, with why and the `command` that
    would measure it (SPEC V1). `gbps` is the slower of the two ways: what moving a run out
    can count on."""

    measured: bool
    source: Literal["probe", "export"] | None = None
    storage: str = ""
    sample_bytes: int = 0
    floor_bytes: int
    write_seconds: float | None = None
    read_seconds: float | None = None
    write_gbps: float | None = None
    read_gbps: float | None = None
    gbps: float | None = None
    significant_digits: int = 0
    note: str = ""
    note_message: MessageDict | None = None
    command: str = ""


class Throughput(_Shape):
    """The export's and the restore's throughput (None: nothing measurable moved), and the
    storage's measured on a sample above the floor (`sample`)."""

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"sample"})

    export: TransferFigures | None = None
    restore: TransferFigures | None = None
    sample: SampleFigures | None = None


class ModelFigures(_Shape):
    """The trained model: size preset, parameters, steps, training throughput."""

    size: str
    parameters: int | None = None
    steps: int
    tokens_per_second: float | None = None


class JobFigures(_Shape):
    """One job the test ran (`executors.JobOutcome.as_dict`); `host` where it ran."""

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"host"})

    executor: str
    name: str
    job_id: str | None = None
    returncode: int
    state: str | None = None
    sacct: dict[str, str] = Field(default_factory=dict)
    seconds: float
    host: str | None = None


class ContourFigures(_Shape):
    """The contour the test exercised (SPEC E1, E3; the decision grades it against the
    option's declared `options[].contour`): where its jobs ran, where the checkpoints went
    (the URL without credentials), and whose artifacts were tested: `vendor_export` for an
    export given with `--from-export` (the vendor's own, as a team receives it),
    `produced_here` when the test trained and exported them itself."""

    executor: Literal["local", "slurm", "k8s"]
    cluster: str = ""  # Slurm's ClusterName
    context: str = ""  # the kubectl context, for k8s
    host: str = ""  # the host(s) the jobs ran on, comma-separated, in the order they ran
    storage: str = ""
    artifacts: Literal["vendor_export", "produced_here"]


class CurvePoint(_Shape):
    """One step of a loss curve (eval_loss at checkpoint steps and the last step only)."""

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = frozenset({"loss", "eval_loss"})

    step: int
    loss: float | None = None
    eval_loss: float | None = None


class EnvironmentBrief(_Shape):
    """Where a job ran (the execution layer of E2), in brief."""

    python: str | None = None
    torch: str | None = None
    cuda_runtime: str | None = None
    driver: str | None = None
    gpu_model: str | None = None
    device: str | None = None
    packages_sha256: str | None = None


class Environments(_Shape):
    """The training job's and the resume job's environment."""

    train: EnvironmentBrief = Field(default_factory=EnvironmentBrief)
    resume: EnvironmentBrief = Field(default_factory=EnvironmentBrief)


class AuditFigures(_Shape):
    """The export audit's findings on a given export (`gpudecide.artifacts.audit`)."""

    hazards: list[dict[str, Any]] = Field(default_factory=list)
    summary: str = ""


class ManifestFigures(_Shape):
    """The run manifest of the tested export (A5): where it is, its identifiers as written
    (None: not given) and how many files it lists; its lint findings are `manifest_lint`."""

    path: str
    run_id: str | None = None
    base_model: str | None = None
    dataset_snapshot: str | None = None
    code_commit: str | None = None
    container_digest: str | None = None
    precision: str | None = None
    method: str | None = None
    checkpoint_format: str | None = None
    optimizer_state_exported: bool | None = None
    created_at_utc: str | None = None
    retention_class: str | None = None
    files: int = 0


class RecordMessages(_Shape):
    """The record's summary and notes as messages (one per note, in order)."""

    summary: MessageDict | None = None
    notes: list[MessageDict] = Field(default_factory=list)


# Keys one producer writes and the other does not.
_FULL_TEST_ONLY = frozenset(
    {
        "run_id",
        "metric_comparison",
        "storage",
        "export_url",
        "device",
        "resume_device",
        "model",
        "reference_curve",
        "resumed_curve",
        "environments",
        "manifest_lint",
    }
)
_GIVEN_EXPORT_ONLY = frozenset({"from_export", "audit"})
# Keys both producers write that records made before them lack.
_NEWER = frozenset(
    {"status", "contour", "run_size_gb", "migration_window_hours", "manifest", "lifecycle"}
)


class ExportTestFigures(_Shape):
    """The figures of an `export_test` record (the `--json` body of `gpudecide export-test`)."""

    OPTIONAL_KEYS: ClassVar[frozenset[str]] = _FULL_TEST_ONLY | _GIVEN_EXPORT_ONLY | _NEWER

    option: str | None = None
    verdict: ev.Verdict
    status: RunStatus | None = None  # None: a record written before the status existed
    from_export: str | None = None  # the given export's folder
    run_id: str | None = None
    plan: str = ""
    plan_sha256: str = ""
    checkpoint_step: int | None = None
    resumed_at_step: int | None = None
    final_metrics: dict[str, float] | None = None
    reference_metrics: dict[str, float] | None = None
    metric_comparison: list[MetricRow] = Field(default_factory=list)
    tolerance: ToleranceFigures = Field(default_factory=ToleranceFigures)
    steps: list[StepFigures] = Field(default_factory=list)
    bytes_exported: int = 0
    export_gbps: float | None = None
    restore_gbps: float | None = None
    throughput: Throughput = Field(default_factory=Throughput)
    # One full run of the team (the plan's run_size_gb) and the hours to move it out at the
    # sample's rate (None: no size given, or the rate not measured).
    run_size_gb: float | None = None
    migration_window_hours: float | None = None
    manual_actions: list[str] = Field(default_factory=list)
    closed_formats: list[str] = Field(default_factory=list)
    restored_by_hand: list[str] = Field(default_factory=list)
    executor: str = ""
    contour: ContourFigures | None = None  # None: a record written before it was stated
    storage: str | None = None
    export_url: str | None = None
    device: str | None = None
    resume_device: str | None = None
    model: ModelFigures | None = None
    audit: AuditFigures | None = None
    jobs: list[JobFigures] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    reason_messages: list[MessageDict] = Field(default_factory=list)
    reference_curve: list[CurvePoint] = Field(default_factory=list)
    resumed_curve: list[CurvePoint] = Field(default_factory=list)
    environments: Environments | None = None
    manifest_lint: list[dict[str, Any]] = Field(default_factory=list)
    manifest: ManifestFigures | None = None
    lifecycle: list[JobLifecycle] = Field(default_factory=list)
    summary: str = ""
    messages: RecordMessages = Field(default_factory=RecordMessages)

    def stored_reasons(self) -> list[MessageDict] | None:
        """The reasons as messages, one per reason (None: a record that lacks them)."""
        if self.reason_messages and len(self.reason_messages) == len(self.reasons):
            return self.reason_messages
        return None


def figures_of(record: ev.Evidence) -> ExportTestFigures:
    """The typed figures of an `export_test` record (LookupError for another kind; a
    pydantic ValidationError for figures of another shape)."""
    if record.kind != "export_test":
        raise LookupError(f"{record.kind!r} is not an export_test record")
    return ExportTestFigures.model_validate(record.figures)
