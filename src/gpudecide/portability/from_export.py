"""Steps 5-6 of the export test on an export someone else produced (`--from-export DIR`).

The export is audited first (`gpudecide.artifacts.audit`: weights only, missing RNG state,
adapter without a pinned base, closed formats); every hazard it finds becomes a reason in
the verdict. Then, for the tool's own checkpoint format, a fresh job restores the folder
into an empty working folder, verifies it, resumes at the checkpoint's step and trains to
the plan's last step; when the export carries the producer's uninterrupted `metrics.jsonl`
the final metrics are compared with it within the plan's tolerance. Other formats (a
Hugging Face Trainer checkpoint is resumed with transformers' Trainer when it is installed:
the model built from its config.json (no remote code), synthetic token ids as data (the
export carries none), two more steps; the check is that training continued from the
checkpoint's step, since no reference curve comes with such an export.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpudecide import evidence as ev
from gpudecide.artifacts import audit
from gpudecide.errors import InputError, excerpt
from gpudecide.fsutil import file_kind
from gpudecide.message import Message, english, message, record_texts
from gpudecide.portability import checkpoint as ck
from gpudecide.portability.config import TrainConfig
from gpudecide.portability.export import lint_given, manifest_figures
from gpudecide.portability.figures import (
    AuditFigures,
    ExportTestFigures,
    RecordMessages,
    Throughput,
)
from gpudecide.portability.lifecycle import marks_spec
from gpudecide.portability.scenario import (
    SPEC_IDS,
    ExportTestResult,
    ExportTestSetup,
    RunState,
    compare_metrics,
    contour_of,
    job_failure,
    rates,
    resume_problem,
    status_of,
    step_plan,
    step_record,
    verdict_of,
)
from gpudecide.portability.storage import KERNEL_ROOTS
from gpudecide.portability.texts import as_written, figure
from gpudecide.portability.throughput import not_measured
from gpudecide.textlines import split_lines

__all__ = [
    "MAX_EXPORT_FILES",
    "MAX_JSON_BYTES",
    "MAX_METRICS_BYTES",
    "MAX_STEP",
    "check_export_folder",
    "read_json_object",
    "read_metrics",
    "run_from_export",
]

# What an export's own files may hold before the test refuses them as not an export's: a
# metrics log of a million steps is ~200 MB; a trainer state or config is a few kB.
MAX_METRICS_BYTES = 256 << 20
MAX_JSON_BYTES = 16 << 20
MAX_EXPORT_FILES = 200_000
MAX_STEP = 10**9


def _refuse_kind(path: Path, mode: int) -> None:
    if stat.S_ISLNK(mode):
        raise InputError(
            "is a symbolic link (to {target}): an export's files are read as they are, links "
            "are not followed",
            path=path,
            field="--from-export",
            hint="copy the file itself into the export folder",
            target=excerpt(os.readlink(path)),
        )
    raise InputError(
        "is {file_kind}, not a regular file: not an export's file",
        path=path,
        field="--from-export",
        hint="an export holds folders and regular files only",
        file_kind=file_kind(mode),
    )


def check_export_folder(export: Path) -> None:
    """The given export is a folder on a disk of folders and regular files: a link (to
    /etc/passwd or anywhere), a FIFO or a device inside it is refused, before anything is
    read (exit 2, naming the first). Its metrics log is read and checked here too."""
    try:
        mode = os.stat(export).st_mode
    except OSError as exc:
        raise InputError(
            "cannot be read: {error}", path=export, field="--from-export", error=exc.strerror
        ) from None
    if not stat.S_ISDIR(mode):
        raise InputError(
            "not a directory",
            path=export,
            field="--from-export",
            hint="--from-export takes a folder",
        )
    real = os.path.realpath(export)
    if any(real == r or real.startswith(r + "/") for r in KERNEL_ROOTS):
        raise InputError(
            "is under {root}, the kernel's files: not an export",
            path=export,
            field="--from-export",
            hint="give the folder the export was received in",
            root=next(r for r in KERNEL_ROOTS if real == r or real.startswith(r + "/")),
        )
    seen = 0
    for folder, dirs, files in os.walk(export, followlinks=False):
        for name in sorted(dirs + files):
            path = Path(folder) / name
            st = os.lstat(path)
            if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                _refuse_kind(path, st.st_mode)
            seen += 1
            if seen > MAX_EXPORT_FILES:
                raise InputError(
                    "holds more than {n} files: not one run's export",
                    path=export,
                    field="--from-export",
                    n=MAX_EXPORT_FILES,
                )
    read_metrics(export / "metrics.jsonl")


def _read_small(path: Path, limit: int) -> str:
    """A regular file's text, at most `limit` bytes, never through a link."""
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        _refuse_kind(path, st.st_mode)
    if st.st_size > limit:
        raise InputError(
            "is {size} bytes, more than the {limit} such a file of an export holds",
            path=path,
            field="--from-export",
            size=st.st_size,
            limit=limit,
        )
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            "is not UTF-8 text (byte {at})", path=path, field="--from-export", at=exc.start
        ) from None


def read_json_object(path: Path) -> dict[str, Any]:
    """An export's JSON file that must hold one object (a trainer state, a config)."""
    text = _read_small(path, MAX_JSON_BYTES)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(
            "is not JSON: {error}",
            path=path,
            line=getattr(exc, "lineno", None),
            field="--from-export",
            error=str(exc).split(":")[0],
        ) from None
    if not isinstance(data, dict):
        raise InputError(
            "holds {kind}, not a JSON object",
            path=path,
            field="--from-export",
            kind=type(data).__name__,
        )
    return data


def _number(row: dict[str, Any], key: str, path: Path, line: int) -> float | None:
    value = row.get(key)
    if value is None and key not in row:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(
            "{key} is {value}, not a finite number",
            path=path,
            line=line,
            field=key,
            key=key,
            value=excerpt(value),
        )
    return float(value)


def read_metrics(path: Path) -> list[dict[str, float]]:
    """The producer's per-step metrics log (`metrics.jsonl`), checked line by line: each a
    JSON object with an integer `step` (increasing) and a finite `loss` (`eval_loss`
    finite when given). Empty when the export has none; anything else is an InputError
    naming the file and the line."""
    if not os.path.lexists(path):
        return []
    text = _read_small(path, MAX_METRICS_BYTES)
    rows: list[dict[str, float]] = []
    last = -1
    for i, raw in enumerate(split_lines(text), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except ValueError as exc:
            raise InputError(
                "line is not JSON: {error}",
                path=path,
                line=i,
                field="--from-export",
                error=str(exc).split(":")[0],
            ) from None
        if not isinstance(row, dict):
            raise InputError(
                "line holds {kind}, not a JSON object",
                path=path,
                line=i,
                field="--from-export",
                kind=type(row).__name__,
            )
        step = row.get("step")
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
            raise InputError(
                "step is {value}, not a whole number from 0 to {max}",
                path=path,
                line=i,
                field="step",
                value=excerpt(step),
                max=MAX_STEP,
            )
        if step <= last:
            raise InputError(
                "step {step} does not follow step {last}: the log is not one run's",
                path=path,
                line=i,
                field="step",
                step=step,
                last=last,
            )
        last = step
        loss = _number(row, "loss", path, i)
        if loss is None:
            raise InputError(
                "no loss on this line: the producer's curve cannot be compared",
                path=path,
                line=i,
                field="loss",
                hint="a metrics.jsonl line holds step and loss (eval_loss where measured)",
            )
        out = {"step": float(step), "loss": loss}
        evaluated = _number(row, "eval_loss", path, i)
        if evaluated is not None:
            out["eval_loss"] = evaluated
        rows.append(out)
    return rows


def _own_checkpoint(export: Path) -> Path | None:
    """The highest-step checkpoint of the tool's own format in the export, if any."""
    found = ck.list_checkpoints(export)
    if export.name.startswith(ck.PREFIX):
        found.append((0, export))
    for _step, path in reversed(found):
        state = path / ck.TRAINER_STATE
        if not state.is_file():
            continue
        if read_json_object(state).get("format") == ck.FORMAT:
            return path
    return None


def _reference(export: Path) -> dict[str, float] | None:
    """Final loss / eval_loss of the producer's uninterrupted run (metrics.jsonl), if any."""
    rows = read_metrics(export / "metrics.jsonl")
    if not rows:
        return None
    out = {"loss": rows[-1]["loss"]}
    evals = [r["eval_loss"] for r in rows if "eval_loss" in r]
    if evals:
        out["eval_loss"] = evals[-1]
    out["_step"] = rows[-1]["step"]
    return out


def _config(checkpoint: Path, setup: ExportTestSetup) -> dict[str, Any]:
    """The checkpoint's training config, run on to the plan's last step on the resume
    device; a config the trainer could not run is refused by its field (exit 2)."""
    path = checkpoint / ck.CONFIG
    config = read_json_object(path)
    config["device"] = setup.resume_device or setup.device
    steps = config.get("steps", 0)
    steps = steps if isinstance(steps, int) and not isinstance(steps, bool) else 0
    config["steps"] = max(steps, setup.plan.model.steps)
    try:
        TrainConfig.model_validate(config)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(
            "the checkpoint's training config is refused: {error}",
            path=path,
            field=".".join(str(p) for p in first["loc"]) or None,
            hint="a config the trainer would crash on, or not this tool's format",
            error=first["msg"],
        ) from None
    return config


def _resume(ctx: RunState, export: Path, checkpoint: Path) -> dict[str, Any]:
    setup = ctx.setup
    config = _config(checkpoint, setup)
    rel = checkpoint.relative_to(export).as_posix() if checkpoint != export else "."
    spec = {
        "action": "resume",
        "config": config,
        "workdir": str(ctx.restore),
        "storage": str(export.parent.resolve()),
        "export_name": export.name,
        "checkpoint": rel,
        "marks": marks_spec(ctx.control, setup.run_id, "resume"),
    }
    outcome = setup.executor.submit(spec, ctx.control, "resume")
    ctx.jobs.append(outcome)
    ctx.resume = outcome.result
    return {"outcome": outcome, "config": config}


def run_from_export(setup: ExportTestSetup, export: Path) -> ExportTestResult:
    """Audit `export`, then restore, resume and compare where the format allows."""
    check_export_folder(export)
    export = export.resolve()  # the record names it relative to the workspace
    found = audit.run(export, workspace_root=setup.workspace_root)
    ctx = RunState(setup)
    manifest_path, ctx.manifest_lint = lint_given(export, setup.workspace_root)
    ctx.manifest = manifest_figures(manifest_path)
    try:
        step_plan(ctx)
        for name in ("train", "export", "delete"):
            ctx.steps[name].tell(None, [message("portability", "done by the export's producer")])
        hazards = [_hazard(h) for h in found.figures["hazards"]]
        reasons = [english(h) for h in hazards]
        _resume_step(ctx, export, reasons, found)
        tput = step_record(ctx, _vendor_sample(setup))
        ctx.read_marks()
    finally:
        if not setup.keep_work:
            shutil.rmtree(setup.work, ignore_errors=True)
    ctx.reasons = reasons + ctx.reasons
    ctx.reason_messages = hazards + ctx.reason_messages
    # The audit's hazards are the export's own findings: a failure whatever else happened.
    verdict: ev.Verdict = "fail" if reasons else verdict_of(list(ctx.steps.values()))
    typed = _figures(ctx, export, found.figures, tput, verdict)
    summary = _summary(setup.option, export.name, verdict, ctx.reason_messages)
    note = message("portability", "steps 1-3 were done by the export's producer; only 5-6 ran here")
    texts = record_texts(summary, [note])
    typed.summary = texts.summary[:400]
    typed.messages = RecordMessages.model_validate(texts.messages)
    figures = ev.relative_figures(typed.model_dump(mode="json"), setup.workspace_root)
    record = ev.Evidence(
        kind="export_test",
        title=f"Export acceptance test of option {setup.option} (given export)",
        spec_ids=SPEC_IDS,
        verdict=verdict,
        summary=figures["summary"],
        figures=figures,
        notes=texts.notes,
        inputs=[ev.input_ref(setup.plan_path, setup.workspace_root)],
    )
    return ExportTestResult(figures=figures, record=record)


def _vendor_sample(setup: ExportTestSetup) -> dict[str, Any]:
    """A given export was made elsewhere: copying it from a local folder says nothing of the
    vendor's egress, which `gpudecide audit --source` measures from the vendor's storage."""
    floor = setup.plan.throughput_floor_mb * 1_000_000
    why = message(
        "portability",
        "the export was received as a folder: its copy here says nothing of the vendor's egress",
    )
    command = f"gpudecide audit --source URL_OF_THE_VENDOR_EXPORT --option {setup.option}"
    return not_measured(floor, why, command)


def _figures(
    ctx: RunState,
    export: Path,
    audited: dict[str, Any],
    tput: Throughput,
    verdict: ev.Verdict,
) -> ExportTestFigures:
    """The record's figures: the resume against the producer's curve, the audit's hazards;
    nothing was trained or exported here (no curves, no bytes exported)."""
    setup, res = ctx.setup, ctx.resume or {}
    reference = _reference(export)
    reference_metrics = {k: v for k, v in (reference or {}).items() if k != "_step"} or None
    # Compared only when the producer's curve reaches the step the resume ended at.
    compared = (
        compare_metrics(setup.plan, reference_metrics or {}, res.get("final_metrics") or {})
        if reference
        and res.get("final_metrics")
        and reference.get("_step") == res.get("final_step")
        else []
    )
    return ExportTestFigures(
        option=setup.option,
        verdict=verdict,
        status=status_of(verdict),
        from_export=str(export),
        plan=str(setup.plan_path),
        plan_sha256=ctx.plan_sha256,
        checkpoint_step=res.get("resumed_at_step"),
        resumed_at_step=res.get("resumed_at_step"),
        final_metrics=res.get("final_metrics"),
        reference_metrics=reference_metrics,
        **({"metric_comparison": compared} if compared else {}),
        tolerance=setup.plan.tolerance.model_dump(),
        steps=[s.as_figures() for s in ctx.steps.values()],
        bytes_exported=0,
        **rates(tput, setup.plan),
        manual_actions=list(setup.plan.manual.actions),
        closed_formats=list(setup.plan.manual.closed_formats),
        restored_by_hand=list(setup.plan.manual.restored_by_hand),
        executor=setup.executor.name,
        contour=contour_of(ctx, str(export.resolve()), "vendor_export"),
        audit=AuditFigures(hazards=audited["hazards"], summary=audited["summary"]),
        jobs=[j.as_dict() for j in ctx.jobs],
        reasons=ctx.reasons,
        reason_messages=ctx.reason_messages,
        manifest_lint=ctx.manifest_lint,
        **({"manifest": ctx.manifest} if ctx.manifest else {}),
        lifecycle=ctx.lifecycle,
    )


def _hazard(h: dict[str, Any]) -> Message:
    """An audit hazard as a reason of the verdict (its own message when the audit gave one)."""
    detail = h.get("message") or as_written(str(h["detail"]))
    return message("portability", "audit: {id}: {detail}", id=h["id"], detail=detail)


def _summary(option: str, name: str, verdict: str, reasons: list[Message]) -> Message:
    """The summary of a test on someone else's export."""
    if verdict == "info":
        return message(
            "portability",
            "option {option}: the test of the export from {name} could not run (no verdict on "
            "the option): {reason}",
            option=option,
            name=name,
            reason=reasons[0] if reasons else as_written(""),
        )
    if verdict != "fail":
        return message(
            "portability",
            "option {option}: export from {name} restored and resumed",
            option=option,
            name=name,
        )
    return message(
        "portability",
        "option {option}: export from {name} FAILED: {reason}",
        option=option,
        name=name,
        reason=reasons[0] if reasons else as_written(""),
    )


def _hf_unit(audit_figures: dict[str, Any]) -> dict[str, Any] | None:
    """The Hugging Face Trainer checkpoint with the highest step the audit found."""
    units = [u for u in audit_figures["units"] if u["kind"] == "hf_trainer_checkpoint"]
    units.sort(key=lambda u: -1 if u["step"] is None else u["step"])
    return units[-1] if units else None


def _resume_hf(ctx: RunState, export: Path, unit: dict[str, Any], s: Any) -> None:
    import importlib.util

    if importlib.util.find_spec("transformers") is None:
        missing = message(
            "portability",
            "a Hugging Face Trainer checkpoint: transformers is not installed to resume it",
        )
        s.tell("fail", [missing])
        return
    spec = {
        "action": "resume",
        "format": "hf_trainer",
        "workdir": str(ctx.restore),
        "storage": str(export.parent.resolve()),
        "export_name": export.name,
        "checkpoint": unit["path"],
        "device": ctx.setup.resume_device or ctx.setup.device,
        "extra_steps": 2,
        "marks": marks_spec(ctx.control, ctx.setup.run_id, "resume"),
    }
    outcome = ctx.setup.executor.submit(spec, ctx.control, "resume")
    ctx.jobs.append(outcome)
    ctx.resume = res = outcome.result or {}
    s.figures = {"job": outcome.as_dict(), "format": "hf_trainer_checkpoint"}
    problem = job_failure(outcome)
    if problem:
        s.tell(problem.kind, [resume_problem(problem)])
        return
    at, expected = res.get("resumed_at_step"), unit["step"]
    if at != expected:
        s.tell(
            "fail",
            [message("portability", "resumed at step {step}, expected {k}", step=at, k=expected)],
        )
        return
    done = message(
        "portability",
        "resumed with transformers' Trainer at step {step}, trained to {final}",
        step=at,
        final=res.get("final_step"),
    )
    s.tell("warn", [done, _NOT_COMPARED])


_NOT_COMPARED = message("portability", "no reference curve in the export: values not compared")


def _resume_step(ctx: RunState, export: Path, reasons: list[str], found: Any) -> None:
    with ctx.step("resume") as s:
        checkpoint = _own_checkpoint(export)
        hf = _hf_unit(found.figures) if checkpoint is None else None
        if hf is not None:
            _resume_hf(ctx, export, hf, s)
            return
        if checkpoint is None:
            unknown = message(
                "portability",
                "no checkpoint of a format this tool can resume (its own checkpoint-N with "
                "{state} format {format}, or a Hugging Face Trainer checkpoint with its "
                "config.json)",
                state=ck.TRAINER_STATE,
                format=ck.FORMAT,
            )
            s.tell("fail", [unknown])
            return
        run = _resume(ctx, export, checkpoint)
        problem = job_failure(run["outcome"])
        s.figures = {"job": run["outcome"].as_dict()}
        if problem:
            s.tell(problem.kind, [resume_problem(problem)])
            return
        _compare_given(ctx, export, s)


def _compare_given(ctx: RunState, export: Path, s: Any) -> None:
    """The resumed run against the producer's own uninterrupted curve, when it has one."""
    res = ctx.resume or {}
    reference = _reference(export)
    parts = [
        message(
            "portability",
            "resumed at step {step}, trained to {final}",
            step=res.get("resumed_at_step"),
            final=res.get("final_step"),
        )
    ]
    if reference is None or reference.get("_step") != res.get("final_step"):
        parts.append(
            message(
                "portability",
                "no reference curve to that step in the export: values not compared",
            )
        )
        s.tell("warn", parts)
        return
    status = "pass"
    for row in compare_metrics(ctx.setup.plan, reference, res.get("final_metrics", {})):
        if not row["within"]:
            status = "fail"
            parts.append(
                message(
                    "portability",
                    "{metric} {resumed:num} vs {reference:num}",
                    metric=row["metric"],
                    resumed=None if row["resumed"] is None else figure(row["resumed"], 4),
                    reference=None if row["reference"] is None else figure(row["reference"], 4),
                )
            )
    s.tell(status, parts)
