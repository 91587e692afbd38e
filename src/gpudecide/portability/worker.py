"""One job of the export test in its own process: `python -m gpudecide.portability.worker SPEC`.

The executors (local subprocess, Slurm batch job, Kubernetes Job) all start this module with
a JSON job spec (a file path, or `-` to read it from the GPUDECIDE_JOB_SPEC variable as the
Kubernetes Job does). Two actions:

* `train`: train the plan's model from scratch in `output_dir` (the source "volume"),
  checkpoint at the plan's step, run on to the end (the reference curve).
* `resume`: in an empty `workdir` that sees nothing but the export: copy the export from
  storage (hashing as it arrives), verify the run manifest and the checkpoint's SHA-256
  sums, load the checkpoint, continue to the last step.

The result is one JSON file at `result` (written atomically). A refused checkpoint is a
result with status "fail" and the reason, not a crash; the exit code is 0 whenever a
result was written.

With `marks` in the spec ({"folder", "job_id"}) the job writes its lifecycle marks through
`gpudecide.marks` as a team's training script would: preparation start when it begins
(restoring the export is preparation), the first training step, every checkpoint once it is
complete on disk, and the end (completed or failed).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import torch

from gpudecide.errors import InputError
from gpudecide.fsutil import atomic_write_text
from gpudecide.message import Message, english, message
from gpudecide.portability import environment
from gpudecide.portability.trainer import (
    CheckpointError,
    CheckpointInfo,
    TrainConfig,
    train,
)

__all__ = [
    "HF_RESUME_FILES",
    "MANIFEST",
    "Lifecycle",
    "do_resume",
    "do_resume_hf",
    "do_train",
    "main",
    "run_spec",
    "storage_options",
]

MANIFEST = "run-manifest.json"


def _checkpoint_dict(info: CheckpointInfo) -> dict[str, Any]:
    return {
        "path": str(info.path),
        "step": info.step,
        "bytes": info.total_bytes,
        "seconds": info.seconds,
        "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in info.files],
    }


def storage_options(spec: dict[str, Any]) -> dict[str, Any]:
    """The storage options of a job: those in its spec, and the credentials a Kubernetes
    Job receives from its Secret (`storage_options_from_env`: option -> variable), which
    its manifest never holds."""
    options = dict(spec.get("storage_options") or {})
    for key, var in (spec.get("storage_options_from_env") or {}).items():
        value = os.environ.get(str(var))
        if value is None:
            raise InputError(
                "the storage option {key} comes from the variable {var}, which is not set",
                field="storage_options",
                hint="create the Secret the Job names (see the manifest's header)",
                key=key,
                var=var,
            )
        options[str(key)] = value
    return options


class Lifecycle:
    """The job's lifecycle marks (no-ops without a marks folder in the spec)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        given = spec.get("marks") or {}
        self.writer: Any = None
        if given.get("folder"):
            from gpudecide.marks import MarkWriter

            self.writer = MarkWriter(given["folder"], job_id=given.get("job_id"))

    def prep_start(self) -> None:
        """The job begins: restoring, building and loading are its preparation."""
        if self.writer is not None:
            self.writer.prep_start()

    def on_step(self, metric: Any) -> None:
        """After every optimizer step: the first one is the job's first step."""
        if self.writer is not None:
            self.writer.first_step(int(metric["step"]))

    def on_checkpoint(self, info: CheckpointInfo) -> None:
        """A checkpoint is complete on disk."""
        if self.writer is not None:
            self.writer.checkpoint(info.step, info.path)

    def end(self, status: str) -> None:
        """The job is over."""
        if self.writer is not None:
            self.writer.end(status)


def do_train(spec: dict[str, Any], marks: Lifecycle | None = None) -> dict[str, Any]:
    """Train from scratch; checkpoint at the plan's step; run on to the end."""
    config = TrainConfig.model_validate(spec["config"])
    output = Path(spec["output_dir"])
    marks = marks or Lifecycle({})
    result = train(
        config,
        output,
        container_digest=spec.get("container_digest"),
        on_step=marks.on_step,
        on_checkpoint=marks.on_checkpoint,
    )
    exported = None
    if spec.get("export"):  # a Kubernetes Job exports from inside (no controller beside it)
        from gpudecide.portability.storage import open_storage

        target = spec["export"]
        store = open_storage(target["storage"], storage_options(target))
        exported = store.put_dir(output, target["name"]).as_dict()
    return {
        "export": exported,
        "status": "ok",
        "metrics": result.metrics,
        "final_metrics": result.final_metrics(),
        "final_step": result.final_step,
        "checkpoints": [_checkpoint_dict(c) for c in result.checkpoints],
        "tokens_per_second": result.tokens_per_second,
        "parameters": result.parameters,
        "seconds": result.seconds,
        "environment": environment.snapshot(config.device, spec.get("container_digest")),
    }


def _perturb(scale: float, seed: int) -> Any:
    def after_load(model: torch.nn.Module, _opt: torch.optim.Optimizer) -> None:
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for p in model.parameters():
                noise = torch.randn(p.shape, generator=gen) * scale
                p.add_(noise.to(p.device))

    return after_load


def _verify_manifest(export: Path) -> dict[str, Any]:
    from gpudecide.artifacts import manifest as mf

    path = export / MANIFEST
    if not path.is_file():
        return {"ok": False, "detail": f"no {MANIFEST} in the export"}
    _m, check = mf.verify(export, path)
    return {"ok": check.ok, **check.as_dict()}


def _manifest_problem(check: dict[str, Any]) -> Message:
    """Why the restored files do not match their run manifest, as a message."""
    if "detail" in check:
        return message("portability", "no {name} in the export", name=MANIFEST)
    changed = [str(m.get("path")) for m in check.get("mismatched", [])]
    missing = [str(p) for p in check.get("missing", [])]
    extra = [str(p) for p in check.get("extra", [])]
    return message(
        "portability",
        "the run manifest does not match the restored files: changed {changed}, missing "
        "{missing}, not listed {extra} ({files})",
        changed=len(changed),
        missing=len(missing),
        extra=len(extra),
        files=", ".join((changed + missing + extra)[:5]),
    )


def do_resume(spec: dict[str, Any], marks: Lifecycle | None = None) -> dict[str, Any]:
    """Restore the export into an empty folder, verify it, resume, train to the end."""
    marks = marks or Lifecycle({})
    from gpudecide.portability.storage import open_storage

    workdir = Path(spec["workdir"])
    leftovers = sorted(p.name for p in workdir.iterdir()) if workdir.exists() else []
    if leftovers:
        raise InputError(
            "working folder is not empty: {leftovers}", path=workdir, leftovers=leftovers[:5]
        )
    store = open_storage(spec["storage"], storage_options(spec))
    export = workdir / "export"
    transfer = store.get_dir(spec["export_name"], export)
    out: dict[str, Any] = {"restore": transfer.as_dict(), "status": "fail"}
    out["manifest_check"] = check = _verify_manifest(export)
    if not check["ok"] and not (spec.get("format") == "hf_trainer" and "detail" in check):
        out.update(
            reason="hash_mismatch",
            detail=f"run manifest does not match: {check}",
            detail_message=_manifest_problem(check),
        )
        return out
    if spec.get("format") == "hf_trainer":
        out.update(do_resume_hf(spec, marks))
        if not check["ok"]:
            note = message("portability", "no run manifest: file integrity not verified")
            out.setdefault("notes", []).append(english(note))
            out.setdefault("note_messages", []).append(note)
        return out
    config = TrainConfig.model_validate(spec["config"])
    scale = float(spec.get("perturb") or 0.0)
    try:
        result = train(
            config,
            workdir / "run",
            resume_from=export / spec["checkpoint"],
            after_load=_perturb(scale, config.seed) if scale else None,
            on_step=marks.on_step,
            on_checkpoint=marks.on_checkpoint,
        )
    except CheckpointError as exc:
        out.update(reason=exc.reason, detail=str(exc), detail_message=exc.as_message())
        return out
    out.update(
        status="ok",
        resumed_at_step=result.start_step,
        final_step=result.final_step,
        metrics=result.metrics,
        final_metrics=result.final_metrics(),
        tokens_per_second=result.tokens_per_second,
        notes=result.notes,
        note_messages=result.note_messages,
        environment=environment.snapshot(config.device, spec.get("container_digest")),
    )
    return out


def run_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one job spec and return its result (never raises for a refused checkpoint)."""
    started = time.time()
    action = spec.get("action")
    marks = Lifecycle(spec)
    marks.prep_start()
    body: dict[str, Any] = {"status": "fail", "reason": "crashed"}
    try:
        if action == "train":
            body = do_train(spec, marks)
        elif action == "resume":
            body = do_resume(spec, marks)
        else:
            body = {"status": "fail", "reason": "bad_spec", "detail": f"unknown action {action!r}"}
    except InputError as exc:
        body = {"status": "fail", "reason": "bad_input", "detail": exc.one_line()}
    except CheckpointError as exc:
        body = {
            "status": "fail",
            "reason": exc.reason,
            "detail": str(exc),
            "detail_message": exc.as_message(),
        }
    finally:  # a crash too: the job's end is marked before its traceback
        marks.end("completed" if body.get("status") == "ok" else "failed")
    body.update(
        action=action,
        pid=os.getpid(),
        host=socket.gethostname(),
        wall_seconds=time.time() - started,
    )
    return body


def main(argv: list[str]) -> int:
    """Entry point: read the spec, run it, write the result file."""
    if len(argv) != 1:
        print("usage: python -m gpudecide.portability.worker SPEC.json|-", file=sys.stderr)
        return 2
    raw = os.environ.get("GPUDECIDE_JOB_SPEC", "") if argv[0] == "-" else Path(argv[0]).read_text()
    spec = json.loads(raw)
    try:
        body = run_spec(spec)
    except Exception:  # a fault of the worker itself: the export test reports it as an error
        body = {
            "status": "fail",
            "reason": "crashed",
            "detail": traceback.format_exc()[-4000:],
            "host": socket.gethostname(),
        }
    if spec.get("result"):
        atomic_write_text(spec["result"], json.dumps(body, default=str) + "\n")
    else:
        print(json.dumps(body, default=str))
    return 0


HF_RESUME_FILES = ("optimizer.pt", "scheduler.pt", "trainer_state.json", "config.json")


def _hf_dataset(vocab: int, seq: int, seed: int) -> Any:
    from torch.utils.data import Dataset

    gen = torch.Generator().manual_seed(seed)
    rows = torch.randint(0, vocab, (64, seq), generator=gen)

    class Synthetic(Dataset[dict[str, torch.Tensor]]):
        def __len__(self) -> int:
            return len(rows)

        def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
            return {"input_ids": rows[i], "labels": rows[i]}

    return Synthetic()


def do_resume_hf(spec: dict[str, Any], marks: Lifecycle | None = None) -> dict[str, Any]:
    """Resume a Hugging Face Trainer checkpoint with transformers' Trainer, a few steps on.

    The model is built from the checkpoint's config.json (no remote code), the data are
    synthetic token ids (the export carries no data), and the Trainer loads weights,
    optimizer, scheduler and RNG states itself (weights-only loading in transformers 5).
    Files a resume needs are checked first: without optimizer.pt the Trainer would silently
    start a fresh optimizer, which is not continuing the run.
    """
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        Trainer,
        TrainerCallback,
        TrainingArguments,
    )

    workdir = Path(spec["workdir"])
    ckpt = workdir / "export" / spec["checkpoint"]
    missing = [n for n in HF_RESUME_FILES if not (ckpt / n).is_file()]
    state = json.loads((ckpt / "trainer_state.json").read_text()) if not missing else {}
    step = int(state.get("global_step", -1))
    if missing:
        why = message(
            "portability",
            "cannot continue from the expected step: {files} missing (transformers' Trainer "
            "would start a new optimizer without saying so)",
            files=", ".join(missing),
        )
        return {
            "status": "fail",
            "reason": "optimizer_state_missing" if "optimizer.pt" in missing else "missing_file",
            "detail": english(why),
            "detail_message": why,
        }
    config = AutoConfig.from_pretrained(ckpt, trust_remote_code=False)
    model = AutoModelForCausalLM.from_config(config)  # type: ignore[no-untyped-call]
    seen: list[int] = []

    lifecycle = marks or Lifecycle({})

    class FirstStep(TrainerCallback):
        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if not seen:
                seen.append(int(state.global_step))

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            lifecycle.on_step({"step": int(state.global_step)})

    extra = int(spec.get("extra_steps", 2))
    seq = min(16, int(getattr(config, "n_positions", 16) or 16))
    args = TrainingArguments(
        output_dir=str(workdir / "run"),
        max_steps=step + extra,
        per_device_train_batch_size=int(state.get("train_batch_size") or 4),
        save_strategy="no",
        report_to=[],
        logging_steps=1,
        use_cpu=spec.get("device", "cpu") == "cpu",
        disable_tqdm=True,
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=_hf_dataset(int(config.vocab_size), seq, int(state.get("seed", 0) or 0)),
        callbacks=[FirstStep()],
    )
    trainer.train(resume_from_checkpoint=str(ckpt))
    losses = [h for h in trainer.state.log_history if "loss" in h]
    return {
        "status": "ok",
        "resumed_at_step": seen[0] if seen else None,
        "final_step": int(trainer.state.global_step),
        "metrics": [{"step": h["step"], "loss": h["loss"]} for h in losses],
        "final_metrics": {"loss": losses[-1]["loss"]} if losses else {},
        "notes": [english(_HF_NOTE)],
        "note_messages": [_HF_NOTE],
    }


_HF_NOTE = message("portability", "resumed with transformers' Trainer on synthetic token ids")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
