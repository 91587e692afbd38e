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

from gpudecide import tool_version
from gpudecide.artifacts import manifest as mf
from gpudecide.artifacts import retention as ret
from gpudecide.artifacts.hashing import list_files
from gpudecide.errors import InputError
from gpudecide.fsutil import sha256_path
from gpudecide.message import Message, english, message, nmessage
from gpudecide.portability import checkpoint as ck
from gpudecide.portability.plan import ExportTestPlan

__all__ = [
    "MANIFEST",
    "check_export",
    "lint_given",
    "lint_summary",
    "manifest_figures",
    "run_info",
    "write_manifest",
]

MANIFEST = "run-manifest.json"
_LIBS = ("torch", "safetensors", "numpy")


def _libraries() -> dict[str, str]:
    out = {"gpudecide": tool_version()}
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
            evaluation_metrics=metrics, builder_id=f"gpudecide export-test {tool_version()}"
        ),
    )


def write_manifest(
    run_dir: Path, info: mf.RunInfo, workspace_root: Path | None
) -> tuple[Path, list[dict[str, Any]]]:
    """Write run-manifest.json over `run_dir` and lint it (findings as dicts), against the
    workspace's retention policy when there is one."""
    target = run_dir / MANIFEST
    manifest, _tree, _det = mf.create(run_dir, info, target, force=True)
    return target, _findings(mf.lint(manifest, _policy(workspace_root)))


def _policy(workspace_root: Path | None) -> Any:
    policy_path = ret.find(None, workspace_root)
    return ret.load(policy_path) if policy_path is not None else None


def _findings(found: list[mf.LintFinding]) -> list[dict[str, Any]]:
    """Lint findings as the record keeps them: the English `message` and, as `why`, the
    message the report says in the reader's language."""
    return [{**f.as_dict(), "why": f.why} for f in found]


def lint_given(
    export: Path, workspace_root: Path | None
) -> tuple[Path | None, list[dict[str, Any]]]:
    """The run manifest a given export carries (None when it has none) and its lint findings,
    with their lines (a manifest the lint cannot read is one error finding)."""
    path = export / MANIFEST
    if not path.is_file() or path.is_symlink():
        return None, []
    try:
        _m, found = mf.lint_file(path, _policy(workspace_root))
    except InputError as exc:
        why = message("portability", "the run manifest cannot be read: {error}", error=exc.message)
        finding = {"field": "(file)", "line": exc.line, "severity": "error", "rule": "A5",
                   "message": english(why), "why": why}  # fmt: skip
        return path, [finding]
    return path, _findings(found)


def manifest_figures(path: Path | None) -> dict[str, Any] | None:
    """The manifest's A5 identifiers and file count, as the record shows them."""
    if path is None:
        return None
    try:
        m = mf.load_manifest(path)
    except InputError:
        return {"path": str(path)}
    fields = {k: getattr(m, k) for k in (
        "run_id", "base_model", "dataset_snapshot", "code_commit", "container_digest",
        "precision", "method", "checkpoint_format", "optimizer_state_exported",
        "created_at_utc", "retention_class",
    )}  # fmt: skip
    return {"path": str(path), **fields, "files": len(m.files)}


def lint_summary(lint: list[dict[str, Any]], severity: str) -> Message | None:
    """The lint findings of one severity in one line (None when there are none)."""
    found = [f for f in lint if f["severity"] == severity]
    if not found:
        return None
    fields = ", ".join(sorted({str(f["field"]) for f in found}))
    if severity == "error":
        return nmessage(
            "portability",
            "run manifest lint: {n:num} error ({fields})",
            "run manifest lint: {n:num} errors ({fields})",
            count="n",
            n=len(found),
            fields=fields,
        )
    return nmessage(
        "portability",
        "run manifest lint: {n:num} warning ({fields})",
        "run manifest lint: {n:num} warnings ({fields})",
        count="n",
        n=len(found),
        fields=fields,
    )


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
) -> tuple[list[Message], list[Message], list[Message]]:
    """Problems (the step fails), warnings (it warns) and notes (shown, the status as it
    is) of the export in `run_dir` before it leaves: declared artifacts, E2 layers, the
    manifest's lint errors (warnings of the step) and lint warnings (notes: shown, never
    hidden behind a pass)."""
    found, _skipped = list_files(run_dir)
    names = [rel for rel, _p, _s in found]
    problems = [
        message("portability", "declared artifact '{pattern}' is missing", pattern=pattern)
        for pattern in plan.expected_artifacts
        if not any(fnmatch.fnmatchcase(n, pattern) for n in names)
    ]
    manifest = mf.load_manifest(manifest_path)
    problems += _layer_gaps(manifest.environment, list(plan.layers))
    errors = lint_summary(lint, "error")
    advisories = lint_summary(lint, "warning")
    return problems, [errors] if errors else [], [advisories] if advisories else []
