"""The drilled training job: `python -m gpudecide.drills.job SPEC.json` (SPEC G1, G4).

One real process that runs `gpudecide.portability.trainer.train` the way a team runs its
fine-tuning job: checkpoints are written atomically on the node's own disk (`workdir`) and
each one is then copied to external storage (`gpudecide.portability.storage`, a local
folder or `s3://`), retried with exponential back-off when the storage refuses. On start it
resumes from the newest checkpoint in external storage whose SHA-256 sums verify, falling
back to older ones, or starts from zero when there is none.

It writes its lifecycle marks as a team's training script would, through `gpudecide.marks`
(the spec's `marks_folder` and `job_id`): preparation start, the first training step, each
checkpoint once it is complete on the node's disk, the end with how it ended (none when the
drill kills it: the marks then show a job that died).

Everything it does goes to an events file, one JSON object a line, flushed at once, so the
drill runner (another process) can follow it and a kill leaves every earlier line intact:
started, restore_rejected, resumed / fresh_start, step, checkpoint, uploaded,
upload_denied, storage_denied, failed, finished. Exit codes: 0 finished, 3 storage denied
after all retries, 4 disk full (ENOSPC), 5 no usable checkpoint format, 1 anything else.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import torch
from pydantic import BaseModel, ConfigDict, Field

from gpudecide.errors import InputError
from gpudecide.marks import MarkWriter
from gpudecide.portability import storage as storage_mod
from gpudecide.portability.trainer import (
    CheckpointError,
    CheckpointInfo,
    StepMetric,
    TrainConfig,
    latest_checkpoint,
    train,
    verify_checkpoint,
)
from gpudecide.textlines import split_lines

__all__ = [
    "EXIT_CHECKPOINT",
    "EXIT_DENIED",
    "EXIT_DISK_FULL",
    "EXIT_OK",
    "EXIT_OTHER",
    "OPTIONS_ENV",
    "Events",
    "JobSpec",
    "StorageDenied",
    "denial_code",
    "main",
    "now_iso",
    "read_events",
    "run",
    "stored_steps",
]

EXIT_OK, EXIT_OTHER, EXIT_DENIED, EXIT_DISK_FULL, EXIT_CHECKPOINT = 0, 1, 3, 4, 5
OPTIONS_ENV = "GPUDECIDE_DRILL_STORAGE_OPTIONS"


class JobSpec(BaseModel):
    """What one job process does; written by the runner as JSON next to the events file."""

    model_config = ConfigDict(extra="forbid")

    train: dict[str, Any] = Field(description="TrainConfig fields.")
    workdir: str = Field(description="The node's own disk: where the trainer writes.")
    storage: str | None = Field(
        default=None, description="External storage URL; None: checkpoints stay on the node."
    )
    run_name: str = Field(default="run", description="Folder of this run inside the storage.")
    restore_dir: str = Field(description="Where checkpoints downloaded for a resume land.")
    events: str = Field(description="Events file (JSON lines).")
    resume: bool = Field(default=True, description="Resume from the newest good checkpoint.")
    retries: int = Field(default=4, ge=0, description="Upload retries after a refusal.")
    backoff_s: float = Field(default=0.2, ge=0, description="First back-off; doubles each try.")
    pace_s: float = Field(default=0.0, ge=0, description="Pause after each step (paces drills).")
    threads: int = Field(
        default=1, ge=1, description="torch CPU threads (one: a tiny model gains nothing more)."
    )
    marks_folder: str | None = Field(
        default=None, description="Where the job writes its lifecycle marks (gpudecide.marks)."
    )
    job_id: str | None = Field(default=None, description="The job id its marks carry.")


def now_iso() -> str:
    """UTC time with milliseconds, as every journal and event carries it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class Events:
    """Appends one flushed JSON line per event."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle: TextIO = open(path, "a", encoding="utf-8")  # noqa: SIM115

    def emit(self, event: str, **detail: Any) -> None:
        """Write one event with the UTC time and this process's id."""
        line = {"at": now_iso(), "event": event, "pid": os.getpid(), **detail}
        self.handle.write(json.dumps(line, default=str) + "\n")
        self.handle.flush()

    def close(self) -> None:
        """Close the file."""
        self.handle.close()


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every complete event line so far (a line cut by a kill is left out)."""
    if not path.is_file():
        return []
    out = []
    for line in split_lines(path.read_text(encoding="utf-8")):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


class StorageDenied(Exception):
    """External storage kept refusing after every retry."""


def _open_storage(spec: JobSpec) -> storage_mod.Storage | None:
    if spec.storage is None:
        return None
    options = json.loads(os.environ.get(OPTIONS_ENV, "{}"))
    return storage_mod.open_storage(spec.storage, options)


def stored_steps(store: storage_mod.Storage, run_name: str) -> list[int]:
    """Steps of the checkpoints published in external storage, newest first."""
    steps = set()
    for name in store.listing(run_name):
        folder, _, file = name.partition("/")
        if file == "SHA256SUMS" and folder.startswith("checkpoint-") and folder[11:].isdigit():
            steps.add(int(folder[11:]))
    return sorted(steps, reverse=True)


def _restore(spec: JobSpec, store: storage_mod.Storage | None, ev: Events) -> Path | None:
    """The newest checkpoint that verifies (external storage, else the node's disk)."""
    if store is None:
        local = latest_checkpoint(Path(spec.workdir))
        if local is None:
            ev.emit(
                "fresh_start",
                reason=f"no checkpoint on the node's disk {spec.workdir}",
                code="no_local_checkpoint",
                where=str(spec.workdir),
            )
            return None
        verify_checkpoint(local)
        ev.emit("resumed", step=int(local.name.split("-")[1]), source=str(local))
        return local
    steps = stored_steps(store, spec.run_name)
    for step in steps:
        name = f"{spec.run_name}/checkpoint-{step}"
        dest = Path(spec.restore_dir) / f"checkpoint-{step}"
        if dest.exists():
            dest = Path(spec.restore_dir) / f"checkpoint-{step}.{time.time_ns()}"
        got = store.get_dir(name, dest)
        try:
            verify_checkpoint(dest)
        except CheckpointError as exc:
            ev.emit("restore_rejected", step=step, reason=exc.reason, message=str(exc))
            continue
        ev.emit("resumed", step=step, source=store.child_url(name), bytes=got.bytes)
        return dest
    ev.emit(
        "fresh_start",
        reason=f"no verifiable checkpoint in {store.child_url(spec.run_name)}",
        code="no_verified_checkpoint",
        where=store.child_url(spec.run_name),
        rejected=len(steps),
    )
    return None


def denial_code(exc: BaseException) -> str | None:
    """The storage's own name for a denial: the errno (EACCES), S3's error code
    (AccessDenied), else the exception's type; None when nothing says more."""
    cause = exc.__cause__ or exc.__context__
    if cause is None:
        return None
    if isinstance(cause, OSError) and cause.errno is not None and cause.errno in errno.errorcode:
        return errno.errorcode[cause.errno]
    response = getattr(cause, "response", None)
    code = response.get("Error", {}).get("Code") if isinstance(response, dict) else None
    return str(code) if code else type(cause).__name__


def _uploader(spec: JobSpec, store: storage_mod.Storage, ev: Events) -> Any:
    def upload(info: CheckpointInfo) -> None:
        name = f"{spec.run_name}/checkpoint-{info.step}"
        for attempt in range(spec.retries + 1):
            try:
                sent = store.put_dir(info.path, name)
            except InputError as exc:
                wait = spec.backoff_s * 2**attempt
                ev.emit(
                    "upload_denied",
                    step=info.step,
                    attempt=attempt + 1,
                    error=exc.one_line(),
                    retry_in_s=wait if attempt < spec.retries else None,
                    target=store.child_url(name),
                    code=denial_code(exc),
                )
                if attempt < spec.retries:
                    time.sleep(wait)
                continue
            ev.emit("uploaded", step=info.step, target=sent.target, bytes=sent.bytes)
            return
        raise StorageDenied(
            f"external storage refused checkpoint-{info.step} {spec.retries + 1} times"
        )

    return upload


def _os_error(exc: BaseException, code: int) -> OSError | None:
    """The OSError with `code` in the exception's chain (cause or context), if any."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno == code:
            return cur
        cur = cur.__cause__ or cur.__context__
    return None


_END_STATUS = {
    EXIT_OK: "completed",
    EXIT_DENIED: "storage_denied",
    EXIT_DISK_FULL: "disk_full",
    EXIT_CHECKPOINT: "failed",
    EXIT_OTHER: "failed",
}


def _marks(spec: JobSpec) -> MarkWriter | None:
    """The job's marks writer (gpudecide.marks), None without a marks folder."""
    if spec.marks_folder is None:
        return None
    return MarkWriter(spec.marks_folder, job_id=spec.job_id)


def run(spec: JobSpec) -> int:
    """Run the job; returns its exit code (see module doc). Its lifecycle marks say how it
    ended (`end`), except when it is killed."""
    marks = _marks(spec)
    if marks is not None:
        marks.prep_start()
    code = _run(spec, marks)
    if marks is not None:
        marks.end(_END_STATUS.get(code, "failed"))
    return code


def _run(spec: JobSpec, marks: MarkWriter | None) -> int:
    ev = Events(Path(spec.events))
    ev.emit("started", host=socket.gethostname(), storage=spec.storage, workdir=spec.workdir)
    config = TrainConfig.model_validate(spec.train)
    # On a shared, busy CPU, extra threads of a tiny model spin against other work.
    torch.set_num_threads(spec.threads)
    store = _open_storage(spec)
    try:
        resume_from = _restore(spec, store, ev) if spec.resume else None
    except (CheckpointError, InputError) as exc:
        ev.emit("failed", reason="restore_failed", message=str(exc))
        return EXIT_CHECKPOINT

    def on_step(m: StepMetric) -> None:
        ev.emit("step", step=m["step"], loss=m["loss"], seconds=m["seconds"])
        if marks is not None:
            marks.step(m["step"])
        if spec.pace_s:
            time.sleep(spec.pace_s)

    def on_checkpoint(info: CheckpointInfo) -> None:
        ev.emit("checkpoint", step=info.step, path=str(info.path), bytes=info.total_bytes)
        if marks is not None:
            # Complete on the node's disk: what a team's callback marks after the save.
            marks.checkpoint(info.step, info.path)
        if store is not None:
            _uploader(spec, store, ev)(info)

    try:
        result = train(
            config,
            Path(spec.workdir),
            resume_from=resume_from,
            on_step=on_step,
            on_checkpoint=on_checkpoint,
        )
    except StorageDenied as exc:
        ev.emit("storage_denied", message=str(exc))
        return EXIT_DENIED
    except CheckpointError as exc:
        ev.emit("failed", reason=exc.reason, message=str(exc))
        return EXIT_CHECKPOINT
    except Exception as exc:
        full = _os_error(exc, errno.ENOSPC)
        if full is not None:
            # torch.save reports the kernel's ENOSPC as a RuntimeError: the OSError is its
            # context. Both are kept: the kernel's words and what the writer made of them.
            ev.emit(
                "failed",
                reason="disk_full",
                errno="ENOSPC",
                message=str(full),
                raised=f"{type(exc).__name__}: {exc}"[:300],
            )
            return EXIT_DISK_FULL
        ev.emit("failed", reason="error", message=f"{type(exc).__name__}: {exc}"[:500])
        return EXIT_OTHER
    ev.emit("finished", start_step=result.start_step, final_step=result.final_step)
    return EXIT_OK


def main(argv: list[str]) -> int:
    """Entry point: the one argument is the spec file."""
    spec = JobSpec.model_validate_json(Path(argv[0]).read_text(encoding="utf-8"))
    return run(spec)


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # Every event is already flushed: skip the interpreter's slow teardown of torch, so the
    # drill sees the job end when it ends.
    os._exit(code)
