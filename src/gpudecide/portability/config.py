"""What defines a training run, without torch: the model shape presets and `TrainConfig`.

Plans, the CLI and the drills read and validate configurations before any training starts;
keeping them here means a command that never trains never waits for torch to import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "EVAL_SEQUENCES",
    "RESUME_KEYS",
    "SIZE_PRESETS",
    "Device",
    "Dims",
    "Size",
    "TrainConfig",
]


@dataclass(frozen=True)
class Dims:
    """Shape of the model (what a checkpoint must match to be loaded without changes)."""

    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    seq_len: int
    dropout: float


# Parameter counts (weights + biases) printed by `count_parameters(CausalLM(dims))`:
# tiny 0.14M, small 3.7M, 125m 134M, 350m 367M, 1b 1.04B.
SIZE_PRESETS: dict[str, dict[str, int]] = {
    "tiny": {"vocab_size": 256, "d_model": 64, "n_layers": 2, "n_heads": 4, "seq_len": 32},
    "small": {"vocab_size": 1024, "d_model": 256, "n_layers": 4, "n_heads": 4, "seq_len": 64},
    "125m": {"vocab_size": 32000, "d_model": 768, "n_layers": 12, "n_heads": 12, "seq_len": 256},
    "350m": {"vocab_size": 32000, "d_model": 1024, "n_layers": 24, "n_heads": 16, "seq_len": 256},
    "1b": {"vocab_size": 32000, "d_model": 2048, "n_layers": 18, "n_heads": 16, "seq_len": 256},
}


Size = Literal["tiny", "small", "125m", "350m", "1b"]
Device = Literal["cpu", "cuda"]
EVAL_SEQUENCES = 32
# Fields that change what training computes: a resume refuses a checkpoint that differs in
# any of them (no silent transformation, E4). steps, checkpointing and device may differ.
RESUME_KEYS = (
    "size", "vocab_size", "d_model", "n_layers", "n_heads", "seq_len", "dropout", "batch_size",
    "lr", "warmup_steps", "min_lr_ratio", "weight_decay", "grad_clip", "seed", "n_sequences",
    "schedule_steps",
)  # fmt: skip


class TrainConfig(BaseModel):
    """Everything that defines a training run; stored verbatim in every checkpoint."""

    model_config = ConfigDict(extra="forbid")

    size: Size = Field(default="tiny", description="Model size preset (see lm.SIZE_PRESETS).")
    vocab_size: int | None = Field(default=None, ge=8, description="Overrides the preset.")
    d_model: int | None = Field(default=None, ge=8, description="Overrides the preset.")
    n_layers: int | None = Field(default=None, ge=1, description="Overrides the preset.")
    n_heads: int | None = Field(default=None, ge=1, description="Overrides the preset.")
    seq_len: int | None = Field(default=None, ge=4, description="Overrides the preset.")
    dropout: float = Field(default=0.1, ge=0, lt=1)
    batch_size: int = Field(default=8, ge=1)
    steps: int = Field(default=40, ge=1, description="Optimizer steps of the whole run.")
    schedule_steps: int | None = Field(
        default=None, ge=1, description="Length of the LR schedule (default: steps)."
    )
    checkpoint_every: int = Field(default=0, ge=0, description="Checkpoint interval; 0: none.")
    checkpoint_steps: list[int] = Field(default_factory=list, description="Extra checkpoints.")
    lr: float = Field(default=3e-3, gt=0)
    warmup_steps: int = Field(default=5, ge=0)
    min_lr_ratio: float = Field(default=0.1, ge=0, le=1)
    weight_decay: float = Field(default=0.01, ge=0)
    grad_clip: float = Field(default=1.0, gt=0)
    seed: int = Field(default=1234, ge=0)
    n_sequences: int = Field(default=512, ge=1, description="Synthetic training sequences.")
    device: Device = "cpu"
    threads: int | None = Field(
        default=None, ge=1, description="torch CPU threads for this run; None: torch's default."
    )

    @model_validator(mode="after")
    def _heads_divide(self) -> TrainConfig:
        d = self.dims()
        if d.d_model % d.n_heads:
            raise ValueError(f"d_model {d.d_model} is not a multiple of n_heads {d.n_heads}")
        return self

    def dims(self) -> Dims:
        """The model shape: the preset with any overrides applied."""
        base = SIZE_PRESETS[self.size]
        pick = {k: getattr(self, k) if getattr(self, k) is not None else v for k, v in base.items()}
        return Dims(dropout=self.dropout, **pick)

    def is_checkpoint_step(self, step: int) -> bool:
        """Whether a checkpoint is written after `step` optimizer steps."""
        every = self.checkpoint_every and step % self.checkpoint_every == 0
        return bool(every) or step in self.checkpoint_steps

    def resume_key(self) -> dict[str, Any]:
        """The fields a checkpoint must match to be resumed."""
        dumped = self.model_dump()
        return {k: dumped[k] for k in RESUME_KEYS}
