"""The run manifest next to the weights: create, lint, verify, export (SPEC A5, A6, E2).

A manifest carries the A5 fields of the article's example (run_id, base_model with an
immutable digest, dataset_snapshot, code_commit, container_digest, precision, method,
checkpoint_format, optimizer_state_exported, created_at_utc, retention_class), the four
layers of E2 (data, training, execution with driver and library versions, provenance) and
every file with its size and SHA-256.

* `create` hashes a folder, detects what is in it and takes the rest from a `run.yaml`.
* `lint` (A6) refuses identifiers that prove nothing: `latest` or a tag instead of a digest,
  a dataset path without a version, a short or non-hex commit, a time that is not UTC ISO
  8601, optimizer state claimed but absent, a retention class the policy does not define.
* `verify`: every hash matches, nothing is missing, nothing is extra.
* `provenance`: the same facts as an in-toto Statement v1 with a SLSA provenance v1
  predicate (self-declared: unsigned, so it is evidence of what the team wrote down, not
  of what a build platform attests).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpudecide.artifacts import formats, hashing, places
from gpudecide.artifacts.retention import LoadedPolicy
from gpudecide.artifacts.words import as_written
from gpudecide.errors import InputError
from gpudecide.fsutil import ProgressFn
from gpudecide.inputs import load_yaml_model, node_line, yaml_root
from gpudecide.jsonio import utc_iso
from gpudecide.message import Message, english, message

__all__ = [
    "A5_FIELDS",
    "BUILD_TYPE",
    "DEFAULT_NAME",
    "KNOWN_FORMATS",
    "KNOWN_METHODS",
    "KNOWN_PRECISIONS",
    "MANIFEST_MAX_BYTES",
    "RUN_INFO_MAX_BYTES",
    "SCHEMA",
    "SELF_DECLARED_BUILDER",
    "SLSA_PREDICATE",
    "DataLayer",
    "Environment",
    "ExecutionInfo",
    "ExecutionLayer",
    "LintFinding",
    "ManifestFile",
    "ProvenanceInfo",
    "ProvenanceLayer",
    "RunInfo",
    "RunManifest",
    "TrainingInfo",
    "TrainingLayer",
    "build_environment",
    "create",
    "derive_format",
    "derive_precision",
    "lint",
    "lint_file",
    "load_manifest",
    "load_run_info",
    "provenance_statement",
    "verify",
]

SCHEMA: Literal["gpudecide/run-manifest/v1"] = "gpudecide/run-manifest/v1"
DEFAULT_NAME = "run-manifest.json"
SLSA_PREDICATE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "urn:gpudecide:buildtype:fine-tune-run:v1"
SELF_DECLARED_BUILDER = "urn:gpudecide:builder:self-declared"

A5_FIELDS = (
    "run_id",
    "base_model",
    "dataset_snapshot",
    "code_commit",
    "container_digest",
    "precision",
    "method",
    "checkpoint_format",
    "optimizer_state_exported",
    "created_at_utc",
    "retention_class",
)


def _text(value: Any) -> Any:
    """YAML turns unquoted times into datetimes; keep them as the ISO text they were."""
    if isinstance(value, datetime):
        if value.tzinfo is not None and value.utcoffset() == UTC.utcoffset(None):
            return value.replace(tzinfo=None).isoformat() + "Z"
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class _A5(_Strict):
    """The A5 fields, as a run.yaml or a manifest states them (checked by lint, not here)."""

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

    @field_validator("code_commit", mode="before")
    @classmethod
    def _commit_text(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            raise ValueError(
                "YAML read this commit as a number (digits only, maybe octal): quote it"
            )
        return value

    @field_validator(
        "run_id",
        "base_model",
        "dataset_snapshot",
        "container_digest",
        "precision",
        "method",
        "checkpoint_format",
        "created_at_utc",
        "retention_class",
        mode="before",
    )
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        return _text(value)


class ExecutionInfo(_Strict):
    """E2 execution layer beyond the container digest."""

    driver_version: str | None = None
    cuda_version: str | None = None
    python_version: str | None = None
    libraries: dict[str, str] = Field(default_factory=dict)
    gpu: str | None = None

    @field_validator("driver_version", "cuda_version", "python_version", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        return _text(value)

    @field_validator("libraries", mode="before")
    @classmethod
    def _versions_text(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): _text(v) for k, v in value.items()}
        return value


class TrainingInfo(_Strict):
    """E2 training layer facts a folder cannot tell."""

    seed: int | None = None
    hyperparameters: dict[str, Any] = Field(default_factory=dict)


class ProvenanceInfo(_Strict):
    """E2 provenance facts a folder cannot tell."""

    evaluation_metrics: dict[str, float | int | str] = Field(default_factory=dict)
    builder_id: str | None = None


class RunInfo(_A5):
    """Schema of run.yaml, the input of `manifest create --from`."""

    execution: ExecutionInfo = Field(default_factory=ExecutionInfo)
    training: TrainingInfo = Field(default_factory=TrainingInfo)
    provenance: ProvenanceInfo = Field(default_factory=ProvenanceInfo)


class ManifestFile(_Strict):
    """One file of the run with its size and SHA-256."""

    path: str
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class DataLayer(_Strict):
    """E2 data: final weights, intermediate checkpoints."""

    final_weights: list[str] = Field(default_factory=list)
    intermediate_checkpoints: list[str] = Field(default_factory=list)


class TrainingLayer(_Strict):
    """E2 training: optimizer state, scheduler, random seeds, exact config."""

    optimizer_state: list[str] = Field(default_factory=list)
    scheduler: list[str] = Field(default_factory=list)
    rng_state: list[str] = Field(default_factory=list)
    seed: int | None = None
    config: list[str] = Field(default_factory=list)
    hyperparameters: dict[str, Any] = Field(default_factory=dict)
    step: int | None = None
    epoch: float | None = None


class ExecutionLayer(ExecutionInfo):
    """E2 execution: driver and library versions (the container digest is an A5 field)."""


class ProvenanceLayer(_Strict):
    """E2 provenance beyond the A5 fields: evaluation metrics and who built it."""

    evaluation_metrics: dict[str, float | int | str] = Field(default_factory=dict)
    evaluation_metrics_files: list[str] = Field(default_factory=list)
    builder_id: str | None = None


class Environment(_Strict):
    """The four layers of SPEC E2."""

    data: DataLayer = Field(default_factory=DataLayer)
    training: TrainingLayer = Field(default_factory=TrainingLayer)
    execution: ExecutionLayer = Field(default_factory=ExecutionLayer)
    provenance: ProvenanceLayer = Field(default_factory=ProvenanceLayer)


class RunManifest(_A5):
    """Schema of the run manifest file."""

    schema_: Literal["gpudecide/run-manifest/v1"] = Field(default=SCHEMA, alias="schema")
    environment: Environment = Field(default_factory=Environment)
    files: list[ManifestFile] = Field(default_factory=list)
    skipped: list[dict[str, str]] = Field(default_factory=list)

    def to_json(self) -> str:
        """The file's text: A5 fields first, as in the article's example."""
        body = self.model_dump(by_alias=True)
        return json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# run.yaml is copied into the manifest (hyperparameters, metrics): a bound on the file is a
# bound on what an untrusted file can add to it. A manifest lists every file of a run.
RUN_INFO_MAX_BYTES = 1 << 20
MANIFEST_MAX_BYTES = 64 << 20


def load_run_info(path: Path) -> RunInfo:
    """Read run.yaml (file:line:field errors; at most RUN_INFO_MAX_BYTES)."""
    return load_yaml_model(path, RunInfo, RUN_INFO_MAX_BYTES)


def load_manifest(path: Path) -> RunManifest:
    """Read a manifest (JSON or YAML); structure errors are InputErrors, exit 2."""
    return load_yaml_model(path, RunManifest, MANIFEST_MAX_BYTES)


# ---- create -----------------------------------------------------------------------------


def _latest_unit(det: formats.Detection) -> formats.Unit | None:
    units = [u for u in det.units if u.kind != "weights"]
    if not units:
        return None
    return max(units, key=lambda u: (u.resumable, u.step if u.step is not None else -1, u.path))


def derive_format(det: formats.Detection) -> str | None:
    """checkpoint_format from what was detected."""
    kinds = {u.kind for u in det.units}
    for kind, name in (
        ("torch_dcp", "torch_dcp"),
        ("deepspeed", "deepspeed"),
        ("lightning_ckpt", "lightning_ckpt"),
    ):
        if kind in kinds:
            return name
    weights = det.with_role("weights")
    fmts = {f.format for f in weights}
    for name in ("safetensors", "gguf", "torch_zip", "torch_legacy"):
        if name in fmts:
            return "torch" if name.startswith("torch") else name
    return None


def derive_precision(det: formats.Detection) -> str | None:
    """precision from the dtypes of the weights (safetensors, GGUF)."""
    for f in det.with_role("weights"):
        value = f.details.get("precision")
        if isinstance(value, str):
            return value
    return None


def build_environment(det: formats.Detection, info: RunInfo | None) -> Environment:
    """The E2 layers from what the folder holds plus what run.yaml says."""
    env = Environment()
    checkpoint_kinds = ("hf_trainer_checkpoint", "torch_dcp", "deepspeed", "lightning_ckpt")
    env.data.intermediate_checkpoints = [u.path for u in det.units if u.kind in checkpoint_kinds]
    env.data.final_weights = [
        u.weights for u in det.units if u.kind in ("weights", "peft_adapter") and u.weights
    ]
    latest = _latest_unit(det)
    if not env.data.final_weights and latest is not None and latest.weights:
        env.data.final_weights = [latest.weights]
    env.training.optimizer_state = sorted(
        {f.path for f in det.with_role("optimizer_state")}
        | {u.optimizer_state for u in det.units if u.optimizer_state}
    )
    env.training.scheduler = [f.path for f in det.with_role("scheduler")]
    env.training.rng_state = [f.path for f in det.with_role("rng_state")]
    env.training.config = [f.path for f in det.with_role("training_config")]
    if latest is not None:
        env.training.step = latest.step
        env.training.epoch = latest.epoch
    for f in det.with_role("training_config"):
        seed = f.details.get("seed")
        if isinstance(seed, int) and env.training.seed is None:
            env.training.seed = seed
    env.provenance.evaluation_metrics_files = [f.path for f in det.with_role("metrics")]
    libraries: dict[str, str] = {}
    for f in det.files.values():
        for key, lib in (("transformers_version", "transformers"), ("peft_version", "peft")):
            value = f.details.get(key)
            if isinstance(value, str):
                libraries.setdefault(lib, value)
    if info is not None:
        env.execution = ExecutionLayer(**info.execution.model_dump())
        if info.training.seed is not None:
            env.training.seed = info.training.seed
        env.training.hyperparameters = dict(info.training.hyperparameters)
        env.provenance.evaluation_metrics = dict(info.provenance.evaluation_metrics)
        env.provenance.builder_id = info.provenance.builder_id
    for lib, version in libraries.items():
        env.execution.libraries.setdefault(lib, version)
    return env


def _rel_inside(path: Path, directory: Path) -> str | None:
    try:
        return PurePosixPath(path.resolve().relative_to(directory.resolve())).as_posix()
    except ValueError:
        return None


def create(
    directory: Path,
    info: RunInfo | None,
    out: Path,
    *,
    force: bool = False,
    workers: int | None = None,
    on_bytes: ProgressFn | None = None,
    now: datetime | None = None,
) -> tuple[RunManifest, hashing.TreeHash, formats.Detection]:
    """Hash and inspect `directory`, fill the manifest, write it atomically to `out`."""
    if not directory.is_dir():
        raise InputError("not a directory", path=directory)
    # A pipe, a terminal or /dev/null takes the manifest as a stream: nothing is replaced.
    target = places.check_output(out, field="--out")
    if target.kind == "file" and out.exists() and not force:
        raise InputError("exists already", path=out, hint="pass --force to replace it")
    inside = _rel_inside(out, directory)
    tree = hashing.hash_tree(
        directory, exclude=[inside] if inside else [], workers=workers, on_bytes=on_bytes
    )
    det = formats.detect(directory, [(f.path, f.size) for f in tree.files])
    fields: dict[str, Any] = info.model_dump(include=set(A5_FIELDS)) if info else {}
    fields = {k: v for k, v in fields.items() if v is not None}
    fields.setdefault("checkpoint_format", derive_format(det))
    fields.setdefault("precision", derive_precision(det))
    env = build_environment(det, info)
    fields.setdefault("optimizer_state_exported", bool(env.training.optimizer_state))
    stamp = utc_iso(now or datetime.now(UTC)) or ""
    fields.setdefault("created_at_utc", stamp)
    manifest = RunManifest(
        **fields,
        environment=env,
        files=[ManifestFile(path=f.path, size=f.size, sha256=f.sha256) for f in tree.files],
        skipped=[{"path": s.path, "reason": s.reason} for s in tree.skipped],
    )
    places.write_output(out, manifest.to_json(), field="--out")
    return manifest, tree, det


# ---- lint (A6) --------------------------------------------------------------------------


@dataclass
class LintFinding:
    """One problem with a manifest field; `why` says what is wrong, as a message."""

    field: str
    severity: Literal["error", "warning"]
    rule: str
    why: Message
    line: int | None = None

    @property
    def message(self) -> str:
        """What is wrong, in English (the `--json` output keeps it)."""
        return english(self.why)

    def as_dict(self) -> dict[str, Any]:
        """Machine form."""
        return {
            "field": self.field,
            "line": self.line,
            "severity": self.severity,
            "rule": self.rule,
            "message": self.message,
        }


_SHA256_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
_BARE_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_MUTABLE_WORDS = re.compile(
    r"(^|[/:@=_.-])(latest|current|head|main|master|live|prod|stable)($|[/:@_.-])", re.I
)
_VERSION_MARKERS = (
    re.compile(r"(^|[/=@_.-])v\d+([./_-]|$)", re.I),
    re.compile(r"version(id)?[-_=:]?\w+", re.I),
    re.compile(r"snap(shot)?[-_=:/]?\w+", re.I),
    re.compile(r"@[0-9a-f]{7,}", re.I),
    re.compile(r"\d{4}-?\d{2}-?\d{2}"),
    re.compile(r"(^|[/=@_.-])[0-9a-f]{12,64}($|[/_.-])", re.I),
    re.compile(r"(^|[/=@_.-])(rev|revision|commit)[-_=:]?\w+", re.I),
)
KNOWN_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8", "fp64", "int8", "int4", "nf4", "mixed")
KNOWN_METHODS = ("full", "lora", "qlora", "dora", "adalora", "ia3", "prefix", "prompt", "freeze")
KNOWN_FORMATS = (
    "safetensors", "torch", "torch_dcp", "dcp", "deepspeed", "lightning_ckpt", "lightning",
    "gguf", "hf_trainer", "onnx",
)  # fmt: skip


def _image_ref(name: str, value: str | None, what: Message) -> list[LintFinding]:
    if not value:
        return [
            LintFinding(
                name, "error", "A5 required", message("artifacts", "no {what} given", what=what)
            )
        ]
    found: list[LintFinding] = []
    if _MUTABLE_WORDS.search(value.split("@sha256:")[0]) and not _SHA256_DIGEST.search(value):
        why = message("artifacts", "{value!r} names a moving tag; it proves nothing", value=value)
        found.append(LintFinding(name, "error", "A6 mutable", why))
    if not (
        _SHA256_DIGEST.search(value) or (name == "container_digest" and _BARE_DIGEST.match(value))
    ):
        last = value.rsplit("/", 1)[-1]
        if ":" in last:
            why = message(
                "artifacts",
                "{value!r} has a tag instead of a digest: pin it as name@sha256:<64 hex digits>",
                value=value,
            )
        else:
            why = message(
                "artifacts",
                "{value!r} has no immutable digest: pin it as name@sha256:<64 hex digits>",
                value=value,
            )
        found.append(LintFinding(name, "error", "A6 digest", why))
    return found


def _dataset(value: str | None) -> list[LintFinding]:
    name = "dataset_snapshot"
    if not value:
        return [
            LintFinding(
                name, "error", "A5 required", message("artifacts", "no dataset snapshot given")
            )
        ]
    path = re.sub(r"^[a-z][a-z0-9+.-]*://[^/]*", "", value)  # drop scheme://bucket
    if _MUTABLE_WORDS.search(path):
        why = message("artifacts", "{value!r} points at a moving name", value=value)
        return [LintFinding(name, "error", "A6 mutable", why)]
    if not any(m.search(path) for m in _VERSION_MARKERS):
        why = message(
            "artifacts",
            "{value!r} has no version or snapshot id: the run cannot be reproduced from it",
            value=value,
        )
        return [LintFinding(name, "error", "A6 version", why)]
    return []


def _commit(value: str | None) -> list[LintFinding]:
    name = "code_commit"
    if not value:
        return [
            LintFinding(name, "error", "A5 required", message("artifacts", "no code commit given"))
        ]
    if not re.fullmatch(r"[0-9a-fA-F]+", value):
        why = message("artifacts", "{value!r} is not a hex commit id", value=value)
        return [LintFinding(name, "error", "A6 commit", why)]
    if len(value) < 7:
        why = message("artifacts", "{value!r} is too short to name a commit", value=value)
        return [LintFinding(name, "error", "A6 commit", why)]
    if len(value) in (40, 64):
        return []
    if len(value) < 40:
        why = message(
            "artifacts",
            "{value!r} is abbreviated: unique today, maybe ambiguous later; record the full "
            "40-hex id",
            value=value,
        )
        return [LintFinding(name, "warning", "A6 commit", why)]
    why = message("artifacts", "{value!r} is not 40 or 64 hex digits long", value=value)
    return [LintFinding(name, "error", "A6 commit", why)]


def _created(value: str | None) -> list[LintFinding]:
    name = "created_at_utc"
    if not value:
        return [
            LintFinding(
                name, "error", "A5 required", message("artifacts", "no creation time given")
            )
        ]
    if "T" not in value and " " not in value:
        why = message("artifacts", "{value!r} has no time of day", value=value)
        return [LintFinding(name, "error", "A6 time", why)]
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        why = message("artifacts", "{value!r} is not an ISO 8601 time", value=value)
        return [LintFinding(name, "error", "A6 time", why)]
    if stamp.tzinfo is None:
        why = message("artifacts", "{value!r} has no zone: write it in UTC with Z", value=value)
        return [LintFinding(name, "error", "A6 time", why)]
    if stamp.utcoffset() != UTC.utcoffset(None):
        why = message("artifacts", "{value!r} is not UTC", value=value)
        return [LintFinding(name, "error", "A6 time", why)]
    return []


# The A5 fields checked against a vocabulary, as the "no ... given" finding names them.
_FIELD_WORDS: dict[str, Message] = {
    "precision": message("artifacts", "precision"),
    "method": message("artifacts", "method"),
}


def _known(name: str, value: str | None, known: tuple[str, ...]) -> list[LintFinding]:
    if not value:
        what = _FIELD_WORDS.get(name) or as_written(name)
        why = message("artifacts", "no {what} given", what=what)
        return [LintFinding(name, "error", "A5 required", why)]
    if not any(value.lower().startswith(k) for k in known):
        why = message(
            "artifacts", "{value!r} is not one of {known}", value=value, known=", ".join(known)
        )
        return [LintFinding(name, "warning", "A5 vocabulary", why)]
    return []


def _files(paths: list[str]) -> list[LintFinding]:
    if not paths:
        why = message("artifacts", "no files listed with size and SHA-256")
        return [LintFinding("files", "error", "A5 files", why)]
    found: list[LintFinding] = []
    seen: set[str] = set()
    for i, p in enumerate(paths):
        if p in seen:
            why = message("artifacts", "{file!r} listed twice", file=p)
            found.append(LintFinding(f"files.{i}.path", "error", "A5 files", why))
        seen.add(p)
        if p.startswith("/") or ".." in PurePosixPath(p).parts:
            why = message("artifacts", "{file!r} is outside the run folder", file=p)
            found.append(LintFinding(f"files.{i}.path", "error", "A5 files", why))
    return found


def _optimizer(m: RunManifest, paths: list[str]) -> list[LintFinding]:
    """The optimizer state the manifest names, against the files and `optimizer_state_exported`."""
    found: list[LintFinding] = []
    listed = set(paths)
    optimizer = {p for p in paths if "optimizer_state" in formats.roles_by_name(p)}
    for i, p in enumerate(m.environment.training.optimizer_state):
        if p in listed:
            optimizer.add(p)
        else:
            why = message("artifacts", "names {file!r}, which is not among the files", file=p)
            found.append(
                LintFinding(
                    f"environment.training.optimizer_state.{i}", "error", "A5 optimizer", why
                )
            )
    name = "optimizer_state_exported"
    if m.optimizer_state_exported is None:
        why = message("artifacts", "not stated (true/false)")
        found.append(LintFinding(name, "error", "A5 required", why))
    elif m.optimizer_state_exported and not optimizer:
        why = message(
            "artifacts", "true, but no optimizer state is among the files (A2: not resumable)"
        )
        found.append(LintFinding(name, "error", "A6 optimizer", why))
    elif not m.optimizer_state_exported and optimizer:
        why = message(
            "artifacts", "false, but {file!r} looks like optimizer state", file=sorted(optimizer)[0]
        )
        found.append(LintFinding(name, "warning", "A6 optimizer", why))
    return found


def _retention(retention_class: str | None, policy: LoadedPolicy | None) -> list[LintFinding]:
    name = "retention_class"
    if not retention_class:
        return [
            LintFinding(name, "error", "A5 required", message("artifacts", "no retention class"))
        ]
    if policy is None:
        why = message(
            "artifacts",
            "no retention.yaml to check it against (pass --retention or run in a workspace)",
        )
        return [LintFinding(name, "warning", "A3 retention", why)]
    if retention_class not in policy.policy.classes:
        classes = sorted(policy.policy.classes)
        if classes:
            why = message(
                "artifacts",
                "{value!r} is not defined in {policy} (defined: {defined})",
                value=retention_class,
                policy=str(policy.path),
                defined=", ".join(classes),
            )
        else:
            why = message(
                "artifacts",
                "{value!r} is not defined in {policy} (defined: none)",
                value=retention_class,
                policy=str(policy.path),
            )
        return [LintFinding(name, "error", "A3 retention", why)]
    return []


def _environment(m: RunManifest) -> list[LintFinding]:
    """E2: what a restore elsewhere needs to match the run's execution and judge its results."""
    found: list[LintFinding] = []
    ex = m.environment.execution
    for key in ("driver_version", "cuda_version"):
        if not getattr(ex, key):
            why = message(
                "artifacts", "not recorded: a restore elsewhere cannot match the environment"
            )
            found.append(
                LintFinding(f"environment.execution.{key}", "warning", "E2 execution", why)
            )
    if not ex.libraries:
        why = message("artifacts", "no library versions recorded (torch, transformers, ...)")
        found.append(LintFinding("environment.execution.libraries", "warning", "E2 execution", why))
    prov = m.environment.provenance
    if not prov.evaluation_metrics and not prov.evaluation_metrics_files:
        why = message("artifacts", "no evaluation metrics recorded")
        found.append(
            LintFinding(
                "environment.provenance.evaluation_metrics", "warning", "E2 provenance", why
            )
        )
    return found


def lint(m: RunManifest, policy: LoadedPolicy | None) -> list[LintFinding]:
    """A6 checks of a manifest (lines are filled by `lint_file`)."""
    found: list[LintFinding] = []
    if not m.run_id:
        found.append(
            LintFinding("run_id", "error", "A5 required", message("artifacts", "no run_id given"))
        )
    found += _image_ref("base_model", m.base_model, message("artifacts", "base model"))
    found += _image_ref(
        "container_digest", m.container_digest, message("artifacts", "container digest")
    )
    found += _dataset(m.dataset_snapshot)
    found += _commit(m.code_commit)
    found += _created(m.created_at_utc)
    found += _known("precision", m.precision, KNOWN_PRECISIONS)
    found += _known("method", m.method, KNOWN_METHODS)
    found += _known("checkpoint_format", m.checkpoint_format, KNOWN_FORMATS)
    paths = [f.path for f in m.files]
    found += _files(paths)
    found += _optimizer(m, paths)
    found += _retention(m.retention_class, policy)
    found += _environment(m)
    return found


def lint_file(path: Path, policy: LoadedPolicy | None) -> tuple[RunManifest, list[LintFinding]]:
    """Load and lint a manifest file, with the line of every finding."""
    manifest = load_manifest(path)
    found = lint(manifest, policy)
    root = yaml_root(path, MANIFEST_MAX_BYTES)
    for f in found:
        loc = tuple(int(p) if p.isdigit() else p for p in f.field.split("."))
        f.line = node_line(root, loc)
    return manifest, found


# ---- verify -----------------------------------------------------------------------------


def verify(
    directory: Path,
    manifest_path: Path,
    *,
    workers: int | None = None,
    on_bytes: ProgressFn | None = None,
) -> tuple[RunManifest, hashing.SumsCheck]:
    """Every file of the manifest is there with its hash and size, and nothing else is."""
    manifest = load_manifest(manifest_path)
    if not directory.is_dir():
        raise InputError("not a directory", path=directory)
    inside = _rel_inside(manifest_path, directory)
    tree = hashing.hash_tree(
        directory, exclude=[inside] if inside else [], workers=workers, on_bytes=on_bytes
    )
    expected = [(f.path, f.sha256, i + 1) for i, f in enumerate(manifest.files)]
    check = hashing.check_tree(tree, expected)
    have = tree.by_path()
    for f in manifest.files:
        got = have.get(f.path)
        if got is not None and got.sha256 == f.sha256 and got.size != f.size:
            check.mismatched.append(
                {"path": f.path, "expected_size": f.size, "actual_size": got.size}
            )
            check.ok = False
    return manifest, check


# ---- in-toto / SLSA ---------------------------------------------------------------------


def _split_digest(ref: str | None) -> dict[str, Any] | None:
    if not ref:
        return None
    m = re.match(r"^(?P<name>.*?)@?sha256:(?P<hex>[0-9a-f]{64})$", ref)
    if m:
        return {"uri": m.group("name") or ref, "digest": {"sha256": m.group("hex")}}
    return {"uri": ref, "annotations": {"pinned": False}}


def provenance_statement(m: RunManifest) -> dict[str, Any]:
    """The manifest as an in-toto Statement v1 with a SLSA provenance v1 predicate.

    Subjects are the run's files with their SHA-256; resolved dependencies are the base
    model, the dataset snapshot, the code commit and the container image. The builder is
    `builder_id` from run.yaml, or `urn:gpudecide:builder:self-declared`: nothing here is
    signed, so it is what the team declares, to be signed or compared, not a SLSA level.
    """
    deps: list[dict[str, Any]] = []
    for name, ref in (("base_model", m.base_model), ("container", m.container_digest)):
        item = _split_digest(ref)
        if item:
            deps.append({"name": name, **item})
    if m.dataset_snapshot:
        deps.append({"name": "dataset_snapshot", "uri": m.dataset_snapshot})
    if m.code_commit:
        commit: dict[str, Any] = {"name": "code"}
        if re.fullmatch(r"[0-9a-f]{40}", m.code_commit):
            commit["digest"] = {"gitCommit": m.code_commit}
        else:
            commit["annotations"] = {"commit": m.code_commit, "abbreviated": True}
        deps.append(commit)
    env = m.environment
    external = {
        k: getattr(m, k)
        for k in (
            "run_id",
            "method",
            "precision",
            "checkpoint_format",
            "optimizer_state_exported",
            "retention_class",
        )
    }
    external["seed"] = env.training.seed
    external["hyperparameters"] = env.training.hyperparameters
    return {
        "_type": hashing.IN_TOTO_STATEMENT,
        "subject": [{"name": f.path, "digest": {"sha256": f.sha256}} for f in m.files],
        "predicateType": SLSA_PREDICATE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": external,
                "internalParameters": {
                    "execution": env.execution.model_dump(),
                    "step": env.training.step,
                    "epoch": env.training.epoch,
                },
                "resolvedDependencies": deps,
            },
            "runDetails": {
                "builder": {"id": env.provenance.builder_id or SELF_DECLARED_BUILDER},
                "metadata": {"invocationId": m.run_id, "finishedOn": m.created_at_utc},
                "byproducts": [
                    {"name": "evaluation_metrics", "annotations": env.provenance.evaluation_metrics}
                ]
                if env.provenance.evaluation_metrics
                else [],
            },
        },
    }
