"""Train, checkpoint and resume a small causal LM for real (SPEC E1, E3, A2, G1).

This is the training job the export acceptance test and the game-day drills run. Its API
is stable; other packages import it and do not change it.

    from gpudecide.portability.trainer import TrainConfig, train, read_checkpoint

    cfg = TrainConfig(size="tiny", steps=40, checkpoint_steps=[20], seed=7)
    ref = train(cfg, Path("run-a"))                          # fresh, uninterrupted, 40 steps
    half = train(cfg, Path("run-b"), stop_at=20)             # fresh, stops after step 20
    ckpt = half.checkpoints[-1].path                          # run-b/checkpoint-20
    rest = train(cfg, Path("run-c"), resume_from=ckpt)       # resumes at step 20, runs to 40
    assert rest.start_step == 20 and rest.final_step == 40
    ref.metrics[-1]["loss"], rest.metrics[-1]["loss"]        # equal on one CPU build

* `TrainConfig` (pydantic): model size (`size` preset from ~100k to ~1B parameters, each
  dimension overridable), `steps`, `checkpoint_every` / `checkpoint_steps`, `seed`,
  `device` ("cpu" | "cuda"), `threads` (torch CPU threads), optimiser and schedule
  settings. `TrainConfig.model_dump()` is what a checkpoint stores as
  `training_config.json`.
* `train(config, output_dir, *, resume_from=None, stop_at=None, on_step=None,
  on_checkpoint=None, after_load=None, container_digest=None) -> TrainResult`
  starts fresh (seeding python, numpy and torch) or resumes from a checkpoint folder
  (verifying its SHA-256 sums before loading anything, restoring weights, optimizer,
  scheduler and RNG states, and asserting the step), then trains until `stop_at` (default
  `config.steps`). It writes `output_dir/checkpoint-<step>/` atomically at the checkpoint
  steps (layout in `gpudecide.portability.checkpoint`) and appends one JSON line per step to
  `output_dir/metrics.jsonl` (flushed, so another process can follow progress).
  `on_step(metric)` runs after every optimizer step (a drill may raise or kill there);
  `on_checkpoint(info)` after every published checkpoint (e.g. to copy it to storage);
  `after_load(model, optimizer)` after a resume's state is loaded (tests perturb there).
* Per-step metrics (`StepMetric` dicts): step, loss, lr, grad_norm, tokens, seconds; at
  checkpoint steps and the last step also eval_loss on a fixed held-out batch.
* `read_checkpoint(path)` / `verify_checkpoint(path)` / `latest_checkpoint(dir)` /
  `list_checkpoints(dir)` and `CheckpointError` (with a stable `reason`) come from
  `gpudecide.portability.checkpoint` and are re-exported here.
* `require_device(device)` raises the standard input error (exit 2) when CUDA is asked
  for and absent.

Determinism: the data are a seeded synthetic token set; batch choice draws from numpy's
global RNG, the crop offset from python's `random`, dropout from torch's generator, so a
resume that restores all three continues the very same sequence of batches and masks.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import torch
import torch.nn.functional as F

from gpudecide.errors import InputError
from gpudecide.message import Message, english, message
from gpudecide.portability import environment
from gpudecide.portability.checkpoint import (
    CONFIG,
    ENVIRONMENT,
    FORMAT,
    OPTIMIZER,
    RNG,
    SCHEDULER,
    TRAINER_STATE,
    WEIGHTS,
    CheckpointError,
    CheckpointInfo,
    CheckpointState,
    CheckpointWriter,
    latest_checkpoint,
    list_checkpoints,
    read_checkpoint,
    verify_checkpoint,
)
from gpudecide.portability.config import EVAL_SEQUENCES, RESUME_KEYS, TrainConfig
from gpudecide.portability.lm import CausalLM, SyntheticTokens

__all__ = [
    "CUDA_RNG_NOT_RESTORED",
    "CheckpointError",
    "CheckpointInfo",
    "CheckpointState",
    "StepMetric",
    "TrainConfig",
    "TrainResult",
    "latest_checkpoint",
    "list_checkpoints",
    "read_checkpoint",
    "require_device",
    "train",
    "verify_checkpoint",
]

# A note a resume adds to its result (`TrainResult.note_messages`, English in `notes`).
CUDA_RNG_NOT_RESTORED = message(
    "portability", "CUDA RNG states in the checkpoint were not restored: resumed on the CPU"
)


class StepMetric(TypedDict, total=False):
    """One optimizer step: loss of its batch, LR used, gradient norm, tokens, wall seconds."""

    step: int
    loss: float
    lr: float
    grad_norm: float
    tokens: int
    seconds: float
    eval_loss: float


@dataclass
class TrainResult:
    """What one `train` call did."""

    config: TrainConfig
    start_step: int
    final_step: int
    metrics: list[StepMetric]
    checkpoints: list[CheckpointInfo]
    resumed_from: Path | None
    seconds: float
    parameters: int
    notes: list[str] = field(default_factory=list)  # English, one per note message
    note_messages: list[Message] = field(default_factory=list)

    @property
    def tokens_per_second(self) -> float | None:
        """Training throughput of this call (None when no step ran)."""
        tokens = sum(m.get("tokens", 0) for m in self.metrics)
        busy = sum(m.get("seconds", 0.0) for m in self.metrics)
        return tokens / busy if tokens and busy > 0 else None

    def final_metrics(self) -> dict[str, float]:
        """Loss of the last step and the last eval_loss (None-free)."""
        out: dict[str, float] = {}
        if self.metrics:
            out["loss"] = self.metrics[-1]["loss"]
        evals = [m["eval_loss"] for m in self.metrics if "eval_loss" in m]
        if evals:
            out["eval_loss"] = evals[-1]
        return out


def require_device(device: str) -> torch.device:
    """The torch device for `device`; CUDA asked for and absent is bad input (exit 2)."""
    if device == "cuda":
        if not torch.cuda.is_available():
            raise InputError(
                "CUDA was asked for but torch sees no CUDA device",
                field="device",
                hint="torch {version} (CUDA runtime {cuda}); use --device cpu, or run on a "
                "machine with an NVIDIA GPU and a CUDA build",
                version=torch.__version__,
                cuda=torch.version.cuda,
            )
        return torch.device("cuda")
    if device != "cpu":
        raise InputError(
            "unknown device {device!r}", field="device", hint="cpu or cuda", device=device
        )
    return torch.device("cpu")


def _schedule(config: TrainConfig) -> Callable[[int], float]:
    total = config.schedule_steps or config.steps
    warm = config.warmup_steps
    floor = config.min_lr_ratio

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        progress = min(1.0, (step - warm) / max(1, total - warm))
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))

    return factor


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _to_cpu(obj: Any) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.detach().to("cpu")
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


def _rng_state() -> dict[str, Any]:
    legacy: Any = np.random.get_state(legacy=True)
    kind, keys, pos, has_gauss, gauss = legacy
    state: dict[str, Any] = {
        "python": random.getstate(),
        # numpy arrays are not allowed by weights-only loading: keys go in as a tensor.
        "numpy": (kind, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, gauss),
        "cpu": torch.random.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _restore_rng(rng: dict[str, Any], device: torch.device, notes: list[Message]) -> None:
    random.setstate(_tupled(rng["python"]))
    kind, keys, pos, has_gauss, gauss = rng["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, gauss))
    torch.random.set_rng_state(rng["cpu"])
    cuda_states = rng.get("cuda") or []
    if device.type == "cuda" and cuda_states:
        count = min(len(cuda_states), torch.cuda.device_count())
        torch.cuda.set_rng_state_all(cuda_states[:count])
    elif cuda_states:
        notes.append(CUDA_RNG_NOT_RESTORED)


def _tupled(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_tupled(v) for v in value)
    return value


@dataclass
class _Run:
    config: TrainConfig
    device: torch.device
    model: CausalLM
    optimizer: torch.optim.AdamW
    scheduler: torch.optim.lr_scheduler.LambdaLR
    data: SyntheticTokens
    step: int = 0
    notes: list[Message] = field(default_factory=list)


def _build(config: TrainConfig, device: torch.device) -> _Run:
    dims = config.dims()
    model = CausalLM(dims).to(device)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": config.weight_decay},
            {"params": rest, "weight_decay": 0.0},
        ],
        lr=config.lr,
        betas=(0.9, 0.95),
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _schedule(config))
    data = SyntheticTokens(
        dims.vocab_size, dims.seq_len, config.seed, config.n_sequences + EVAL_SEQUENCES
    )
    return _Run(config, device, model, optimizer, scheduler, data)


def _check_resumable(state: CheckpointState, config: TrainConfig) -> None:
    stored = {k: state.config.get(k) for k in RESUME_KEYS}
    wanted = config.resume_key()
    diff = sorted(k for k in RESUME_KEYS if stored[k] != wanted[k])
    if diff:
        shown = ", ".join(f"{k}: {stored[k]!r} != {wanted[k]!r}" for k in diff)
        raise CheckpointError(
            "config_mismatch",
            message("portability", "config differs from the checkpoint: {diff}", diff=shown),
        )
    missing = state.missing_for_resume
    if missing:
        raise CheckpointError(
            "optimizer_state_missing",
            message(
                "portability",
                "cannot continue from the expected step {step}: {files} missing from the "
                "checkpoint (weights alone allow inference, not resumption, A2)",
                step=state.step,
                files=", ".join(missing),
            ),
            state.path,
        )


def _load_into(run: _Run, state: CheckpointState) -> None:
    """Put a verified checkpoint's state into the run exactly as stored (no transformation)."""
    expected = run.model.state_dict()
    for name, tensor in state.weights.items():
        ref = expected.get(name)
        if ref is not None and (ref.shape != tensor.shape or ref.dtype != tensor.dtype):
            raise CheckpointError(
                "config_mismatch",
                message(
                    "portability",
                    "{name}: stored {shape} {dtype}, model has {model_shape} {model_dtype}",
                    name=name,
                    shape=str(tuple(tensor.shape)),
                    dtype=str(tensor.dtype),
                    model_shape=str(tuple(ref.shape)),
                    model_dtype=str(ref.dtype),
                ),
                state.path,
            )
    result = run.model.load_state_dict(state.weights, strict=False)
    if result.missing_keys or result.unexpected_keys:
        raise CheckpointError(
            "config_mismatch",
            message(
                "portability",
                "weights do not match the model: missing {missing}, unexpected {unexpected}",
                missing=str(result.missing_keys[:3]),
                unexpected=str(result.unexpected_keys[:3]),
            ),
            state.path,
        )
    assert state.optimizer is not None and state.scheduler is not None and state.rng is not None
    try:
        run.optimizer.load_state_dict(state.optimizer)
        run.scheduler.load_state_dict(state.scheduler)
    except (KeyError, ValueError, TypeError) as exc:
        raise CheckpointError(
            "unreadable",
            message("portability", "optimizer/scheduler state: {error}", error=str(exc)),
            state.path,
        ) from None
    _restore_rng(state.rng, run.device, run.notes)
    run.step = state.step


def _evaluate(run: _Run) -> float:
    rows = np.arange(run.config.n_sequences, run.config.n_sequences + EVAL_SEQUENCES)
    x, y = run.data.batch(rows, 0, run.device)
    run.model.eval()
    with torch.no_grad():
        logits = run.model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    run.model.train()
    return float(loss.item())


def _one_step(run: _Run) -> StepMetric:
    cfg = run.config
    t0 = time.perf_counter()
    lr = run.optimizer.param_groups[0]["lr"]
    rows = np.random.randint(0, cfg.n_sequences, size=cfg.batch_size)
    offset = random.randrange(run.data.seq_len + 1)
    x, y = run.data.batch(rows, offset, run.device)
    run.model.train()
    logits = run.model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    run.optimizer.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[no-untyped-call]
    grad_norm = torch.nn.utils.clip_grad_norm_(run.model.parameters(), cfg.grad_clip)
    run.optimizer.step()
    run.scheduler.step()
    run.step += 1
    value = float(loss.item())
    if run.device.type == "cuda":
        torch.cuda.synchronize()
    return StepMetric(
        step=run.step,
        loss=value,
        lr=float(lr),
        grad_norm=float(grad_norm.item()),
        tokens=int(x.numel()),
        seconds=time.perf_counter() - t0,
    )


def _save_checkpoint(
    run: _Run, output_dir: Path, history: list[StepMetric], container_digest: str | None
) -> CheckpointInfo:
    """Write the run's full state at its current step (atomically, hashed while written)."""
    cfg = run.config
    epoch = run.step * cfg.batch_size / cfg.n_sequences
    with CheckpointWriter(output_dir, run.step) as w:
        meta = {"format": "pt", "gpudecide": FORMAT, "step": str(run.step)}
        w.tensors(WEIGHTS, run.model.state_dict(), meta)
        w.torch_object(OPTIMIZER, _to_cpu(run.optimizer.state_dict()))
        w.torch_object(SCHEDULER, run.scheduler.state_dict())
        w.torch_object(RNG, _rng_state())
        w.json(
            TRAINER_STATE,
            {
                "format": FORMAT,
                "global_step": run.step,
                "epoch": epoch,
                "max_steps": cfg.steps,
                "log_history": list(history),
            },
        )
        w.json(CONFIG, cfg.model_dump())
        w.json(ENVIRONMENT, environment.snapshot(cfg.device, container_digest))
        return w.commit()


def _start(
    config: TrainConfig, device: torch.device, resume_from: Path | None
) -> tuple[_Run, list[StepMetric]]:
    if resume_from is None:
        _seed_everything(config.seed)
        return _build(config, device), []
    state = read_checkpoint(resume_from)  # verifies every SHA-256 before loading
    _check_resumable(state, config)
    run = _build(config, device)
    _load_into(run, state)
    history: list[StepMetric] = list(state.trainer_state.get("log_history", []))
    return run, history


def train(
    config: TrainConfig,
    output_dir: Path,
    *,
    resume_from: Path | None = None,
    stop_at: int | None = None,
    on_step: Callable[[StepMetric], None] | None = None,
    on_checkpoint: Callable[[CheckpointInfo], None] | None = None,
    after_load: Callable[[CausalLM, torch.optim.Optimizer], None] | None = None,
    container_digest: str | None = None,
) -> TrainResult:
    """Train from scratch or resume from `resume_from`, up to step `stop_at` (see module doc).

    Raises CheckpointError when the checkpoint fails verification or cannot be continued
    from its step, InputError when CUDA is asked for and absent.
    """
    device = require_device(config.device)
    if config.threads is not None:
        # Small models on shared cores: one thread avoids oversubscription (and spin-waits).
        torch.set_num_threads(config.threads)
    last = config.steps if stop_at is None else stop_at
    started = time.perf_counter()
    run, history = _start(config, device, resume_from)
    if resume_from is not None and after_load is not None:
        after_load(run.model, run.optimizer)
    start_step = run.step
    if last < start_step:
        raise CheckpointError(
            "config_mismatch",
            message(
                "portability",
                "stop_at {last} is before the checkpoint's step {step}",
                last=last,
                step=start_step,
            ),
        )
    output_dir.mkdir(parents=True, exist_ok=True)
    metrics: list[StepMetric] = []
    checkpoints: list[CheckpointInfo] = []
    with open(output_dir / "metrics.jsonl", "a", encoding="utf-8") as log:
        while run.step < last:
            metric = _one_step(run)
            if config.is_checkpoint_step(run.step) or run.step == last:
                metric["eval_loss"] = _evaluate(run)
            metrics.append(metric)
            history.append(metric)
            log.write(json.dumps(metric) + "\n")
            log.flush()
            if on_step is not None:
                on_step(metric)
            if config.is_checkpoint_step(run.step):
                info = _save_checkpoint(run, output_dir, history, container_digest)
                checkpoints.append(info)
                if on_checkpoint is not None:
                    on_checkpoint(info)
    return TrainResult(
        config=config,
        start_step=start_step,
        final_step=run.step,
        metrics=metrics,
        checkpoints=checkpoints,
        resumed_from=resume_from,
        seconds=time.perf_counter() - started,
        parameters=sum(p.numel() for p in run.model.parameters()),
        notes=[english(n) for n in run.notes],
        note_messages=list(run.notes),
    )
