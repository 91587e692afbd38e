"""The export acceptance test, step by step, for real (SPEC E1, E3, E4, A2, A4).

    result = run_export_test(ExportTestSetup(plan=plan, plan_path=path, work=work, ...))
    result.figures["verdict"], result.record   # the --json body and the evidence record

Steps (each with UTC start/end, a status and a detail, in `figures["steps"]`):

1. plan      the plan's SHA-256 is taken before anything runs (E4)
2. train     a fresh job trains the model in the source "volume", checkpoints at the
             plan's step and runs on to the end: the reference curve (E3.1)
3. export    a run manifest is written and linted, the declared artifacts and E2 layers
             are checked, the run folder goes to storage hashed while copied (E3.2)
4. delete    the volume is removed and a listing confirms it is gone; with Slurm the
             training job's final sacct state is recorded (E3.3)
5. resume    a new job with an empty working folder restores the export, verifies every
             hash, loads it without transformation, asserts the step, trains to the end
             and the final metrics are compared with the reference within the plan's
             tolerance (E3.4, E4)
6. record    manual actions, closed formats, fields restored by hand, bytes moved,
             measured throughput (E3.5)

A failed step does not stop the later ones when they can still run: the record shows
every reason at once. The verdict is "fail" when any step failed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from gpudecide import evidence as ev
from gpudecide.fsutil import atomic_write_text, sha256_path
from gpudecide.marks.lifecycle import JobLifecycle
from gpudecide.message import Message, english, message, nmessage, record_texts
from gpudecide.portability import checkpoint as ck
from gpudecide.portability.executors import Executor, JobOutcome, last_lines
from gpudecide.portability.export import (
    check_export,
    manifest_figures,
    run_info,
    write_manifest,
)
from gpudecide.portability.figures import (
    ContourFigures,
    CurvePoint,
    EnvironmentBrief,
    Environments,
    ExportTestFigures,
    ModelFigures,
    RecordMessages,
    StepFigures,
    Throughput,
)
from gpudecide.portability.lifecycle import FOLDER as LIFECYCLE_FOLDER
from gpudecide.portability.lifecycle import marks_spec, read_lifecycle
from gpudecide.portability.plan import ExportTestPlan
from gpudecide.portability.storage import Storage, Transfer, shown_url
from gpudecide.portability.texts import (
    as_written,
    device_name,
    figure,
    joined,
    plain,
    step_name,
    tolerance,
)
from gpudecide.portability.throughput import (
    from_transfers,
    migration_window_hours,
    not_measured,
    probe,
    throughput_figures,
)
from gpudecide.portability.trainer import require_device

__all__ = [
    "SPEC_IDS",
    "STEP_NAMES",
    "TOOL_REASONS",
    "ExportTestResult",
    "ExportTestSetup",
    "JobProblem",
    "RunState",
    "RunStatus",
    "Status",
    "Step",
    "compare_metrics",
    "contour_of",
    "job_failure",
    "rates",
    "resume_problem",
    "run_export_test",
    "status_of",
    "step_delete",
    "step_export",
    "step_plan",
    "step_record",
    "step_resume",
    "step_train",
    "summary_message",
    "utc_now",
    "verdict_of",
]

SPEC_IDS = ["E1", "E2", "E3", "E4", "A2", "A4"]
# A step's status: `error` when the tool or the harness failed in it (no verdict on the
# option), the others as the step found the export.
Status = Literal["pass", "fail", "warn", "skip", "error"]
STEP_NAMES = ("plan", "train", "export", "delete", "resume", "record")
RunStatus = Literal["pass", "fail", "warn", "error"]


def utc_now() -> str:
    """Now, UTC, ISO 8601 with milliseconds and Z."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass
class Step:
    """One E3 step of the test."""

    name: str
    status: Status = "skip"
    started_at: str = ""
    finished_at: str = ""
    detail: str = ""
    figures: dict[str, Any] = field(default_factory=dict)
    # The detail as a message: the report and the commands render it in the reader's language.
    detail_message: Message | None = None

    def tell(self, status: Status | None, parts: list[Message]) -> None:
        """Set the detail from its parts (joined by "; "), English and message alike."""
        if status is not None:
            self.status = status
        self.detail_message = joined(parts)
        self.detail = english(self.detail_message)

    def as_figures(self) -> StepFigures:
        """The step as the record's `steps` hold it (its message and figures when it has
        them)."""
        extra: dict[str, Any] = {}
        if self.detail_message:
            extra["detail_message"] = self.detail_message
        if self.figures:
            extra["figures"] = self.figures
        return StepFigures(
            name=self.name,
            status=self.status,
            started_at=self.started_at,
            finished_at=self.finished_at,
            detail=self.detail,
            **extra,
        )


@dataclass
class ExportTestSetup:
    """Everything one run of the test needs; the CLI and the demo build it."""

    plan: ExportTestPlan
    plan_path: Path
    work: Path  # controller folder: job specs, results, the volume, the restore folder
    storage: Storage
    executor: Executor
    device: str = "cpu"
    resume_device: str | None = None
    workspace_root: Path | None = None
    run_id: str = ""
    # Test hooks (library only): how the volume is deleted, noise added after the resume's
    # load, files a vendor-style export leaves out. Defaults: the real thing, none, none.
    delete_volume: Callable[[Path], None] = shutil.rmtree
    perturb_resume: float = 0.0
    drop_from_export: tuple[str, ...] = ()
    keep_work: bool = False
    # The option the record is about: `--option`, else the plan's.
    option_id: str | None = None

    @property
    def option(self) -> str:
        """The option the test is of: the one named on the command line, else the plan's."""
        return self.option_id or self.plan.option


@dataclass
class ExportTestResult:
    """The figures (the --json body) and the evidence record built from them."""

    figures: dict[str, Any]
    record: ev.Evidence

    @property
    def passed(self) -> bool:
        """True when no step failed."""
        return bool(self.figures["verdict"] != "fail")


class RunState:
    """State shared by the steps of one run (the full test's and `from_export`'s)."""

    def __init__(self, setup: ExportTestSetup) -> None:
        self.setup = setup
        self.steps = {name: Step(name) for name in STEP_NAMES}
        self.reasons: list[str] = []
        self.reason_messages: list[Message] = []
        self.fails = 0  # reasons of failed steps, listed before those of steps in error
        self.jobs: list[JobOutcome] = []
        # Absolute: every job changes into a folder of its own and reads these from there.
        work = setup.work.resolve()
        self.volume = work / "volume"
        self.run_dir = self.volume / "run"
        self.restore = work / "restore"
        self.control = work / "control"
        self.train: dict[str, Any] | None = None
        self.resume: dict[str, Any] | None = None
        self.export: Transfer | None = None
        self.plan_sha256 = ""
        self.manifest_lint: list[dict[str, Any]] = []
        self.manifest: dict[str, Any] | None = None
        self.lifecycle: list[JobLifecycle] = []

    def read_marks(self) -> None:
        """The lifecycle the jobs marked (read before their folder goes)."""
        names = [j.name for j in self.jobs]
        self.lifecycle = read_lifecycle(self.control / LIFECYCLE_FOLDER, self.setup.run_id, names)

    @contextmanager
    def step(self, name: str) -> Iterator[Step]:
        """Run step `name` inside the block: its UTC times, and its detail among the reasons
        when it fails."""
        s = self.steps[name]
        s.started_at = utc_now()
        try:
            yield s
        finally:
            s.finished_at = utc_now()
            if s.status in ("fail", "error") and s.detail:
                reason = plain(
                    "{step}: {detail}",
                    step=step_name(name),
                    detail=s.detail_message or as_written(s.detail),
                )
                # A finding about the export before a failure of the tool, whatever the order.
                at = len(self.reasons) if s.status == "error" else self.fails
                self.fails += s.status == "fail"
                self.reason_messages.insert(at, reason)
                self.reasons.insert(at, english(reason))


def _config(ctx: RunState, device: str) -> dict[str, Any]:
    return ctx.setup.plan.model.train_config(device).model_dump()


def step_plan(ctx: RunState) -> None:
    """1. Hash the plan before anything runs."""
    with ctx.step("plan") as s:
        ctx.plan_sha256 = sha256_path(ctx.setup.plan_path)[0]
        p = ctx.setup.plan
        detail = message(
            "portability",
            "plan {plan} sha256 {sha}... fixed before training: {size} model, {steps:num} "
            "steps, checkpoint at {k}, tolerance {tolerance}",
            plan=ctx.setup.plan_path.name,
            sha=ctx.plan_sha256[:16],
            size=p.model.size,
            steps=p.model.steps,
            k=p.model.checkpoint_step,
            tolerance=_tolerance(p),
        )
        s.tell("pass", [detail])


def _tolerance(p: ExportTestPlan) -> Message:
    return tolerance(p.tolerance.relative, p.tolerance.absolute)


# Reasons a worker gives when the fault is its own (a bug, a spec it cannot read), not the
# export's: the test could not run, which says nothing about the option.
TOOL_REASONS = frozenset({"crashed", "bad_spec"})


@dataclass(frozen=True)
class JobProblem:
    """Why a job did not succeed: `fail` when it found something wrong with the export or
    the storage (a verdict on the option), `error` when the tool or the harness failed (a
    worker that died or crashed, a harness timeout): no verdict on the option."""

    kind: Literal["fail", "error"]
    why: Message


def _ended(outcome: JobOutcome) -> Message:
    """How a job without a result ended: the harness's time limit, a signal, a scheduler
    state, or its exit code."""
    code = outcome.returncode
    if outcome.state == "timeout":
        return message(
            "portability",
            "stopped by the harness at its time limit of {seconds:num} s",
            seconds=figure(float(outcome.timeout or 0.0), 3),
        )
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "?"
        return message("portability", "killed by signal {n} ({name})", n=-code, name=name)
    if outcome.executor == "slurm" and outcome.state:
        return message(
            "portability",
            "Slurm state {state}, exit code {code}",
            state=str(outcome.state),
            code=code,
        )
    return message("portability", "exit code {code}", code=code)


def _output(tail: str) -> Message:
    if not tail.strip():
        return message("portability", "it wrote no output")
    return message("portability", "the last lines of its output: {tail}", tail=tail)


def job_failure(outcome: JobOutcome) -> JobProblem | None:
    """Why a job did not succeed (None when it did): a job that wrote no result, or whose
    worker crashed, is an `error`; a reason the worker found in the export is a `fail`."""
    res = outcome.result
    if res is None:
        why = message(
            "portability",
            "the job ended without a result ({ended}); {output}",
            ended=_ended(outcome),
            output=_output(outcome.log_tail),
        )
        return JobProblem("error", why)
    if res.get("status") == "ok":
        return None
    reason = str(res.get("reason"))
    if reason in TOOL_REASONS:
        why = message(
            "portability",
            "the worker failed ({reason}), a fault of gpudecide, not of the export; {output}",
            reason=reason,
            output=_output(last_lines(str(res.get("detail") or ""))),
        )
        return JobProblem("error", why)
    detail = res.get("detail_message") or as_written(str(res.get("detail"))[-600:])
    return JobProblem("fail", plain("{reason}: {detail}", reason=reason, detail=detail))


def resume_problem(problem: JobProblem) -> Message:
    """The resume step's detail when its job did not succeed."""
    if problem.kind == "error":
        return message(
            "portability", "the resume job could not run: {problem}", problem=problem.why
        )
    return message("portability", "cannot resume: {problem}", problem=problem.why)


def step_train(ctx: RunState) -> None:
    """2. Train in the volume: checkpoint at the plan's step, reference run to the end."""
    with ctx.step("train") as s:
        spec = {
            "action": "train",
            "config": _config(ctx, ctx.setup.device),
            "output_dir": str(ctx.run_dir),
            "container_digest": ctx.setup.plan.identity.container_digest,
            "marks": marks_spec(ctx.control, ctx.setup.run_id, "train"),
        }
        outcome = ctx.setup.executor.submit(spec, ctx.control, "train")
        ctx.jobs.append(outcome)
        problem = job_failure(outcome)
        if problem:
            s.figures = {"job": outcome.as_dict()}
            if problem.kind == "error":
                why = message(
                    "portability", "training job could not run: {problem}", problem=problem.why
                )
            else:
                why = message("portability", "training job failed: {problem}", problem=problem.why)
            s.tell(problem.kind, [why])
            return
        ctx.train = outcome.result
        assert ctx.train is not None
        ckpt = ctx.train["checkpoints"][0]
        detail = nmessage(
            "portability",
            "{steps:num} steps on {device} ({parameters:num} parameters); checkpoint-{k} "
            "{bytes:num} byte written atomically in {seconds:num} s",
            "{steps:num} steps on {device} ({parameters:num} parameters); checkpoint-{k} "
            "{bytes:num} bytes written atomically in {seconds:num} s",
            count="bytes",
            steps=ctx.train["final_step"],
            device=device_name(ctx.setup.device),
            parameters=ctx.train["parameters"],
            k=ckpt["step"],
            bytes=ckpt["bytes"],
            seconds=round(float(ckpt["seconds"]), 3),
        )
        s.tell("pass", [detail])
        s.figures = {
            "job": outcome.as_dict(),
            "checkpoint_bytes": ckpt["bytes"],
            "checkpoint_write_seconds": ckpt["seconds"],
            "tokens_per_second": ctx.train["tokens_per_second"],
        }


def _vendor_trim(ctx: RunState, checkpoint: Path) -> None:
    """Leave files out as a vendor's export does, with sums consistent with what is left."""
    dropped = [n for n in ctx.setup.drop_from_export if (checkpoint / n).exists()]
    for name in dropped:
        (checkpoint / name).unlink()
    sums = checkpoint / ck.SUMS
    kept = [ln for ln in sums.read_text().splitlines() if ln.split("  ", 1)[-1] not in dropped]
    atomic_write_text(sums, "\n".join(kept) + "\n")


def step_export(ctx: RunState) -> None:
    """3. Manifest, lint, declared artifacts and layers; copy to storage, hashing."""
    with ctx.step("export") as s:
        if ctx.train is None:
            s.tell(None, [message("portability", "nothing to export: training failed")])
            return
        checkpoint = Path(ctx.train["checkpoints"][0]["path"])
        if ctx.setup.drop_from_export:
            _vendor_trim(ctx, checkpoint)
        info = run_info(ctx.setup.plan, ctx.setup.run_id, ctx.train, checkpoint)
        manifest_path, lint = write_manifest(ctx.run_dir, info, ctx.setup.workspace_root)
        ctx.manifest_lint = lint
        problems, warnings, notes = check_export(ctx.setup.plan, ctx.run_dir, manifest_path, lint)
        ctx.manifest = manifest_figures(manifest_path)
        ctx.export = ctx.setup.storage.put_dir(ctx.run_dir, ctx.setup.run_id)
        if ctx.manifest is not None:  # the manifest as it now lies in the storage
            ctx.manifest["path"] = f"{shown_url(ctx.export.target)}/{manifest_path.name}"
        by_path = {f.path: f.sha256 for f in ctx.export.files}
        manifest = json.loads(manifest_path.read_text())
        for f in manifest["files"]:
            if by_path.get(f["path"]) != f["sha256"]:
                problems.append(
                    message(
                        "portability",
                        "{path}: copy hash differs from the manifest",
                        path=f["path"],
                    )
                )
        s.figures = {"transfer": ctx.export.as_dict(), "manifest_lint": lint}
        head = message(
            "portability",
            "{files:num} files, {bytes:num} bytes to {target}, SHA-256 of each taken while copying",
            files=len(ctx.export.files),
            bytes=ctx.export.bytes,
            target=ctx.export.target,
        )
        status: Status = "fail" if problems else ("warn" if warnings else "pass")
        s.tell(status, [head, *problems, *warnings, *notes])


def step_delete(ctx: RunState) -> None:
    """4. Remove the volume; confirm by a listing (and the Slurm job's final state)."""
    with ctx.step("delete") as s:
        parent = ctx.volume.parent
        error = None
        try:
            ctx.setup.delete_volume(ctx.volume)
        except OSError as exc:  # a refused deletion is a finding, not a crash
            error = f"{type(exc).__name__}: {exc}"
        listing = sorted(os.listdir(parent)) if parent.is_dir() else []
        still = ctx.volume.exists() or ctx.volume.name in listing
        s.figures = {"volume": str(ctx.volume), "listing_after": listing}
        if error:
            s.figures["error"] = error
        train_job = next((j for j in ctx.jobs if j.name == "train"), None)
        state, job_id = None, train_job.job_id if train_job else None
        if train_job is not None and train_job.job_id:
            # A training job that could not run is the train step's error, not a finding here.
            state = train_job.state if ctx.train is not None else None
            s.figures["slurm_job"] = {"job_id": train_job.job_id, "sacct": train_job.sacct}
        if still:
            gone = message(
                "portability",
                "volume {volume} is still listed after deletion: {listing}",
                volume=str(ctx.volume),
                listing=str(listing),
            )
            s.tell("fail", [gone])
        elif state is not None and not str(state).startswith("COMPLETED"):
            ended = message(
                "portability", "training job ended {state}, not COMPLETED", state=str(state)
            )
            s.tell("fail", [ended])
        else:
            parts = [
                message("portability", "volume no longer listed in {parent}", parent=str(parent))
            ]
            if state:
                parts.append(
                    message(
                        "portability",
                        "Slurm job {job} final state {state}",
                        job=job_id,
                        state=str(state),
                    )
                )
            s.tell("pass", parts)


def compare_metrics(
    plan: ExportTestPlan, reference: dict[str, float], resumed: dict[str, float]
) -> list[dict[str, Any]]:
    """One row per plan metric: reference, resumed, differences, within tolerance."""
    rows = []
    for name in plan.metrics:
        ref, got = reference.get(name), resumed.get(name)
        if ref is None or got is None:
            rows.append({"metric": name, "reference": ref, "resumed": got, "within": False})
            continue
        diff = abs(got - ref)
        rows.append(
            {
                "metric": name,
                "reference": ref,
                "resumed": got,
                "abs_diff": diff,
                "rel_diff": diff / abs(ref) if ref else None,
                "within": plan.tolerance.allows(got, ref),
            }
        )
    return rows


def _structure(metrics: list[dict[str, Any]], after: int) -> list[tuple[int, tuple[str, ...]]]:
    return [(int(m["step"]), tuple(sorted(m))) for m in metrics if int(m["step"]) > after]


def _resume_checks(ctx: RunState, res: dict[str, Any]) -> list[Message]:
    plan = ctx.setup.plan
    k = plan.model.checkpoint_step
    problems = []
    if res.get("resumed_at_step") != k:
        problems.append(
            message(
                "portability",
                "resumed at step {step}, expected {k}",
                step=res.get("resumed_at_step"),
                k=k,
            )
        )
    if res.get("final_step") != plan.model.steps:
        problems.append(
            message(
                "portability",
                "stopped at step {step}, expected {k}",
                step=res.get("final_step"),
                k=plan.model.steps,
            )
        )
    assert ctx.train is not None
    if _structure(res.get("metrics", []), k) != _structure(ctx.train["metrics"], k):
        problems.append(
            message(
                "portability",
                "metric structure differs from the reference (steps or metric names)",
            )
        )
    for row in compare_metrics(plan, ctx.train["final_metrics"], res.get("final_metrics", {})):
        if not row["within"]:
            problems.append(_over_tolerance(row, plan))
    return problems


def _over_tolerance(row: dict[str, Any], plan: ExportTestPlan) -> Message:
    """A final metric outside the plan's tolerance, with the figures."""
    rel = row.get("rel_diff")
    return message(
        "portability",
        "{metric} {resumed:num} vs reference {reference:num}: {rel:num} relative, over the "
        "tolerance {tolerance}",
        metric=row["metric"],
        resumed=None if row["resumed"] is None else figure(row["resumed"], 4),
        reference=None if row["reference"] is None else figure(row["reference"], 4),
        rel=None if rel is None else figure(rel, 4),
        tolerance=_tolerance(plan),
    )


def step_resume(ctx: RunState) -> None:
    """5. A new job restores the export into an empty folder and continues training."""
    with ctx.step("resume") as s:
        if ctx.export is None or ctx.train is None:
            s.tell(None, [message("portability", "nothing to restore: the export did not happen")])
            return
        plan = ctx.setup.plan
        device = ctx.setup.resume_device or ctx.setup.device
        spec = {
            "action": "resume",
            "config": _config(ctx, device),
            "workdir": str(ctx.restore),
            "storage": ctx.setup.storage.url,
            "storage_options": ctx.setup.storage.options,
            "export_name": ctx.setup.run_id,
            "checkpoint": f"checkpoint-{plan.model.checkpoint_step}",
            "perturb": ctx.setup.perturb_resume,
            "container_digest": plan.identity.container_digest,
            "marks": marks_spec(ctx.control, ctx.setup.run_id, "resume"),
        }
        outcome = ctx.setup.executor.submit(spec, ctx.control, "resume")
        ctx.jobs.append(outcome)
        ctx.resume = res = outcome.result
        s.figures = {"job": outcome.as_dict(), "device": device}
        if res is not None and res.get("restore"):
            s.figures["restore"] = res["restore"]
        problem = job_failure(outcome)
        if problem:
            s.tell(problem.kind, [resume_problem(problem)])
            return
        assert res is not None
        problems = _resume_checks(ctx, res)
        head = message(
            "portability",
            "restored into an empty folder, hashes verified, resumed at step {step} on "
            "{device}, trained to {final}",
            step=res["resumed_at_step"],
            device=device_name(device),
            final=res["final_step"],
        )
        s.tell("fail" if problems else "pass", [head, *problems, *_notes(res)])


def _notes(res: dict[str, Any]) -> list[Message]:
    """A job's notes as messages (stored beside its English notes when it wrote them)."""
    notes = [str(n) for n in res.get("notes", [])]
    stored = res.get("note_messages")
    if isinstance(stored, list) and len(stored) == len(notes):
        kept: list[Message] = stored
        return kept
    return [as_written(n) for n in notes]


def _sample(ctx: RunState, floor: int, restore_raw: dict[str, Any] | None) -> dict[str, Any]:
    """The storage's throughput on a sample above the floor: the export itself when it was
    that large, else a sample written beside it (SPEC V1)."""
    setup = ctx.setup
    command = f"gpudecide export-test --option {setup.option} --storage {setup.storage.shown}"
    found = from_transfers(
        ctx.export.as_dict() if ctx.export else None, restore_raw, floor, setup.storage.shown
    )
    if found is not None:
        return found
    if ctx.export is None:
        why = message("portability", "nothing was exported: the storage was not measured")
        return not_measured(floor, why, command, setup.storage.shown)
    name = f".{setup.run_id or 'export-test'}.throughput-sample.bin"
    return probe(setup.storage, name, floor, command)


def step_record(ctx: RunState, sample: dict[str, Any] | None = None) -> Throughput:
    """6. Manual actions, closed formats, hand-restored fields, bytes, throughput (the
    storage's measured on a sample above the floor unless `sample` is given)."""
    plan = ctx.setup.plan
    with ctx.step("record") as s:
        floor = plan.throughput_floor_mb * 1_000_000
        export = throughput_figures(ctx.export.as_dict() if ctx.export else None, floor, plan)
        restore_raw = (ctx.resume or {}).get("restore")
        restore = throughput_figures(restore_raw, floor, plan)
        measured = sample if sample is not None else _sample(ctx, floor, restore_raw)
        manual = plan.manual
        listed = len(manual.actions) + len(manual.closed_formats) + len(manual.restored_by_hand)
        parts = [
            message(
                "portability",
                "{actions:num} manual action(s), {formats:num} closed format(s), {fields:num} "
                "field(s) restored by hand",
                actions=len(manual.actions),
                formats=len(manual.closed_formats),
                fields=len(manual.restored_by_hand),
            )
        ]
        status: Status = "warn" if listed else "pass"
        after = sha256_path(ctx.setup.plan_path)[0]
        if after != ctx.plan_sha256:
            status = "fail"
            parts.append(
                message(
                    "portability",
                    "the plan changed during the test: its tolerance was not fixed in advance",
                )
            )
        parts.append(_sample_said(measured))
        s.tell(status, parts)
        s.figures = {"throughput_sample": measured}
        return Throughput.model_validate({"export": export, "restore": restore, "sample": measured})


def _sample_said(sample: dict[str, Any]) -> Message:
    """The sample in the record step's detail: its rates and size, or why none."""
    if not sample["measured"]:
        return message(
            "portability", "storage throughput not measured: {why}", why=sample["note_message"]
        )
    return message(
        "portability",
        "storage throughput {write:num} GB/s written, {read:num} GB/s read, on {n:num} bytes",
        write=sample["write_gbps"],
        read=sample["read_gbps"],
        n=sample["sample_bytes"],
    )


def verdict_of(steps: list[Step]) -> ev.Verdict:
    """fail when a step failed, else info when the tool or the harness failed in one (no
    verdict on the option), else warn when one warned, else pass."""
    statuses = {s.status for s in steps}
    if "fail" in statuses:
        return "fail"
    if "error" in statuses:
        return "info"
    return "warn" if "warn" in statuses else "pass"


def status_of(verdict: ev.Verdict) -> RunStatus:
    """The record's status: `error` for a run the tool could not finish, else its verdict."""
    return "error" if verdict == "info" else verdict


def _curve(metrics: list[dict[str, Any]] | None) -> list[CurvePoint]:
    keys = ("step", "loss", "eval_loss")
    return [CurvePoint(**{k: m[k] for k in keys if k in m}) for m in (metrics or [])]


def _env_brief(env: dict[str, Any] | None) -> EnvironmentBrief:
    keys = ("python", "torch", "cuda_runtime", "driver", "gpu_model", "device", "packages_sha256")
    return EnvironmentBrief(**{k: (env or {}).get(k) for k in keys})


def rates(tput: Throughput, plan: ExportTestPlan) -> dict[str, Any]:
    """The rates a reader may extrapolate from (measured on a sample above the floor, else
    None), the throughput in full, the run's size and the window to move it out."""
    sample = tput.sample
    ok = sample is not None and sample.measured
    return {
        "export_gbps": sample.write_gbps if ok and sample else None,
        "restore_gbps": sample.read_gbps if ok and sample else None,
        "throughput": tput,
        "run_size_gb": plan.run_size_gb,
        "migration_window_hours": migration_window_hours(
            plan.run_size_gb, sample.gbps if ok and sample else None
        ),
    }


def contour_of(ctx: RunState, storage: str, artifacts: str) -> ContourFigures:
    """The contour the run exercised: its executor and cluster, the hosts its jobs ran on
    (this host when none ran), where the checkpoints were (without credentials), and whose
    artifacts were tested."""
    hosts = list(dict.fromkeys(j.host for j in ctx.jobs if j.host))
    executor = ctx.setup.executor
    return ContourFigures.model_validate(
        {
            "executor": executor.name,
            "cluster": getattr(executor, "cluster", "") or "",
            "context": "",
            "host": ",".join(hosts) or socket.gethostname(),
            "storage": storage,
            "artifacts": artifacts,
        }
    )


def _figures(ctx: RunState, tput: Throughput, verdict: ev.Verdict) -> ExportTestFigures:
    setup, plan = ctx.setup, ctx.setup.plan
    train, res = ctx.train or {}, ctx.resume or {}
    rows = compare_metrics(plan, train.get("final_metrics", {}), res.get("final_metrics", {}))
    return ExportTestFigures(
        option=setup.option,
        verdict=verdict,
        status=status_of(verdict),
        run_id=setup.run_id,
        plan=str(setup.plan_path),
        plan_sha256=ctx.plan_sha256,
        checkpoint_step=plan.model.checkpoint_step,
        resumed_at_step=res.get("resumed_at_step"),
        final_metrics=res.get("final_metrics"),
        reference_metrics=train.get("final_metrics"),
        metric_comparison=rows if res.get("final_metrics") else [],
        tolerance=plan.tolerance.model_dump(),
        steps=[s.as_figures() for s in ctx.steps.values()],
        bytes_exported=ctx.export.bytes if ctx.export else 0,
        **rates(tput, plan),
        manual_actions=list(plan.manual.actions),
        closed_formats=list(plan.manual.closed_formats),
        restored_by_hand=list(plan.manual.restored_by_hand),
        executor=setup.executor.name,
        contour=contour_of(ctx, setup.storage.shown, "produced_here"),
        storage=setup.storage.shown,
        export_url=shown_url(setup.storage.child_url(setup.run_id)) if ctx.export else None,
        device=setup.device,
        resume_device=setup.resume_device or setup.device,
        model=ModelFigures(
            size=plan.model.size,
            parameters=train.get("parameters"),
            steps=plan.model.steps,
            tokens_per_second=train.get("tokens_per_second"),
        ),
        jobs=[j.as_dict() for j in ctx.jobs],
        reasons=list(ctx.reasons),
        reason_messages=list(ctx.reason_messages),
        reference_curve=_curve(train.get("metrics")),
        resumed_curve=_curve(res.get("metrics")),
        environments=Environments(
            train=_env_brief(train.get("environment")),
            resume=_env_brief(res.get("environment")),
        ),
        manifest_lint=ctx.manifest_lint,
        **({"manifest": ctx.manifest} if ctx.manifest else {}),
        lifecycle=ctx.lifecycle,
    )


def _first(figures: ExportTestFigures) -> Message:
    if figures.reason_messages:
        first: Message = figures.reason_messages[0]  # type: ignore[assignment]  # its dict
        return first
    if figures.reasons:
        return as_written(figures.reasons[0])
    return message("portability", "a step failed")


def summary_message(figures: ExportTestFigures) -> Message:
    """The record's summary as a message: why the test could not run, the first reason of a
    failure, else the figures."""
    if figures.status == "error":
        return message(
            "portability",
            "option {option}: the export test could not run (no verdict on the option): {reason}",
            option=figures.option,
            reason=_first(figures),
        )
    if figures.verdict == "fail":
        return message(
            "portability",
            "option {option}: export test FAILED: {reason}",
            option=figures.option,
            reason=_first(figures),
        )
    worst = max((r.rel_diff or 0.0 for r in figures.metric_comparison), default=0.0)
    return message(
        "portability",
        "option {option}: trained, exported, deleted, restored and resumed at step {k}; final "
        "metrics within tolerance (largest relative difference {worst:num})",
        option=figures.option,
        k=figures.checkpoint_step,
        worst=figure(worst, 3),
    )


def _note_messages(setup: ExportTestSetup, tput: Throughput) -> list[Message]:
    """The record's notes: E4's rule, a change of device, what the throughput could not give."""
    notes = [
        message(
            "portability",
            "E4: no bitwise equality is required across devices and library versions; the "
            "tolerance was fixed in the plan before the test",
        )
    ]
    resumed_on = setup.resume_device or setup.device
    if resumed_on != setup.device:
        notes.append(
            message(
                "portability",
                "trained on {device}, resumed on {resume_device}",
                device=device_name(setup.device),
                resume_device=device_name(resumed_on),
            )
        )
    for name, t in (("export", tput.export), ("restore", tput.restore)):
        if t is not None and t.note:
            notes.append(
                message(
                    "portability",
                    "{transfer} throughput: {note}",
                    transfer=step_name(name),
                    note=t.note_message or as_written(t.note),
                )
            )
    return notes


def run_export_test(setup: ExportTestSetup) -> ExportTestResult:
    """Run the six steps and build the `export_test` evidence record."""
    require_device(setup.device)
    if setup.resume_device:
        require_device(setup.resume_device)
    plan_ref = ev.input_ref(setup.plan_path, setup.workspace_root)  # hashed before training
    ctx = RunState(setup)
    try:
        step_plan(ctx)
        step_train(ctx)
        step_export(ctx)
        step_delete(ctx)
        step_resume(ctx)
        tput = step_record(ctx)
        ctx.read_marks()
    finally:
        if not setup.keep_work:
            shutil.rmtree(setup.work, ignore_errors=True)
    verdict = verdict_of(list(ctx.steps.values()))
    typed = _figures(ctx, tput, verdict)
    texts = record_texts(summary_message(typed), _note_messages(setup, tput))
    typed.summary = texts.summary[:400]
    typed.messages = RecordMessages.model_validate(texts.messages)
    # Paths in the texts and their messages alike are written relative to the workspace.
    figures = ev.relative_figures(typed.model_dump(mode="json"), setup.workspace_root)
    record = ev.Evidence(
        kind="export_test",
        title=f"Export acceptance test of option {setup.option}",
        spec_ids=SPEC_IDS,
        verdict=verdict,
        summary=figures["summary"],
        figures=figures,
        notes=texts.notes,
        inputs=[plan_ref],
    )
    return ExportTestResult(figures=figures, record=record)
