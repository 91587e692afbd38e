"""The export audit: could this export really leave, and really resume? (SPEC E2, E5, A2, A7, A8)

Point it at a vendor's export or at the team's own checkpoint folder. It hashes every file,
detects every format without executing anything, and answers:

* the four layers of E2 (data, training, execution, provenance): each item found, missing
  or not applicable, with the file that proves it;
* resumable or weights-only (A2: model AND optimizer state AND step/epoch in one unit);
* the lock-in hazards of E5, each its own item: an adapter without an exact base model
  revision, weights without optimizer state, files no open format explains, dangerous
  pickles, corrupt files, throttled egress (when read from a remote `--source`), and
  artifacts the plan declared but the export lacks;
* pickle safety (A7) in two weights: `dangerous_pickle` (a deny-list callable: code execution
  or system access) and `untrusted_pickle_import` (an import outside the weights-only allow
  list), plus `pickle_frame_mismatch`, `pickle_not_scanned_too_large` and
  `archive_not_scanned` (an archive or member that cannot be opened, so nothing vouches for it);
* the A8 retention questions, answered from retention.yaml or listed as open, who holds
  the keys (`key_custody`), and every A1 artifact class with the retention class, lifetime,
  location, encryption, backup and restore-test interval the policy gives it (A1, A3);
* what it audited (`contour`): the storage it read and whether the artifacts are the
  vendor's own export (an option whose contour is the vendor's) or produced here.

Every hazard is a stop factor (D5): the audit's verdict is `fail` and the CLI exits 1.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field

from gpudecide import evidence as ev
from gpudecide.artifacts import formats, hashing, remote
from gpudecide.artifacts import retention as ret
from gpudecide.artifacts.figures import AuditFigures
from gpudecide.artifacts.words import as_written
from gpudecide.errors import InputError
from gpudecide.fsutil import ProgressFn
from gpudecide.inputs import load_yaml_model, parse_yaml, read_input_text
from gpudecide.jsonio import get, loads_bounded
from gpudecide.message import Message, english, message, nmessage, record_texts

__all__ = [
    "MANIFEST_LIMIT",
    "SPEC_IDS",
    "AuditResult",
    "ExportPlan",
    "HazardId",
    "Status",
    "load_plan",
    "run",
]

SPEC_IDS = ["A1", "A2", "A3", "A5", "A6", "A7", "A8", "E2", "E5"]
HazardId = Literal[
    "adapter_base_revision_missing",
    "weights_without_optimizer_state",
    "unknown_format",
    "dangerous_pickle",
    "untrusted_pickle_import",
    "pickle_frame_mismatch",
    "pickle_not_scanned_too_large",
    "archive_not_scanned",
    "corrupt_file",
    "egress_throttled",
    "declared_artifact_missing",
]
Status = Literal["found", "missing", "not_applicable"]
_COMMIT40 = re.compile(r"^[0-9a-f]{40}$")
_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


class ExportPlan(BaseModel):
    """Schema of plan.yaml (`audit --expect`): what the team expects, written BEFORE the test.

    E4: the tolerances and expectations of an acceptance test are fixed before it runs.
    """

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = Field(default=1, description="Schema version of this file.")
    run_size_gb: float | None = Field(
        default=None, gt=0, description="Size of the whole run's artifacts in GB (1e9 bytes)."
    )
    max_migration_hours: float | None = Field(
        default=None, gt=0, description="Longest acceptable time to move the whole run out."
    )
    resumable_required: bool = Field(
        default=True, description="The export must allow continuing training (A2, E1)."
    )
    expected_files: list[str] = Field(
        default_factory=list, description="Glob patterns every declared artifact must match."
    )
    retention: str | None = Field(
        default=None, description="retention.yaml to answer A8 from, relative to this file."
    )


@dataclass
class AuditResult:
    """The audit's figures (the `--json` body), the same as their model, and the evidence
    record built from them."""

    figures: dict[str, Any]
    record: ev.Evidence
    model: AuditFigures

    @property
    def stop(self) -> bool:
        """A stop-factor hazard was found."""
        return self.model.stop_factor


def load_plan(path: Path) -> ExportPlan:
    """Read plan.yaml (file:line:field errors)."""
    return load_yaml_model(path, ExportPlan)


def _item(
    name: str, status: Status, path: str | None, detail: Message | None = None
) -> dict[str, Any]:
    """One E2 item: its proof (`path`) or why it is absent (`detail`, kept in English beside
    its `message`)."""
    return {
        "name": name,
        "status": status,
        "path": path,
        "detail": english(detail) if detail else "",
        "message": detail,
    }


def _value(value: object) -> Message | None:
    """A value the export states (a digest, a base model id), as written; none when empty."""
    return as_written(str(value)) if value else None


def _found(
    name: str,
    path: str | None,
    detail: Message | None = None,
    *,
    absent: Status = "missing",
    absent_detail: Message | None = None,
) -> dict[str, Any]:
    if path:
        return _item(name, "found", path, detail)
    return _item(name, absent, None, absent_detail)


MANIFEST_LIMIT = 8 << 20  # a run manifest is a few KB; past 8 MiB it is not one


def _read_manifests(root: Path, det: formats.Detection) -> list[tuple[str, dict[str, Any]]]:
    """Run manifests in the export, read loosely: a vendor's need not match our schema."""
    out: list[tuple[str, dict[str, Any]]] = []
    for f in det.with_role("run_manifest"):
        # Bounded like every input: an alias bomb or a deep file in an export is refused,
        # never expanded into the record.
        try:
            text = read_input_text(root / f.path, MANIFEST_LIMIT)
            data = (
                loads_bounded(text, f.path) if f.format == "json" else parse_yaml(text, f.path)[0]
            )
        except (OSError, InputError):
            continue
        if isinstance(data, dict):
            out.append((f.path, data))
    return out


def _manifest_value(
    manifests: list[tuple[str, dict[str, Any]]], *keys: str
) -> tuple[Any, str | None]:
    for path, data in manifests:
        value = get(data, *keys)
        if value not in (None, "", [], {}):
            return value, path
    return None, None


def _is_local_path(base: str) -> bool:
    return (
        base.startswith(("/", "./", "../", "~", "file:"))
        or "\\" in base
        or re.match(r"^[A-Za-z]:", base) is not None
        or not _HUB_ID.match(base)
    )


def _adapter_hazards(det: formats.Detection, pinned_by: str | None) -> list[dict[str, Any]]:
    hazards = []
    for f in det.with_role("adapter_config"):
        base = f.details.get("base_model_name_or_path")
        rev = f.details.get("revision")
        problems: list[Message] = []
        if not base:
            problems.append(message("artifacts", "names no base model"))
        elif _is_local_path(str(base)):
            problems.append(
                message(
                    "artifacts",
                    "names a local path {base!r} as its base: not reproducible elsewhere",
                    base=base,
                )
            )
        if rev is None:
            problems.append(message("artifacts", "has no base model revision (revision: null)"))
        elif not _COMMIT40.match(str(rev)):
            problems.append(
                message(
                    "artifacts",
                    "revision {rev!r} is not a 40-hex commit: a branch or tag can move",
                    rev=rev,
                )
            )
        if problems and pinned_by is None:
            why = message("artifacts", "adapter {problems}", problems=problems)
            hazards.append(_hazard("adapter_base_revision_missing", f.path, why))
    return hazards


def _hazard(hid: HazardId, path: str | None, why: Message) -> dict[str, Any]:
    """A lock-in hazard (a stop factor): its id, file, detail in English and as a message."""
    spec = {
        "adapter_base_revision_missing": "E5",
        "weights_without_optimizer_state": "A2, E5",
        "unknown_format": "E5",
        "dangerous_pickle": "A7",
        "untrusted_pickle_import": "A7",
        "pickle_frame_mismatch": "A7",
        "pickle_not_scanned_too_large": "A7",
        "archive_not_scanned": "A7, E5",
        "corrupt_file": "A4, E2",
        "egress_throttled": "E5, V1",
        "declared_artifact_missing": "E3",
    }[hid]
    return {
        "id": hid,
        "path": path,
        "detail": english(why),
        "stop_factor": True,
        "spec": spec,
        "message": why,
    }


def _best_unit(det: formats.Detection) -> formats.Unit | None:
    units = [u for u in det.units if u.kind != "weights"] or det.units
    if not units:
        return None
    return max(units, key=lambda u: (u.resumable, u.step if u.step is not None else -1, u.path))


def _layers(
    det: formats.Detection,
    manifests: list[tuple[str, dict[str, Any]]],
    plan: ExportPlan | None,
) -> dict[str, list[dict[str, Any]]]:
    """The four E2 layers, each item found, missing or not applicable."""
    need_resume = plan.resumable_required if plan else True
    absent: Status = "missing" if need_resume else "not_applicable"
    why = None if need_resume else message("artifacts", "the plan does not require resumption")
    return {
        "data": _data_layer(det, absent, why),
        "training": _training_layer(det, manifests, absent, why),
        "execution": _execution_layer(det, manifests),
        "provenance": _provenance_layer(det, manifests),
    }


def _role_path(det: formats.Detection, role: str) -> str | None:
    files = det.with_role(role)
    return files[-1].path if files else None


def _data_layer(
    det: formats.Detection, resume_absent: Status, resume_why: Message | None
) -> list[dict[str, Any]]:
    best = _best_unit(det)
    checkpoints = [
        u
        for u in det.units
        if u.kind
        in ("hf_trainer_checkpoint", "torch_dcp", "deepspeed", "lightning_ckpt", "torch_checkpoint")
    ]
    weights_units = [u for u in det.units if u.kind in ("weights", "peft_adapter") and u.weights]
    final = weights_units[-1].weights if weights_units else (best.weights if best else None)

    return [
        _found("final_weights", final),
        _found(
            "intermediate_checkpoints",
            checkpoints[0].path if checkpoints else None,
            nmessage("artifacts", "{n} checkpoint", "{n} checkpoints", n=len(checkpoints)),
            absent=resume_absent,
            absent_detail=resume_why,
        ),
    ]


def _training_layer(
    det: formats.Detection,
    manifests: list[tuple[str, dict[str, Any]]],
    resume_absent: Status,
    resume_why: Message | None,
) -> list[dict[str, Any]]:
    best = _best_unit(det)
    optim = (best.optimizer_state if best and best.optimizer_state else None) or _role_path(
        det, "optimizer_state"
    )
    sched = (best.scheduler if best and best.scheduler else None) or _role_path(det, "scheduler")
    rng = _role_path(det, "rng_state")
    seed_src = None
    for f in det.with_role("training_config"):
        if f.details.get("seed") is not None:
            seed_src = f.path
    seed_val, seed_manifest = _manifest_value(manifests, "environment", "training", "seed")
    config = _role_path(det, "training_config")
    hyper, hyper_src = _manifest_value(manifests, "environment", "training", "hyperparameters")
    step_src = best.step_source if best and (best.step is not None or best.step_stored) else None
    precision = None
    for f in det.with_role("weights"):
        if isinstance(f.details.get("precision"), str):
            precision = f.details["precision"]
    manifest_precision, _ = _manifest_value(manifests, "precision")
    precision = manifest_precision or precision
    training = [
        _found("optimizer_state", optim, absent=resume_absent, absent_detail=resume_why),
        _found("scheduler", sched, absent=resume_absent, absent_detail=resume_why),
        _found(
            "random_seeds",
            rng or seed_src or (seed_manifest if seed_val is not None else None),
            absent=resume_absent,
            absent_detail=resume_why,
        ),
        _found("exact_config", config or (hyper_src if hyper else None)),
        _found(
            "step_epoch",
            step_src,
            message("artifacts", "step {step}", step=best.step)
            if best and best.step is not None
            else None,
            absent=resume_absent,
            absent_detail=resume_why,
        ),
    ]
    scaler = _role_path(det, "grad_scaler")
    if scaler or precision == "fp16":
        needs = message("artifacts", "fp16 training needs the loss scaler state")
        training.append(_found("grad_scaler", scaler, needs))
    else:
        if precision:
            why = message(
                "artifacts", "precision {precision}: no fp16 loss scaling", precision=precision
            )
        else:
            why = message("artifacts", "precision unknown: no fp16 loss scaling")
        training.append(_item("grad_scaler", "not_applicable", None, why))
    return training


def _execution_layer(
    det: formats.Detection, manifests: list[tuple[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    container, container_src = _manifest_value(manifests, "container_digest")
    driver, driver_src = _manifest_value(manifests, "environment", "execution", "driver_version")
    libs, libs_src = _manifest_value(manifests, "environment", "execution", "libraries")
    if not libs:
        for f in det.files.values():
            if f.details.get("transformers_version") or f.details.get("peft_version"):
                libs_src = f.path
                break
    return [
        _found("container_digest", container_src, _value(container)),
        _found("driver_version", driver_src, _value(driver)),
        _found("library_versions", libs_src),
    ]


def _provenance_layer(
    det: formats.Detection, manifests: list[tuple[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    base, base_src = _manifest_value(manifests, "base_model")
    if not base:
        for f in det.files.values():
            name = f.details.get("base_model_name_or_path") or f.details.get("name_or_path")
            if name:
                base, base_src = name, f.path
                break
    rev_src = None
    if isinstance(base, str) and _DIGEST.search(base):
        rev_src = base_src
    for f in det.with_role("adapter_config"):
        if _COMMIT40.match(str(f.details.get("revision") or "")):
            rev_src = rev_src or f.path
    dataset, dataset_src = _manifest_value(manifests, "dataset_snapshot")
    commit, commit_src = _manifest_value(manifests, "code_commit")
    metrics_src = _role_path(det, "metrics")
    if metrics_src is None:
        _, metrics_src = _manifest_value(
            manifests, "environment", "provenance", "evaluation_metrics"
        )
    return [
        _found("base_model_id", base_src, _value(base)),
        _found("base_model_revision", rev_src),
        _found("dataset_snapshot", dataset_src, _value(dataset)),
        _found("code_commit", commit_src, _value(commit)),
        _found("evaluation_metrics", metrics_src),
    ]


def _artifact_classes(
    det: formats.Detection, manifests: list[tuple[str, dict[str, Any]]]
) -> list[str]:
    """The A1 artifact classes present in the export."""
    present: set[str] = set()
    in_checkpoint = any(u.kind != "weights" and u.kind != "peft_adapter" for u in det.units)
    if det.with_role("adapter") or det.with_role("adapter_config"):
        present.add("adapters")
    if det.with_role("weights"):
        present.add("final_weights")
    if in_checkpoint:
        present.add("full_checkpoints")
    for role, cls in (
        ("optimizer_state", "optimizer_state"),
        ("tokenizer", "tokenizer"),
        ("training_config", "training_config"),
        ("metrics", "metrics"),
    ):
        if det.with_role(role):
            present.add(cls)
    if any(get(data, "environment", "execution") for _, data in manifests):
        present.add("environment_snapshot")
    return [c for c in ret.ARTIFACT_CLASSES if c in present]


def _retention_classes(policy: ret.LoadedPolicy, shown: str) -> dict[str, Any]:
    """Every retention class the policy defines, with the line it is defined at (A3)."""
    return {
        name: {
            "description": c.description,
            "lifetime_days": c.lifetime_days,
            "location": c.location,
            "encryption": c.encryption,
            "backup": c.backup,
            "restore_test_interval_days": c.restore_test_interval_days,
            "source": policy.at(policy.class_lines.get(name), shown),
        }
        for name, c in policy.policy.classes.items()
    }


def _artifact_rows(
    policy: ret.LoadedPolicy | None, present: list[str], shown: str | None
) -> list[dict[str, Any]]:
    """Every A1 artifact class: in the export or not, its retention class and where the
    policy says so (none: no retention decided)."""
    mapping = policy.policy.artifact_classes if policy is not None else {}
    rows = []
    for c in ret.ARTIFACT_CLASSES:
        cls = mapping.get(c)  # type: ignore[call-overload]
        where = policy.at(policy.mapping_lines.get(c), shown) if policy and cls else None
        rows.append(
            {"artifact_class": c, "present": c in present, "retention_class": cls, "source": where}
        )
    return rows


def _retention(
    policy: ret.LoadedPolicy | None,
    det: formats.Detection,
    manifests: list[tuple[str, dict[str, Any]]],
    root: Path | None = None,
) -> dict[str, Any]:
    present = _artifact_classes(det, manifests)
    klass, klass_src = _manifest_value(manifests, "retention_class")
    if policy is None:
        return {
            "policy": None,
            "questions": [
                {"id": k, "question": q, "status": "open", "answer": None, "source": None}
                for k, q in ret.A8_QUESTIONS.items()
            ],
            "artifact_classes_present": present,
            "uncovered": present,
            "manifest_class": klass,
            "manifest_class_defined": None,
            "notes": [
                "no retention.yaml: every A8 question is open (gpudecide init writes a template)"
            ],
            "key_custody": None,
            "key_custody_source": None,
            "artifact_classes": _artifact_rows(None, present, None),
            "retention_classes": {},
        }
    mapping = policy.policy.artifact_classes
    uncovered = [c for c in present if c not in mapping]
    shown = ev.shown_path(policy.path, root)
    custody = policy.policy.questions.key_custody
    return {
        "policy": shown,
        "questions": policy.answers(shown),
        "key_custody": custody,
        "key_custody_source": policy.at(policy.lines.get("key_custody"), shown)
        if custody is not None
        else None,
        "artifact_classes": _artifact_rows(policy, present, shown),
        "retention_classes": _retention_classes(policy, shown),
        "artifact_classes_present": present,
        "classes": {
            c: {
                "retention_class": mapping[c],
                "lifetime_days": policy.policy.classes[mapping[c]].lifetime_days,
                "restore_test_interval_days": policy.policy.classes[
                    mapping[c]
                ].restore_test_interval_days,
            }
            for c in present
            if c in mapping
        },
        "uncovered": uncovered,
        "manifest_class": klass,
        "manifest_class_source": klass_src,
        "manifest_class_defined": (klass in policy.policy.classes) if klass else None,
        "notes": [],
    }


def _egress_figures(eg: remote.Egress, plan: ExportPlan | None) -> dict[str, Any]:
    rate = eg.bytes_per_second
    run_bytes = int(plan.run_size_gb * 1e9) if plan and plan.run_size_gb else None
    basis = "plan.run_size_gb" if run_bytes else "export size (no run_size_gb in the plan)"
    target = run_bytes or eg.bytes
    window = eg.window_hours(target)
    return {
        "source": eg.source,
        "bytes": eg.bytes,
        "files": len(eg.files),
        "seconds": round(eg.seconds, 4),
        "list_seconds": round(eg.list_seconds, 4),
        "streams": eg.streams,
        "throughput_mb_s": round(rate / 1e6, 3) if rate else None,
        "run_bytes": target,
        "extrapolated_from": basis,
        "migration_window_hours": round(window, 6) if window is not None else None,
        "max_migration_hours": plan.max_migration_hours if plan else None,
        "per_file": eg.per_file,
        "note": "one short sample: repeat at the time of day the migration would run",
    }


def _input_refs(paths: list[Path], root: Path | None) -> list[ev.InputRef]:
    return [ev.input_ref(p, root) for p in paths]


def _export_refs(
    export: Path, digests: list[hashing.FileDigest], root: Path | None
) -> list[ev.InputRef]:
    refs = []
    for d in digests:
        p = export / d.path
        refs.append(ev.InputRef(path=ev.shown_path(p, root), sha256=d.sha256, size=d.size))
    return refs


@dataclass
class _Inputs:
    """Validated inputs of one audit."""

    plan: ExportPlan | None
    policy_path: Path | None
    policy: ret.LoadedPolicy | None


def _load_inputs(
    plan_path: Path | None, retention_path: Path | None, workspace_root: Path | None
) -> _Inputs:
    """Every input is validated before anything is copied or written."""
    plan = load_plan(plan_path) if plan_path is not None else None
    if retention_path is None and plan is not None and plan.retention and plan_path is not None:
        retention_path = plan_path.parent / plan.retention
    policy_path = ret.find(retention_path, workspace_root)
    policy = ret.load(policy_path) if policy_path is not None else None
    return _Inputs(plan, policy_path, policy)


def _collect(
    export: Path,
    source: str | None,
    storage_options: dict[str, Any] | None,
    streams: int,
    workers: int | None,
    on_bytes: ProgressFn | None,
) -> tuple[remote.Egress | None, list[hashing.FileDigest], list[hashing.Skipped]]:
    """Copy from `source` (measuring egress) or hash the local folder."""
    if source is not None:
        egress = remote.fetch(
            source, export, storage_options or {}, streams=streams, on_bytes=on_bytes
        )
        return egress, egress.files, egress.skipped
    if not export.exists():
        raise InputError("no such directory", path=export)
    if not export.is_dir():
        raise InputError("not a directory", path=export, hint="audit a folder (the export)")
    tree = hashing.hash_tree(export, workers=workers, on_bytes=on_bytes)
    return None, tree.files, tree.skipped


def _hazards(
    det: formats.Detection,
    manifests: list[tuple[str, dict[str, Any]]],
    plan: ExportPlan | None,
    digests: list[hashing.FileDigest],
) -> list[dict[str, Any]]:
    """Hazards from the files, the adapters, resumability and the plan's declared files."""
    hazards: list[dict[str, Any]] = []
    for f in det.findings:
        # format findings carry hazard ids too; an id outside the contract is a bug here
        if f.id not in get_args(HazardId):
            raise ValueError(f"format finding with an unknown hazard id {f.id!r}")
        hazards.append(_hazard(cast(HazardId, f.id), f.path, f.why))
    base_pin, _ = _manifest_value(manifests, "base_model")
    pinned_by = None
    if isinstance(base_pin, str) and _DIGEST.search(base_pin):
        pinned_by = base_pin
    hazards += _adapter_hazards(det, pinned_by)
    need_resume = plan.resumable_required if plan else True
    weights = det.with_role("weights")
    if weights and not det.resumable and need_resume:
        why = message(
            "artifacts",
            "weights without optimizer state and step in one checkpoint: inference only, "
            "training cannot continue (A2)",
        )
        hazards.append(_hazard("weights_without_optimizer_state", weights[0].path, why))
    if plan is not None:
        names = [d.path for d in digests]
        for pattern in plan.expected_files:
            if not any(fnmatch.fnmatchcase(n, pattern) for n in names):
                why = message("artifacts", "no file matches {pattern!r}", pattern=pattern)
                hazards.append(_hazard("declared_artifact_missing", pattern, why))
    return hazards


def _egress_hazard(
    egress: remote.Egress | None, plan: ExportPlan | None, source: str | None
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Egress figures and, when the plan's migration window is exceeded, its hazard."""
    if egress is None:
        return None, []
    fig = _egress_figures(egress, plan)
    window = fig["migration_window_hours"]
    limit = plan.max_migration_hours if plan else None
    if limit is None or window is None or window <= limit:
        return fig, []
    why = message(
        "artifacts",
        "{speed} MB/s measured: moving {gb:.3f} GB takes {hours:.2f} h, over the plan's {limit} h",
        speed=fig["throughput_mb_s"],
        gb=fig["run_bytes"] / 1e9,
        hours=window,
        limit=limit,
    )
    shown = remote.shown_url(source) if source is not None else None
    return fig, [_hazard("egress_throttled", shown, why)]


def _custody_notes(policy: ret.LoadedPolicy | None) -> list[Message]:
    """Who sees the keys, said in words but not as one of the four values the decision
    compares (or the other way round) (A8)."""
    if policy is None:
        return []
    q = policy.policy.questions
    words = bool(q.key_access and q.key_access.strip())
    if words and q.key_custody is None:
        return [
            message(
                "artifacts",
                "{policy} says who sees the keys in words only: set questions.key_custody "
                "(team, provider, shared or unknown) so that the decision can compare it with "
                "the isolation answers of every option (A8)",
                policy=policy.path.name,
            )
        ]
    if not words and q.key_custody not in (None, "unknown"):
        return [
            message(
                "artifacts",
                "{policy} says key_custody {custody} but not where that is written down: "
                "answer questions.key_access with the contract clause or runbook (A8)",
                policy=policy.path.name,
                custody=q.key_custody,
            )
        ]
    return []


def _notes(
    det: formats.Detection, skipped: list[hashing.Skipped], policy: ret.LoadedPolicy | None
) -> list[Message]:
    """What a reader must know beyond the hazards."""
    notes: list[Message] = [
        message("artifacts", "{path}: not audited ({reason})", path=s.path, reason=s.why)
        for s in skipped
    ]
    notes += _custody_notes(policy)
    for report in det.files.values():
        if report.details.get("library_classes"):
            classes = ", ".join(report.details["library_classes"][:4])
            notes.append(
                message(
                    "artifacts",
                    "{path}: loading it constructs {classes}; torch.load(weights_only=True) "
                    "refuses it; read it only where that library is trusted",
                    path=report.path,
                    classes=classes,
                )
            )
    if any(u.kind == "peft_adapter" or "PEFT" in " ".join(u.notes) for u in det.units):
        notes.append(
            message(
                "artifacts",
                "an adapter is usable only with the exact base model it was trained on (E5)",
            )
        )
    notes.append(
        message(
            "artifacts",
            "A4: hashes prove integrity, not that the artifacts load: restore them and continue "
            "training elsewhere (E1)",
        )
    )
    return notes


# The summary's parts joined as the English has always joined them; a template of fields
# alone, passed as a variable so that it stays out of the catalogues.
_SUMMARY = "{head}; {hazards}; {missing}; {open}"


def _verdict(
    det: formats.Detection,
    hazards: list[dict[str, Any]],
    layers: dict[str, list[dict[str, Any]]],
    retention: dict[str, Any],
) -> tuple[ev.Verdict, Message, list[str], dict[str, Any] | None]:
    """Verdict, summary line, missing E2 items and the unit training resumes from."""
    best = _best_unit(det)
    resumable_from = None
    if best is not None and best.resumable:
        resumable_from = {"path": best.path, "step": best.step, "epoch": best.epoch}
    missing = [
        f"{layer}.{i['name']}"
        for layer, items in layers.items()
        for i in items
        if i["status"] == "missing"
    ]
    open_q = [q["id"] for q in retention["questions"] if q["status"] == "open"]
    verdict: ev.Verdict = "fail" if hazards else ("warn" if missing or open_q else "pass")
    if resumable_from:
        head = message(
            "artifacts",
            "resumable from {path} (step {step})",
            path=resumable_from["path"],
            step=resumable_from["step"],
        )
    elif det.with_role("weights"):
        head = message("artifacts", "weights only: not resumable")
    else:
        head = message("artifacts", "no model weights found")
    summary = message(
        "artifacts",
        _SUMMARY,
        head=head,
        hazards=nmessage("artifacts", "{n} hazard", "{n} hazards", n=len(hazards)),
        missing=nmessage(
            "artifacts", "{n} E2 item missing", "{n} E2 items missing", n=len(missing)
        ),
        open=nmessage("artifacts", "{n} A8 question open", "{n} A8 questions open", n=len(open_q)),
    )
    return verdict, summary, missing, resumable_from


def run(
    export: Path,
    *,
    plan_path: Path | None = None,
    source: str | None = None,
    storage_options: dict[str, Any] | None = None,
    retention_path: Path | None = None,
    workspace_root: Path | None = None,
    streams: int = 4,
    workers: int | None = None,
    on_bytes: ProgressFn | None = None,
    option: str | None = None,
    from_vendor: bool = False,
) -> AuditResult:
    """Audit an export folder (or copy it from `source` into `export` first); `option`: the
    id of the option the export came from (its hazards stop that option), `from_vendor`:
    that option's vendor produced the export (its contour is the vendor's)."""
    inputs = _load_inputs(plan_path, retention_path, workspace_root)
    plan = inputs.plan
    egress, digests, skipped = _collect(export, source, storage_options, streams, workers, on_bytes)
    det = formats.detect(export, [(d.path, d.size) for d in digests])
    manifests = _read_manifests(export, det)
    hazards = _hazards(det, manifests, plan, digests)
    egress_fig, egress_hazards = _egress_hazard(egress, plan, source)
    hazards += egress_hazards
    layers = _layers(det, manifests, plan)
    retention = _retention(inputs.policy, det, manifests, workspace_root)
    verdict, summary_msg, missing, resumable_from = _verdict(det, hazards, layers, retention)
    texts = record_texts(summary_msg, _notes(det, skipped, inputs.policy))
    summary, notes = texts.summary, texts.notes
    figures: dict[str, Any] = {
        "export": ev.shown_path(export, workspace_root),
        "source": remote.shown_url(source) if source is not None else None,
        "file_count": len(digests),
        "total_bytes": sum(d.size for d in digests),
        "skipped": [{"path": s.path, "reason": s.reason} for s in skipped],
        "formats": det.formats(),
        "units": [u.as_dict() for u in det.units],
        "resumable": det.resumable,
        "resumable_from": resumable_from,
        "layers": layers,
        "missing": missing,
        "hazards": hazards,
        "stop_factor": bool(hazards),
        "egress": egress_fig,
        "retention": retention,
        "plan": str(plan_path) if plan_path else None,
        "verdict": verdict,
        "summary": summary,
        "notes": notes,
        "messages": texts.messages,
    }
    if option is not None:
        figures["option"] = option
    figures["contour"] = {
        "executor": None,
        "storage": figures["source"] or figures["export"],
        "artifacts": "vendor_export" if option is not None and from_vendor else "produced_here",
    }
    # The model is the contract of the record's shape: a figure it does not know, or one
    # missing, is a bug here, never a record written in another shape.
    model = AuditFigures.model_validate(figures)
    used = [p for p in (plan_path, inputs.policy_path) if p is not None]
    refs = _input_refs(used, workspace_root)
    refs += _export_refs(export, digests, workspace_root)
    record = ev.Evidence(
        kind="audit",
        title=f"Export audit of {PurePosixPath(export.resolve()).name}",
        spec_ids=SPEC_IDS,
        verdict=verdict,
        summary=summary,
        figures=figures,
        notes=notes,
        inputs=refs,
    )
    return AuditResult(figures=figures, record=record, model=model)
