"""What defines a training run, without torch: the model shape presets and `TrainConfig`.

Plans, the CLI and the drills read and validate configurations before any training starts;
keeping them here means a command that never trains never waits for torch to import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpudecide.errors import TemplateError

__all__ = [
    "EVAL_SEQUENCES",
    "MAX_DATA_TOKENS",
    "MAX_LOGITS",
    "MAX_SEED",
    "MAX_STEPS",
    "MAX_THREADS",
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


# Bounds of every number of a training run, by what it is (a plan that passes them trains on
# one host; one that does not is refused before anything runs, not by a crashed trainer):
MAX_STEPS = 10_000_000  # optimizer steps (and any step number: warm-up, checkpoints)
MAX_SEED = 2**32 - 1  # numpy's global seed takes 32 bits
MAX_THREADS = 1024  # torch CPU threads
# Logits of one step (batch x sequence x vocabulary, 4 bytes each, about three times over
# with their gradient and softmax): 2**30 is about 12 GB, a large host's share.
MAX_LOGITS = 2**30
# Synthetic token ids held in memory (int64): 2**28 is 2 GB.
MAX_DATA_TOKENS = 2**28


class TrainConfig(BaseModel):
    """Everything that defines a training run; stored verbatim in every checkpoint."""

    model_config = ConfigDict(extra="forbid")

    size: Size = Field(default="tiny", description="Model size preset (see lm.SIZE_PRESETS).")
    vocab_size: int | None = Field(
        default=None, ge=8, le=1_000_000, description="Overrides the preset."
    )
    d_model: int | None = Field(default=None, ge=8, le=16_384, description="Overrides the preset.")
    n_layers: int | None = Field(default=None, ge=1, le=256, description="Overrides the preset.")
    n_heads: int | None = Field(default=None, ge=1, le=256, description="Overrides the preset.")
    seq_len: int | None = Field(default=None, ge=4, le=32_768, description="Overrides the preset.")
    dropout: float = Field(default=0.1, ge=0, lt=1)
    batch_size: int = Field(default=8, ge=1, le=65_536)
    steps: int = Field(default=40, ge=1, le=MAX_STEPS, description="Optimizer steps of the run.")
    schedule_steps: int | None = Field(
        default=None, ge=1, le=MAX_STEPS, description="Length of the LR schedule (default: steps)."
    )
    checkpoint_every: int = Field(
        default=0, ge=0, le=MAX_STEPS, description="Checkpoint interval; 0: none."
    )
    checkpoint_steps: list[int] = Field(
        default_factory=list, max_length=10_000, description="Extra checkpoints."
    )
    lr: float = Field(default=3e-3, gt=0, le=1)
    warmup_steps: int = Field(default=5, ge=0, le=MAX_STEPS)
    min_lr_ratio: float = Field(default=0.1, ge=0, le=1)
    weight_decay: float = Field(default=0.01, ge=0, le=1)
    grad_clip: float = Field(default=1.0, gt=0, le=1e6)
    seed: int = Field(default=1234, ge=0, le=MAX_SEED)
    n_sequences: int = Field(
        default=512, ge=1, le=1_000_000, description="Synthetic training sequences."
    )
    device: Device = "cpu"
    threads: int | None = Field(
        default=None,
        ge=1,
        le=MAX_THREADS,
        description="torch CPU threads for this run; None: torch's default.",
    )

    @model_validator(mode="after")
    def _heads_divide(self) -> TrainConfig:
        d = self.dims()
        if d.d_model % d.n_heads:
            raise TemplateError(
                "d_model {d_model} is not a multiple of n_heads {n_heads}",
                d_model=d.d_model,
                n_heads=d.n_heads,
            )
        if any(not 1 <= k <= MAX_STEPS for k in self.checkpoint_steps):
            raise TemplateError("checkpoint steps are from 1 to {MAX_STEPS}", MAX_STEPS=MAX_STEPS)
        logits = self.batch_size * d.seq_len * d.vocab_size
        if logits > MAX_LOGITS:
            raise ValueError(
                f"batch_size {self.batch_size} x seq_len {d.seq_len} x vocab_size "
                f"{d.vocab_size} = {logits} logits a step, over the {MAX_LOGITS} one host "
                "trains with: use a smaller batch"
            )
        tokens = (self.n_sequences + EVAL_SEQUENCES) * (d.seq_len + 1)
        if tokens > MAX_DATA_TOKENS:
            raise ValueError(
                f"n_sequences {self.n_sequences} x seq_len {d.seq_len} = {tokens} token ids "
                f"in memory, over {MAX_DATA_TOKENS}: use fewer sequences"
            )
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
