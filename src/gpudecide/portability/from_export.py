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
import shutil
from pathlib import Path
from typing import Any

from gpudecide import evidence as ev
from gpudecide.artifacts import audit
from gpudecide.errors import InputError
from gpudecide.message import Message, english, message, record_texts
from gpudecide.portability import checkpoint as ck
from gpudecide.portability.figures import (
    AuditFigures,
    ExportTestFigures,
    RecordMessages,
    Throughput,
)
from gpudecide.portability.scenario import (
    SPEC_IDS,
    ExportTestResult,
    ExportTestSetup,
    RunState,
    compare_metrics,
    job_failure,
    step_plan,
    step_record,
    verdict_of,
)
from gpudecide.portability.texts import as_written, figure

__all__ = [
    "run_from_export",
]


def _own_checkpoint(export: Path) -> Path | None:
    """The highest-step checkpoint of the tool's own format in the export, if any."""
    found = ck.list_checkpoints(export)
    if export.name.startswith(ck.PREFIX):
        found.append((0, export))
    for _step, path in reversed(found):
        state = path / ck.TRAINER_STATE
        try:
            if json.loads(state.read_text(encoding="utf-8")).get("format") == ck.FORMAT:
                return path
        except (OSError, ValueError):
            continue
    return None


def _reference(export: Path) -> dict[str, float] | None:
    """Final loss / eval_loss of the producer's uninterrupted run (metrics.jsonl), if any."""
    log = export / "metrics.jsonl"
    if not log.is_file():
        return None
    rows = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines() if x.strip()]
    if not rows:
        return None
    out = {"loss": float(rows[-1]["loss"])}
    evals = [r["eval_loss"] for r in rows if "eval_loss" in r]
    if evals:
        out["eval_loss"] = float(evals[-1])
    out["_step"] = int(rows[-1]["step"])
    return out


def _resume(ctx: RunState, export: Path, checkpoint: Path) -> dict[str, Any]:
    setup = ctx.setup
    config = json.loads((checkpoint / ck.CONFIG).read_text(encoding="utf-8"))
    config["device"] = setup.resume_device or setup.device
    config["steps"] = max(int(config.get("steps", 0)), setup.plan.model.steps)
    rel = checkpoint.relative_to(export).as_posix() if checkpoint != export else "."
    spec = {
        "action": "resume",
        "config": config,
        "workdir": str(ctx.restore),
        "storage": str(export.parent.resolve()),
        "export_name": export.name,
        "checkpoint": rel,
    }
    outcome = setup.executor.submit(spec, ctx.control, "resume")
    ctx.jobs.append(outcome)
    ctx.resume = outcome.result
    return {"outcome": outcome, "config": config}


def run_from_export(setup: ExportTestSetup, export: Path) -> ExportTestResult:
    """Audit `export`, then restore, resume and compare where the format allows."""
    if not export.is_dir():
        raise InputError("not a directory", path=export, hint="--from-export takes a folder")
    found = audit.run(export, workspace_root=setup.workspace_root)
    ctx = RunState(setup)
    try:
        step_plan(ctx)
        for name in ("train", "export", "delete"):
            ctx.steps[name].tell(None, [message("portability", "done by the export's producer")])
        hazards = [_hazard(h) for h in found.figures["hazards"]]
        reasons = [english(h) for h in hazards]
        _resume_step(ctx, export, reasons, found)
        tput = step_record(ctx)
    finally:
        if not setup.keep_work:
            shutil.rmtree(setup.work, ignore_errors=True)
    ctx.reasons = reasons + ctx.reasons
    ctx.reason_messages = hazards + ctx.reason_messages
    verdict: ev.Verdict = "fail" if reasons else verdict_of(list(ctx.steps.values()))
    typed = _figures(ctx, export, found.figures, tput, verdict)
    summary = _summary(setup.plan.option, export.name, verdict, ctx.reason_messages)
    note = message("portability", "steps 1-3 were done by the export's producer; only 5-6 ran here")
    texts = record_texts(summary, [note])
    typed.summary = texts.summary[:400]
    typed.messages = RecordMessages.model_validate(texts.messages)
    figures = ev.relative_figures(typed.model_dump(mode="json"), setup.workspace_root)
    record = ev.Evidence(
        kind="export_test",
        title=f"Export acceptance test of option {setup.plan.option} (given export)",
        spec_ids=SPEC_IDS,
        verdict=verdict,
        summary=figures["summary"],
        figures=figures,
        notes=texts.notes,
        inputs=[ev.input_ref(setup.plan_path, setup.workspace_root)],
    )
    return ExportTestResult(figures=figures, record=record)


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
    return ExportTestFigures(
        option=setup.plan.option,
        verdict=verdict,
        from_export=str(export),
        plan=str(setup.plan_path),
        plan_sha256=ctx.plan_sha256,
        checkpoint_step=res.get("resumed_at_step"),
        resumed_at_step=res.get("resumed_at_step"),
        final_metrics=res.get("final_metrics"),
        reference_metrics={k: v for k, v in (reference or {}).items() if k != "_step"} or None,
        tolerance=setup.plan.tolerance.model_dump(),
        steps=[s.as_figures() for s in ctx.steps.values()],
        bytes_exported=0,
        export_gbps=None,
        restore_gbps=tput.restore.gbps if tput.restore else None,
        throughput=tput,
        manual_actions=list(setup.plan.manual.actions),
        closed_formats=list(setup.plan.manual.closed_formats),
        restored_by_hand=list(setup.plan.manual.restored_by_hand),
        executor=setup.executor.name,
        audit=AuditFigures(hazards=audited["hazards"], summary=audited["summary"]),
        jobs=[j.as_dict() for j in ctx.jobs],
        reasons=ctx.reasons,
        reason_messages=ctx.reason_messages,
    )


def _hazard(h: dict[str, Any]) -> Message:
    """An audit hazard as a reason of the verdict (its own message when the audit gave one)."""
    detail = h.get("message") or as_written(str(h["detail"]))
    return message("portability", "audit: {id}: {detail}", id=h["id"], detail=detail)


def _summary(option: str, name: str, verdict: str, reasons: list[Message]) -> Message:
    """The summary of a test on someone else's export."""
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
    }
    outcome = ctx.setup.executor.submit(spec, ctx.control, "resume")
    ctx.jobs.append(outcome)
    ctx.resume = res = outcome.result or {}
    s.figures = {"job": outcome.as_dict(), "format": "hf_trainer_checkpoint"}
    problem = job_failure(outcome)
    if problem:
        s.tell("fail", [message("portability", "cannot resume: {problem}", problem=problem)])
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
            s.tell("fail", [message("portability", "cannot resume: {problem}", problem=problem)])
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
