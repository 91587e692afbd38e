"""The export test's plan, written and hashed BEFORE anything runs (SPEC E4).

`export-test.yaml` (template: `gpudecide init`) fixes the model, the step to checkpoint at,
the metrics to compare and their tolerance, the expected artifacts and E2 layers, where the
export goes and what was done by hand. Its SHA-256 goes into the evidence before training
starts: a plan edited after the run makes the evidence stale.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpudecide.inputs import load_yaml_model
from gpudecide.options import OPTION_ID_PATTERN
from gpudecide.portability import PLAN_NAME
from gpudecide.portability.config import MAX_SEED, MAX_STEPS, MAX_THREADS, TrainConfig

__all__ = [
    "DEFAULT_ARTIFACTS",
    "PLAN_NAME",
    "ExportTestPlan",
    "Identity",
    "Layer",
    "Manual",
    "Metric",
    "ModelPlan",
    "Tolerance",
    "load_plan",
]

Metric = Literal["loss", "eval_loss"]
Layer = Literal["data", "training", "execution", "provenance"]
_METRICS: tuple[Metric, ...] = ("loss", "eval_loss")
_LAYERS: tuple[Layer, ...] = ("data", "training", "execution", "provenance")
DEFAULT_ARTIFACTS = [
    "checkpoint-*/model.safetensors",
    "checkpoint-*/optimizer.pt",
    "checkpoint-*/scheduler.pt",
    "checkpoint-*/rng_state.pth",
    "checkpoint-*/trainer_state.json",
    "checkpoint-*/training_config.json",
    "checkpoint-*/environment.json",
    "metrics.jsonl",
    "run-manifest.json",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelPlan(_Strict):
    """The training run: size preset, steps and the step the checkpoint is taken at."""

    size: Literal["tiny", "small", "125m", "350m", "1b"] = "tiny"
    steps: int = Field(default=24, ge=2, le=MAX_STEPS)
    checkpoint_step: int = Field(default=12, ge=1, le=MAX_STEPS - 1)
    batch_size: int = Field(default=8, ge=1, le=65_536)
    seed: int = Field(default=1234, ge=0, le=MAX_SEED)
    lr: float = Field(default=3e-3, gt=0, le=1)
    dropout: float = Field(default=0.1, ge=0, lt=1)
    n_sequences: int = Field(default=512, ge=1, le=1_000_000)
    threads: int | None = Field(default=None, ge=1, le=MAX_THREADS)

    @model_validator(mode="after")
    def _checkpoint_inside(self) -> ModelPlan:
        if self.checkpoint_step >= self.steps:
            raise ValueError(
                f"checkpoint_step {self.checkpoint_step} must be before the last step {self.steps}"
            )
        try:  # what only the whole run can tell (memory of a step, of the data)
            self.train_config("cpu")
        except ValidationError as exc:
            raise ValueError(exc.errors()[0]["msg"].removeprefix("Value error, ")) from None
        return self

    def train_config(self, device: str) -> TrainConfig:
        """The trainer's config for this plan on `device`."""
        return TrainConfig(
            size=self.size,
            steps=self.steps,
            checkpoint_steps=[self.checkpoint_step],
            batch_size=self.batch_size,
            seed=self.seed,
            lr=self.lr,
            dropout=self.dropout,
            n_sequences=self.n_sequences,
            threads=self.threads,
            device=device,
        )


class Tolerance(_Strict):
    """How far a resumed run's final metrics may be from the uninterrupted reference (a
    relative tolerance above 1, or an absolute one above 1e6, accepts any run)."""

    relative: float | None = Field(default=0.02, ge=0, le=1)
    absolute: float | None = Field(default=None, ge=0, le=1e6)

    @model_validator(mode="after")
    def _one_given(self) -> Tolerance:
        if self.relative is None and self.absolute is None:
            raise ValueError("give relative, absolute or both")
        return self

    def allows(self, value: float, reference: float) -> bool:
        """Within the relative OR the absolute bound (whichever is given)."""
        diff = abs(value - reference)
        rel_ok = self.relative is not None and diff <= self.relative * abs(reference)
        abs_ok = self.absolute is not None and diff <= self.absolute
        return rel_ok or abs_ok


class Manual(_Strict):
    """E3.5: what people did by hand; the record lists it as it is."""

    actions: list[str] = Field(default_factory=list)
    closed_formats: list[str] = Field(default_factory=list)
    restored_by_hand: list[str] = Field(default_factory=list)


class Identity(_Strict):
    """A5 identifiers the run manifest carries (its lint wants immutable ones)."""

    code_commit: str | None = None
    container_digest: str | None = None
    retention_class: str | None = None


class ExportTestPlan(_Strict):
    """Schema of export-test.yaml."""

    version: Literal[1] = 1
    option: str = Field(pattern=OPTION_ID_PATTERN)
    model: ModelPlan = Field(default_factory=ModelPlan)
    metrics: list[Metric] = Field(default_factory=lambda: list(_METRICS), min_length=1)
    tolerance: Tolerance = Field(default_factory=Tolerance)
    expected_artifacts: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ARTIFACTS), max_length=1000
    )
    layers: list[Layer] = Field(default_factory=lambda: list(_LAYERS))
    storage: str | None = None
    storage_options: dict[str, str | int | bool] = Field(default_factory=dict, max_length=100)
    executor: Literal["local", "slurm", "k8s"] = "local"
    device: Literal["cpu", "cuda"] = "cpu"
    resume_device: Literal["cpu", "cuda"] | None = None
    throughput_floor_mb: int = Field(default=64, ge=1, le=1_048_576)
    run_size_gb: float | None = Field(default=None, gt=0, le=10_000_000)
    identity: Identity = Field(default_factory=Identity)
    manual: Manual = Field(default_factory=Manual)


def load_plan(path: Path) -> ExportTestPlan:
    """Read export-test.yaml (file:line:field errors, exit 2)."""
    return load_yaml_model(path, ExportTestPlan)
