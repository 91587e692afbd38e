"""Lifecycle marks written by the training script itself (SPEC Q1, Q4, G1).

A scheduler knows when a job was submitted, got a node and ended; only the training code
knows when preparation began, when the first training step ran and when a checkpoint was
written. These four calls write those moments down:

    from gpudecide import marks

    marks.prep_start()                  # data staging, model download begin
    marks.first_step(step)              # the first training step ran (once per process)
    marks.checkpoint(step, path)        # a checkpoint is on disk
    marks.end()                         # training is over

or, for a plain loop, `with marks.training() as m: ... m.step(step) ... m.checkpoint(...)`.

The writer finds the job's identity itself (Slurm job, array and restart count; Kubernetes
pod and namespace; SageMaker training job; host and node) and appends one JSON line per
mark to `<folder>/<job>.<host>.jsonl`, the folder being an argument or `$GPUDECIDE_MARKS_DIR`.
Without a folder it writes nothing (a script keeps its marks calls everywhere). By default
only rank 0 writes (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, LOCAL_RANK, in this
order); `all_ranks=True` makes every rank write, each line naming its rank.

Each line is written with one `write(2)` on a descriptor opened with `O_APPEND`: the kernel
moves to the end of the file and writes the line in one step, so lines from several
processes on one machine never interleave (Linux takes the file's lock for each write to a
regular file). Lines are kept under PIPE_BUF (4096 bytes, the size POSIX promises to write
whole on a pipe), long values shortened to fit. On NFS, O_APPEND from several *machines* is
not atomic; the file name carries the host, so each machine writes its own file. `fsync=True`
(or `GPUDECIDE_MARKS_FSYNC=1`) flushes each line to the disk before the call returns.

This module imports only the standard library, so a training image needs nothing else (it
works copied on its own next to the script). A mark that cannot be written warns once and
never stops training, unless `strict=True`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import uuid
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "ENV_DIR",
    "ENV_FSYNC",
    "ENV_JOB_ID",
    "KINDS",
    "LINE_LIMIT",
    "SCHEMA_VERSION",
    "MarkWriter",
    "checkpoint",
    "configure",
    "default_writer",
    "end",
    "file_name",
    "first_step",
    "identity",
    "prep_start",
    "rank_of",
    "training",
]

ENV_DIR = "GPUDECIDE_MARKS_DIR"
ENV_FSYNC = "GPUDECIDE_MARKS_FSYNC"
# A job id the team sets itself wins over every id found in the environment.
ENV_JOB_ID = "GPUDECIDE_JOB_ID"
SCHEMA_VERSION = 1
KINDS = ("prep_start", "first_step", "checkpoint", "end")
# PIPE_BUF on Linux: the largest write POSIX promises to keep whole (on a pipe; Linux keeps
# every write to a regular file whole).
LINE_LIMIT = 4096
# No identity value needs more; a longer one is shortened before it is written.
_VALUE_LIMIT = 256
_PATH_LIMIT = 2048
_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
# Rank variables of torchrun, srun, Open MPI and MPICH/Intel MPI; LOCAL_RANK last: it is 0
# on every node of a multi-node job.
_RANK_VARS = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "LOCAL_RANK")


def _text(value: object, limit: int = _VALUE_LIMIT) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text[:limit] or None


def _int(value: object) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def rank_of(env: Mapping[str, str]) -> int | None:
    """The process's rank from the launcher's variables; None when none is set."""
    for name in _RANK_VARS:
        rank = _int(env.get(name))
        if rank is not None:
            return rank
    return None


def _sagemaker(env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """SageMaker's training job name and this container's host (algo-1, ...)."""
    name = env.get("TRAINING_JOB_NAME")
    host = env.get("SM_CURRENT_HOST")
    raw = env.get("SM_TRAINING_ENV")
    if raw and len(raw) < 1_000_000:
        try:
            doc = json.loads(raw)
        except ValueError:
            doc = None
        if isinstance(doc, dict):
            name = name or doc.get("job_name")
            host = host or doc.get("current_host")
    return _text(name), _text(host)


def _namespace(env: Mapping[str, str], namespace_file: Path) -> str | None:
    if env.get("POD_NAMESPACE"):
        return _text(env["POD_NAMESPACE"])
    if not env.get("KUBERNETES_SERVICE_HOST"):
        return None
    try:
        with namespace_file.open("rb") as handle:
            return _text(handle.read(_VALUE_LIMIT).decode("utf-8", "replace"))
    except OSError:
        return None


def identity(
    env: Mapping[str, str] | None = None,
    *,
    host: str | None = None,
    namespace_file: Path = _NAMESPACE_FILE,
) -> dict[str, str | int | None]:
    """Who is writing: the job's ids as the scheduler knows them, the host and the node.

    Slurm: SLURM_JOB_ID, SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID (sacct names an array
    task `<array>_<task>`), SLURM_RESTART_COUNT (0 on the first run; a requeue adds one),
    SLURM_CLUSTER_NAME, SLURMD_NODENAME. Kubernetes: POD_NAME and POD_NAMESPACE from the
    downward API, else the pod's HOSTNAME and the service account's namespace file;
    NODE_NAME (downward API `spec.nodeName`) as the node. SageMaker: TRAINING_JOB_NAME or
    SM_TRAINING_ENV's `job_name`, and the container's host. `GPUDECIDE_JOB_ID` names the job
    outright where none of these apply.
    """
    env = os.environ if env is None else env
    in_kubernetes = bool(env.get("KUBERNETES_SERVICE_HOST"))
    pod = env.get("POD_NAME") or (env.get("HOSTNAME") if in_kubernetes else None)
    sagemaker_job, sagemaker_host = _sagemaker(env)
    restart = _int(env.get("SLURM_RESTART_COUNT"))
    return {
        "job_id": _text(env.get(ENV_JOB_ID)),
        "slurm_job_id": _text(env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID")),
        "slurm_array_job_id": _text(env.get("SLURM_ARRAY_JOB_ID")),
        "slurm_array_task_id": _text(env.get("SLURM_ARRAY_TASK_ID")),
        "slurm_restart_count": restart,
        "cluster": _text(env.get("SLURM_CLUSTER_NAME")),
        "pod": _text(pod),
        "namespace": _namespace(env, namespace_file) if pod else None,
        "sagemaker_job": sagemaker_job,
        "host": _text(host if host is not None else socket.gethostname()),
        "node": _text(env.get("SLURMD_NODENAME") or env.get("NODE_NAME") or sagemaker_host),
    }


def _safe(text: str) -> str:
    kept = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in text)
    return kept.strip(".")[:100] or "_"


def file_name(ident: Mapping[str, object]) -> str:
    """The marks file of a job on one machine: `<job>.<host>.jsonl` (`local` for a run
    outside any scheduler); only letters, digits, `.`, `_` and `-`."""
    array, task = ident.get("slurm_array_job_id"), ident.get("slurm_array_task_id")
    job = (
        ident.get("job_id")
        or (f"{array}_{task}" if array and task else None)
        or ident.get("slurm_job_id")
        or ident.get("pod")
        or ident.get("sagemaker_job")
        or "local"
    )
    host = ident.get("node") or ident.get("host") or "unknown-host"
    return f"{_safe(str(job))}.{_safe(str(host))}.jsonl"


def _stamp(at: datetime | None = None) -> str:
    """A moment in UTC with microseconds, `Z` for the offset (now, by default)."""
    when = datetime.now(UTC) if at is None else at.astimezone(UTC)
    return when.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _fit(record: dict[str, Any]) -> bytes:
    """The record as one line of at most LINE_LIMIT bytes: the longest text is halved until
    it fits (the line says which fields were shortened)."""
    while True:
        data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        if len(data) <= LINE_LIMIT:
            return data
        texts = [(len(v), k) for k, v in record.items() if isinstance(v, str) and len(v) > 8]
        if not texts:
            return data[: LINE_LIMIT - 1] + b"\n"  # cannot happen with the fields written
        _, longest = max(texts)
        record[longest] = record[longest][: len(record[longest]) // 2] + "…"
        shortened = record.setdefault("shortened", [])
        if longest not in shortened:
            shortened.append(longest)


class MarkWriter:
    """Writes the marks of one training process (see the module's docstring).

    `folder`: where marks go (default `$GPUDECIDE_MARKS_DIR`; neither: nothing is written).
    `all_ranks`: every rank writes, not only rank 0. `rank`: the rank as the framework
    knows it (a callback passes its trainer's), else from the launcher's variables.
    `fsync`: flush each line to the disk. `strict`: raise OSError instead of warning.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str] | None = None,
        *,
        all_ranks: bool = False,
        rank: int | None = None,
        fsync: bool | None = None,
        strict: bool = False,
        job_id: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if env is None else env
        chosen = folder if folder is not None else env.get(ENV_DIR)
        self.folder: Path | None = Path(chosen) if chosen else None
        self.identity = identity(env)
        if job_id is not None:
            self.identity["job_id"] = _text(job_id)
        self.rank = rank if rank is not None else rank_of(env)
        self.all_ranks = all_ranks
        self.fsync = fsync if fsync is not None else env.get(ENV_FSYNC, "") in ("1", "true")
        self.strict = strict
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._run = uuid.uuid4().hex[:16]
        self._seq = 0
        self._first_step_written = False
        self._warned = False

    @property
    def enabled(self) -> bool:
        """Whether this process writes marks: a folder is set and it is rank 0 (or all
        ranks write)."""
        return self.folder is not None and (self.all_ranks or self.rank in (None, 0))

    @property
    def path(self) -> Path | None:
        """The file this process appends to (None when it writes nothing)."""
        if self.folder is None:
            return None
        return self.folder / file_name(self.identity)

    def prep_start(self) -> bool:
        """Preparation begins (image pulled, the script runs: data staging, model load)."""
        return self._write("prep_start")

    def first_step(self, step: int | None = None) -> bool:
        """The first training step ran. Only the first call of a process writes."""
        if self._first_step_written:
            return False
        self._first_step_written = True
        return self._write("first_step", step=step)

    def step(self, step: int | None = None) -> bool:
        """Call on every step: the first call writes `first_step`, later ones cost one test."""
        if self._first_step_written:
            return False
        return self.first_step(step)

    def checkpoint(
        self,
        step: int | None = None,
        path: str | os.PathLike[str] | None = None,
        *,
        at: datetime | None = None,
    ) -> bool:
        """A checkpoint is written and complete (call it after the save returned); `at`: when
        it was complete, if not now (a callback that sees the file later passes its time)."""
        where = _text(os.fspath(path), _PATH_LIMIT) if path is not None else None
        return self._write("checkpoint", at=at, step=step, path=where)

    def end(self, status: str | None = None) -> bool:
        """Training is over; `status` says how (e.g. "completed", "failed")."""
        return self._write("end", status=_text(status))

    def _write(self, kind: str, at: datetime | None = None, **fields: Any) -> bool:
        if not self.enabled:
            if self.folder is None and not self._warned:
                self._warned = True
                warnings.warn(
                    f"gpudecide marks: no folder given and ${ENV_DIR} is not set; "
                    "marks are not written",
                    RuntimeWarning,
                    stacklevel=3,
                )
            return False
        with self._lock:
            if os.getpid() != self._pid:  # a forked child is a process of its own
                self._pid, self._run, self._seq = os.getpid(), uuid.uuid4().hex[:16], 0
            self._seq += 1
            record: dict[str, Any] = {
                "v": SCHEMA_VERSION,
                "kind": kind,
                "at": _stamp(at),
                **{k: v for k, v in fields.items() if v is not None},
                **{k: v for k, v in self.identity.items() if v is not None},
                "rank": self.rank,
                "pid": self._pid,
                "run": self._run,
                "seq": self._seq,
            }
            return self._append(_fit(record))

    def _append(self, data: bytes) -> bool:
        assert self.folder is not None
        path = self.folder / file_name(self.identity)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(path, flags, 0o644)
            try:
                written = os.write(fd, data)  # one write: the line goes in whole
                if self.fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            if written != len(data):
                raise OSError(f"short write to {path}: {written} of {len(data)} bytes")
        except OSError as exc:
            if self.strict:
                raise
            if not self._warned:
                self._warned = True
                print(f"gpudecide marks: cannot write {path}: {exc}", file=sys.stderr)
            return False
        return True


_default: MarkWriter | None = None
_default_lock = threading.Lock()


def default_writer() -> MarkWriter:
    """The process's writer, made on first use from the environment."""
    global _default
    with _default_lock:
        if _default is None:
            _default = MarkWriter()
        return _default


def configure(folder: str | os.PathLike[str] | None = None, **options: Any) -> MarkWriter:
    """Replace the process's writer (a folder, `all_ranks`, `fsync`, `job_id`, ...)."""
    global _default
    with _default_lock:
        _default = MarkWriter(folder, **options)
        return _default


def prep_start() -> bool:
    """Preparation begins; see `MarkWriter.prep_start`."""
    return default_writer().prep_start()


def first_step(step: int | None = None) -> bool:
    """The first training step ran (written once per process)."""
    return default_writer().first_step(step)


def checkpoint(step: int | None = None, path: str | os.PathLike[str] | None = None) -> bool:
    """A checkpoint is complete on disk."""
    return default_writer().checkpoint(step, path)


def end(status: str | None = None) -> bool:
    """Training is over."""
    return default_writer().end(status)


@contextmanager
def training(folder: str | os.PathLike[str] | None = None, **options: Any) -> Iterator[MarkWriter]:
    """Marks around a plain training loop: `prep_start` on entry, `end` on exit
    ("completed", "failed" on an exception, "interrupted" on Ctrl-C); call `.step(step)` in
    the loop and `.checkpoint(step, path)` after each save."""
    writer = MarkWriter(folder, **options) if (folder is not None or options) else default_writer()
    writer.prep_start()
    try:
        yield writer
    except KeyboardInterrupt:
        writer.end("interrupted")
        raise
    except BaseException:
        writer.end("failed")
        raise
    writer.end("completed")
