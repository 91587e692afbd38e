"""What every drill shares: its context, the job it starts, its result (SPEC G4).

A drill answers three questions (G4): was the failure noticed, was committed data kept, can
the final status be explained without guessing. `DrillResult` carries those three booleans,
the step the job resumed from, the steps and seconds lost, a one-line status and the path of
the drill's journal; `to_evidence` turns it into a `drill` evidence record naming the option
(contour) it ran on.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from gpudecide import evidence as ev
from gpudecide.drills.contour import Contour, shown_storage, this_host
from gpudecide.drills.drill_figures import DrillFigures, GameDayRow
from gpudecide.drills.figures import RecordMessages
from gpudecide.drills.job import JobSpec, read_events
from gpudecide.drills.journal import Journal, Probe
from gpudecide.drills.launch import LocalExecutor, SlurmExecutor, SlurmJob
from gpudecide.drills.names import MARKS_FOLDER, NODE_LOCAL, SPEC_IDS
from gpudecide.drills.words import word_message
from gpudecide.fsutil import relative_or_given
from gpudecide.message import Message, english, message, record_texts
from gpudecide.portability.storage import Storage, open_storage
from gpudecide.portability.trainer import CheckpointError, verify_checkpoint
from gpudecide.portability.zygote import Zygote
from gpudecide.queue.restarts import RestartsFigures

__all__ = [
    "TINY_TRAIN",
    "DrillContext",
    "DrillResult",
    "JobFiles",
    "cancel",
    "cannot_inject",
    "game_day_row",
    "job_spec",
    "last",
    "marks_files",
    "new_journal",
    "open_store",
    "seconds_between",
    "step_time",
    "steps_of",
    "storage_probe",
    "submit",
    "summary_message",
    "to_evidence",
    "verdict_of",
    "verify_stored",
    "wait_for",
    "without_external_storage",
    "write_job",
]

# A tiny model (about 17k parameters, ~250 kB a checkpoint): every drill runs in seconds.
TINY_TRAIN: dict[str, Any] = {
    "size": "tiny",
    "d_model": 32,
    "n_layers": 1,
    "n_heads": 2,
    "seq_len": 16,
    "vocab_size": 64,
    "dropout": 0.0,
    "batch_size": 4,
    "n_sequences": 32,
    "steps": 12,
    "checkpoint_every": 4,
    "seed": 11,
}


@dataclass
class DrillContext:
    """Where and how drills run."""

    root: Path
    storage: str | None = None  # URL; None: <root>/storage; "node": the node's own disk
    executor: Literal["local", "slurm"] = "local"
    option: str | None = None
    train: dict[str, Any] = field(default_factory=lambda: dict(TINY_TRAIN))
    pace_s: float = 0.02
    timeout_s: float = 120.0
    storage_options: dict[str, Any] = field(default_factory=dict)
    zygote: Zygote | None = None  # local jobs fork from it warm; None: fresh processes
    cluster: str = ""  # the Slurm cluster's name, as its controller gave it
    planned: list[str] = field(default_factory=list)  # the drills of this game day, in order

    @property
    def steps(self) -> int:
        """Steps of the whole training run."""
        return int(self.train["steps"])

    @property
    def every(self) -> int:
        """Checkpoint interval."""
        return int(self.train["checkpoint_every"])

    def storage_url(self, run_dir: Path) -> str | None:
        """External storage URL of this drill (None: checkpoints on the node only).

        A storage given is shared by every drill of every game day: each drill keeps its
        checkpoints under its own prefix there (`<storage>/<game day>/<drill>`), so that one
        drill never resumes from another's."""
        if self.storage == NODE_LOCAL:
            return None
        if not self.storage:
            return str(run_dir / "storage")
        return f"{self.storage.rstrip('/')}/{run_dir.parent.name}/{run_dir.name}"


@dataclass
class DrillResult:
    """The answer of one drill (the `drill --json` object).

    `status_message` is the one-line status as people read it; `status` is its English
    (the JSON's and the record's), unless `status_text` quotes another program's own words
    (a storage's error line) that the message names by their code.
    """

    drill: str
    verdict: Literal["pass", "fail"]
    noticed: bool
    data_kept: bool
    explained: bool
    resumed_from_step: int | None
    lost_steps: int | None
    lost_seconds: float | None
    status_message: Message
    journal: Path
    details: dict[str, Any] = field(default_factory=dict)
    status_text: str | None = None
    # Where this drill's job kept its checkpoints (None: on the node's own disk only).
    storage_url: str | None = None
    # What the record notes beside its summary (a stale mount found and removed, ...).
    note_messages: list[Message] = field(default_factory=list)
    # When the drill killed a job, by job name (its work since the last checkpoint ends there).
    stopped_at: dict[str, str] = field(default_factory=dict)

    @property
    def status(self) -> str:
        """The status in English."""
        return self.status_text if self.status_text is not None else english(self.status_message)

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "drill": self.drill,
            "verdict": self.verdict,
            "noticed": self.noticed,
            "data_kept": self.data_kept,
            "explained": self.explained,
            "resumed_from_step": self.resumed_from_step,
            "lost_steps": self.lost_steps,
            "lost_seconds": self.lost_seconds,
            "status": self.status,
            "journal": str(self.journal),
            **self.details,
        }


def verdict_of(noticed: bool, kept: bool, explained: bool) -> Literal["pass", "fail"]:
    """A drill passes only when all three G4 questions are answered yes."""
    return "pass" if noticed and kept and explained else "fail"


@dataclass
class JobFiles:
    """One job's spec, events and log files."""

    spec: Path
    events: Path
    log: Path

    def events_now(self) -> list[dict[str, Any]]:
        """Events written so far."""
        return read_events(self.events)


def write_job(run_dir: Path, name: str, spec: JobSpec) -> JobFiles:
    """Write a job's spec file next to where its events go."""
    run_dir.mkdir(parents=True, exist_ok=True)
    files = JobFiles(run_dir / f"{name}.spec.json", Path(spec.events), run_dir / f"{name}.log")
    files.spec.write_text(spec.model_dump_json(indent=2), encoding="utf-8")
    return files


def job_spec(
    ctx: DrillContext, run_dir: Path, name: str, workdir: Path, **overrides: Any
) -> JobSpec:
    """The job spec for one attempt of the drilled training run."""
    values: dict[str, Any] = {
        "train": dict(ctx.train),
        "workdir": str(workdir),
        "storage": ctx.storage_url(run_dir),
        "run_name": "run",
        "restore_dir": str(workdir / "restore"),
        "events": str(run_dir / f"{name}.events.jsonl"),
        "pace_s": ctx.pace_s,
        # The job's own lifecycle marks, as a team's training script writes them.
        "marks_folder": str(run_dir / MARKS_FOLDER),
        "job_id": f"{run_dir.name}-{name}",
    }
    values.update(overrides)
    return JobSpec(**values)


def submit(ctx: DrillContext, files: JobFiles, **kw: Any) -> Any:
    """Start the job on the context's executor."""
    options = json.dumps(ctx.storage_options)
    if ctx.executor == "slurm":
        return SlurmExecutor().submit(files.spec, files.log, storage_options=options, **kw)
    return LocalExecutor().submit(
        files.spec, files.log, storage_options=options, zygote=ctx.zygote, **kw
    )


def wait_for(
    files: JobFiles, job: Any, ready: Callable[[list[dict[str, Any]]], bool], timeout_s: float
) -> list[dict[str, Any]]:
    """Poll the events until `ready` holds, the job ends or the timeout passes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        events = files.events_now()
        if ready(events) or job.status().state == "ended":
            return files.events_now()
        time.sleep(0.02)
    return files.events_now()


def last(events: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    """The newest event of a kind."""
    found = [e for e in events if e["event"] == kind]
    return found[-1] if found else None


def steps_of(events: list[dict[str, Any]], kind: str) -> list[int]:
    """The `step` of every event of a kind."""
    return [int(e["step"]) for e in events if e["event"] == kind]


def seconds_between(a: str | None, b: str | None) -> float | None:
    """Seconds from UTC stamp a to b."""
    if a is None or b is None:
        return None
    ta = datetime.fromisoformat(a.replace("Z", "+00:00"))
    tb = datetime.fromisoformat(b.replace("Z", "+00:00"))
    return round((tb - ta).total_seconds(), 3)


def step_time(events: list[dict[str, Any]], step: int) -> str | None:
    """When a step finished (0: when the job started)."""
    if step == 0:
        started = next((e for e in events if e["event"] == "started"), None)
        return started["at"] if started else None
    return next((e["at"] for e in events if e["event"] == "step" and e["step"] == step), None)


def open_store(ctx: DrillContext, url: str) -> Storage:
    """The drill's own view of the external storage."""
    return open_storage(url, ctx.storage_options)


def verify_stored(store: Storage, step: int, dest: Path) -> Probe:
    """Download checkpoint-<step> from storage and check its SHA-256 sums."""
    name = f"run/checkpoint-{step}"
    if dest.exists():
        shutil.rmtree(dest)
    try:
        store.get_dir(name, dest)
        verify_checkpoint(dest)
    except (CheckpointError, OSError) as exc:
        return Probe(f"stored checkpoint-{step} verifies", False, str(exc))
    except Exception as exc:
        return Probe(f"stored checkpoint-{step} verifies", False, str(exc))
    return Probe(f"stored checkpoint-{step} verifies", True, store.child_url(name))


def storage_probe(ctx: DrillContext, url: str | None) -> Probe:
    """External storage answers (or: the drill runs with node-local checkpoints)."""
    if url is None:
        return Probe("checkpoints go to external storage", False, "node-local disk only")
    try:
        store = open_store(ctx, url)
        store.listing("run")
    except Exception as exc:
        return Probe("external storage answers", False, str(exc))
    return Probe("external storage answers", True, url)


def cancel(job: Any) -> str:
    """Rollback: stop the job if it still runs."""
    if job is None:
        return "no job"
    if isinstance(job, SlurmJob):
        job.cancel()
        return f"scancel {job.job_id}"
    job.cancel()
    return "job stopped"


def to_evidence(
    result: DrillResult,
    ctx: DrillContext,
    root: Path,
    game_day: list[GameDayRow],
    log_restarts: RestartsFigures | None,
) -> ev.Evidence:
    """A `drill` evidence record: the drill's answer, the option drilled (figures["option"])
    and the contour it exercised (figures["contour"]), the game day so far and the restarts
    in the team's job logs."""
    texts = record_texts(summary_message(result), result.note_messages)
    contour = Contour(
        executor=ctx.executor,
        cluster=ctx.cluster,
        context="",
        host=this_host(),
        storage=shown_storage(result.storage_url),
    )
    figures = DrillFigures.model_validate(
        {
            **result.as_dict(),
            "journal": relative_or_given(result.journal, root),
            "option": ctx.option,
            "executor": ctx.executor,
            "storage": ctx.storage or "local folder",
            "contour": contour,
            "messages": RecordMessages.model_validate(texts.messages),
            "game_day": game_day,
            "game_day_drills": ctx.planned or [result.drill],
            "log_restarts": log_restarts,
        }
    )
    return ev.Evidence(
        kind="drill",
        title=f"Game day: {result.drill}",
        spec_ids=SPEC_IDS[result.drill],
        verdict=result.verdict,
        summary=texts.summary,
        figures=figures.model_dump(mode="json"),
        notes=texts.notes,
        inputs=[
            ev.input_ref(p, root) for p in [result.journal, *marks_files(result.journal.parent)]
        ],
    )


def marks_files(run_dir: Path) -> list[Path]:
    """The lifecycle marks files a drill's jobs wrote (inputs of its record)."""
    folder = run_dir / MARKS_FOLDER
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.jsonl") if p.is_file() and not p.is_symlink())


def game_day_row(r: DrillResult) -> GameDayRow:
    """One drill in a game day's table."""
    return GameDayRow.model_validate(
        {
            "drill": r.drill,
            "verdict": r.verdict,
            "noticed": r.noticed,
            "data_kept": r.data_kept,
            "explained": r.explained,
            "resumed_from_step": r.resumed_from_step,
            "lost_steps": r.lost_steps,
            "lost_seconds": r.lost_seconds,
            "status": r.status,
            "status_message": r.status_message,
            "restarted_from_zero": r.details.get("restarted_from_zero"),
        }
    )


def summary_message(result: DrillResult) -> Message:
    """The record's summary "drill: verdict: status" as a message."""
    return message(
        "drills",
        "{drill}: {verdict}: {status}",
        drill=result.drill,
        verdict=word_message(result.verdict),
        status=result.status_message,
    )


def cannot_inject(j: Journal, drill: str, run_dir: Path, why: Message) -> DrillResult:
    """A drill whose fault this machine cannot inject: a failed drill that says why."""
    j.observe("fault not injected", english(why))
    result = DrillResult(
        drill, "fail", False, False, False, None, None, None,
        message("drills", "cannot inject the fault: {why}", why=why), run_dir / "journal.json",
    )  # fmt: skip
    j.write(result.journal, result.as_dict())
    return result


def without_external_storage(drill: str, run_dir: Path) -> DrillResult:
    """The answer of a drill that needs external storage when checkpoints stay on the node."""
    j = new_journal(drill, drill, "checkpoints stay on the node's own disk", "external storage")
    j.steady("before", [Probe("checkpoints go to external storage", False, "node-local disk")])
    said = message(
        "drills", "no external storage: checkpoints live only on the node's disk (--storage node)"
    )
    j.observe("not run", english(said))
    result = DrillResult(
        drill, "fail", False, False, False, None, None, None, said, run_dir / "journal.json"
    )  # fmt: skip
    j.write(result.journal, result.as_dict())
    return result


def new_journal(drill: str, title: str, description: str, hypothesis: str) -> Journal:
    """A journal for one drill run."""
    return Journal(drill, title, description, hypothesis)
