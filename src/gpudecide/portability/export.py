"""Step 3 of the export test: the run manifest, its lint, declared artifacts and E2 layers.

The manifest (artifacts' `run-manifest.json`, A5) is written over the run folder before it
leaves, from what the folder holds plus what the plan and the training job know: the model
trained from scratch is named by the SHA-256 of its exact config (seeded initialisation),
the data set by its generator version and seed. Identifiers the plan does not give (code
commit, container digest, retention class) stay empty and the lint says so: the step then
warns rather than passes.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from gpudecide import __version__
from gpudecide.artifacts import manifest as mf
from gpudecide.artifacts import retention as ret
from gpudecide.artifacts.hashing import list_files
from gpudecide.fsutil import sha256_path
from gpudecide.message import Message, message, nmessage
from gpudecide.portability import checkpoint as ck
from gpudecide.portability.plan import ExportTestPlan

__all__ = ["MANIFEST", "check_export", "run_info", "write_manifest"]

MANIFEST = "run-manifest.json"
_LIBS = ("torch", "safetensors", "numpy")


def _libraries() -> dict[str, str]:
    out = {"gpudecide": __version__}
    for name in _LIBS:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def run_info(
    plan: ExportTestPlan, run_id: str, train: Mapping[str, Any], checkpoint: Path
) -> mf.RunInfo:
    """The A5/E2 facts the folder cannot tell, from the plan and the training job's result
    (`train`: what the worker's train action returned)."""
    env = train.get("environment", {})
    config_sha = sha256_path(checkpoint / ck.CONFIG)[0]
    k = plan.model.checkpoint_step
    at_k: dict[str, Any] = next((m for m in train["metrics"] if m["step"] == k), {})
    metrics = {f"{name}@step{k}": at_k[name] for name in ("loss", "eval_loss") if name in at_k}
    return mf.RunInfo(
        run_id=run_id,
        base_model=f"gpudecide/causal-lm-{plan.model.size}-init@sha256:{config_sha}",
        dataset_snapshot=(
            f"synthetic://markov-chain/v1/seed-{plan.model.seed}/sequences-{plan.model.n_sequences}"
        ),
        code_commit=plan.identity.code_commit,
        container_digest=plan.identity.container_digest,
        precision="fp32",
        method="full",
        retention_class=plan.identity.retention_class,
        execution=mf.ExecutionInfo(
            driver_version=env.get("driver"),
            cuda_version=env.get("cuda_runtime"),
            python_version=env.get("python"),
            libraries=_libraries(),
            gpu=env.get("gpu_model"),
        ),
        training=mf.TrainingInfo(seed=plan.model.seed, hyperparameters=plan.model.model_dump()),
        provenance=mf.ProvenanceInfo(
            evaluation_metrics=metrics, builder_id=f"gpudecide export-test {__version__}"
        ),
    )


def write_manifest(
    run_dir: Path, info: mf.RunInfo, workspace_root: Path | None
) -> tuple[Path, list[dict[str, Any]]]:
    """Write run-manifest.json over `run_dir` and lint it (findings as dicts), against the
    workspace's retention policy when there is one."""
    target = run_dir / MANIFEST
    manifest, _tree, _det = mf.create(run_dir, info, target, force=True)
    policy_path = ret.find(None, workspace_root)
    policy = ret.load(policy_path) if policy_path is not None else None
    return target, [f.as_dict() for f in mf.lint(manifest, policy)]


# The E2 layers and the items each must hold, as messages (the report names them in ru/kk).
_LAYERS = {
    "data": message("portability", "data"),
    "training": message("portability", "training"),
    "execution": message("portability", "execution"),
    "provenance": message("portability", "provenance"),
}
_ITEMS = {
    "weights": message("portability", "weights"),
    "optimizer state": message("portability", "optimizer state"),
    "scheduler": message("portability", "scheduler"),
    "RNG state": message("portability", "RNG state"),
    "exact config": message("portability", "exact config"),
    "step": message("portability", "step"),
    "python version": message("portability", "python version"),
    "library versions": message("portability", "library versions"),
    "evaluation metrics": message("portability", "evaluation metrics"),
}


def _layer_gaps(env: mf.Environment, layers: list[str]) -> list[Message]:
    checks = {
        "data": {"weights": bool(env.data.final_weights or env.data.intermediate_checkpoints)},
        "training": {
            "optimizer state": bool(env.training.optimizer_state),
            "scheduler": bool(env.training.scheduler),
            "RNG state": bool(env.training.rng_state),
            "exact config": bool(env.training.config),
            "step": env.training.step is not None,
        },
        "execution": {
            "python version": bool(env.execution.python_version),
            "library versions": bool(env.execution.libraries),
        },
        "provenance": {
            "evaluation metrics": bool(
                env.provenance.evaluation_metrics or env.provenance.evaluation_metrics_files
            )
        },
    }
    return [
        message(
            "portability", "E2 layer {layer}: no {item}", layer=_LAYERS[layer], item=_ITEMS[item]
        )
        for layer in layers
        for item, ok in checks[layer].items()
        if not ok
    ]


def check_export(
    plan: ExportTestPlan, run_dir: Path, manifest_path: Path, lint: list[dict[str, Any]]
) -> tuple[list[Message], list[Message]]:
    """Problems (the step fails) and warnings (it warns) of the export in `run_dir` before
    it leaves: declared artifacts, E2 layers, the manifest's lint findings (`lint`)."""
    found, _skipped = list_files(run_dir)
    names = [rel for rel, _p, _s in found]
    problems = [
        message("portability", "declared artifact '{pattern}' is missing", pattern=pattern)
        for pattern in plan.expected_artifacts
        if not any(fnmatch.fnmatchcase(n, pattern) for n in names)
    ]
    manifest = mf.load_manifest(manifest_path)
    problems += _layer_gaps(manifest.environment, list(plan.layers))
    errors = [f for f in lint if f["severity"] == "error"]
    warnings = []
    if errors:
        warnings.append(
            nmessage(
                "portability",
                "run manifest lint: {n:num} error ({fields})",
                "run manifest lint: {n:num} errors ({fields})",
                count="n",
                n=len(errors),
                fields=", ".join(sorted({str(f["field"]) for f in errors})),
            )
        )
    return problems, warnings
