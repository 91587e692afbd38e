"""Checkpoint folders: atomic, hashed while written, verified before anything is loaded (A2, E3).

Layout of one `checkpoint-<step>/` folder (Hugging Face Trainer file names, so the export
audit and other tools recognise every role):

    model.safetensors     weights (safetensors, written by `write_safetensors`)
    optimizer.pt          optimizer state_dict: tensors, numbers, lists only
    scheduler.pt          LR scheduler state_dict
    rng_state.pth         RNG states: python, numpy, torch CPU, torch CUDA (one per device)
    trainer_state.json    global_step, epoch, format, metric history up to the step
    training_config.json  the exact training config
    environment.json      python/torch/CUDA/driver versions, GPU model, package digest, ...
    SHA256SUMS            SHA-256 of every file above (`sha256sum -c` format), written last

The folder is first written under a hidden temporary name, every file fsync'ed, then
renamed: a crash leaves no folder that looks whole. Each file's SHA-256 is computed from the
bytes as they are written, so exporting needs no second read pass.

Loading (`read_checkpoint`) checks SHA256SUMS against every file before it is used: a
tampered or truncated file, a file missing from the sums or a file the sums do not list is a
`CheckpointError`. The weights are read once, straight into their tensors and hashed while
read (only their bounded safetensors header is parsed first, to know where each tensor's
bytes go); the tensors are kept only when the digest matches, so they hold exactly the bytes
verified. Every other file is hashed before any byte of it is parsed; the `.pt`/`.pth` files
are then read with `torch.load(weights_only=True)`, which constructs only tensors and plain
containers and never runs code from the file.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import torch

from gpudecide.artifacts.hashing import FileDigest, format_sums, parse_sums
from gpudecide.artifacts.safetensors_header import inspect_handle
from gpudecide.errors import InputError
from gpudecide.fsutil import AHEAD, open_regular_raw, prefetch, sha256_path
from gpudecide.message import Message, english, message
from gpudecide.portability.texts import plain

__all__ = [
    "CONFIG",
    "ENVIRONMENT",
    "FORMAT",
    "OPTIMIZER",
    "PREFIX",
    "REQUIRED",
    "RESUME_FILES",
    "RNG",
    "SCHEDULER",
    "SLICE",
    "SUMS",
    "TRAINER_STATE",
    "WEIGHTS",
    "CheckpointError",
    "CheckpointInfo",
    "CheckpointState",
    "CheckpointWriter",
    "latest_checkpoint",
    "list_checkpoints",
    "read_checkpoint",
    "read_safetensors",
    "safetensors_header",
    "verify_checkpoint",
    "write_safetensors",
]

FORMAT = "gpudecide-checkpoint/1"
SUMS = "SHA256SUMS"
WEIGHTS = "model.safetensors"
OPTIMIZER = "optimizer.pt"
SCHEDULER = "scheduler.pt"
RNG = "rng_state.pth"
TRAINER_STATE = "trainer_state.json"
CONFIG = "training_config.json"
ENVIRONMENT = "environment.json"
REQUIRED = (WEIGHTS, TRAINER_STATE, CONFIG)
RESUME_FILES = (OPTIMIZER, SCHEDULER, RNG)
PREFIX = "checkpoint-"
# 16 MiB slices: large enough that hashing and writing each run at full speed, small enough
# that the hash of one slice overlaps the write of the same slice.
SLICE = 16 << 20

_DTYPES: dict[torch.dtype, str] = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
}
# What the reader accepts: the dtypes safetensors' own torch loader maps (on this torch).
_TORCH_DTYPES: dict[str, torch.dtype] = {name: dtype for dtype, name in _DTYPES.items()} | {
    name: getattr(torch, attr)
    for name, attr in (
        ("U16", "uint16"),
        ("U32", "uint32"),
        ("U64", "uint64"),
        ("C64", "complex64"),
        ("F8_E4M3", "float8_e4m3fn"),
        ("F8_E5M2", "float8_e5m2"),
    )
    if hasattr(torch, attr)
}
# writev/readv take at most IOV_MAX (1024 on Linux) buffers per call.
_MAX_IOV = 512
_SYNC_FILE_RANGE_WRITE = 2


def _writeback_starter() -> Callable[[int, int, int], None]:
    """sync_file_range(SYNC_FILE_RANGE_WRITE) where libc has it (Linux), else a no-op.

    It only starts writeback of the range and returns; its result is ignored because the
    fsync at the end is what makes the file durable, on every system.
    """
    try:
        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return lambda fd, offset, length: None
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    call.restype = ctypes.c_int

    def start(fd: int, offset: int, length: int) -> None:
        call(fd, offset, length, _SYNC_FILE_RANGE_WRITE)

    return start


_start_writeback = _writeback_starter()


class CheckpointError(Exception):
    """A checkpoint that cannot be loaded as it is; `reason` is a stable id for machines.

    Reasons: missing_sums, hash_mismatch, missing_file, unlisted_file, not_a_checkpoint,
    optimizer_state_missing, config_mismatch, unreadable. `msg` says what is wrong as a
    message (the report and the commands show it in the reader's language); `message` is
    its English, the text of the exception.
    """

    def __init__(self, reason: str, msg: Message, path: str | Path | None = None) -> None:
        self.reason = reason
        self.msg = msg
        self.message = english(msg)
        self.path = str(path) if path is not None else None
        super().__init__(f"{self.path}: {self.message}" if self.path else self.message)

    def as_message(self) -> Message:
        """The error as a message: "<path>: <what>" in the reader's language."""
        if self.path is None:
            return self.msg
        return plain("{path}: {text}", path=self.path, text=self.msg)


class _HashedFile:
    """A buffered binary sink that hashes every byte as it is written, and counts them.

    For torch.save, which reuses its buffer once write() returns and writes tens of
    thousands of small records: the hash is inline and the handle's buffer gathers them.
    """

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.digest = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes | memoryview) -> int:
        """Hash and write `data`; its length."""
        self.digest.update(data)
        n = self.handle.write(data)
        self.size += n
        return n

    def flush(self) -> None:
        """Flush the handle's buffer."""
        self.handle.flush()


class _StreamWriter:
    """Writes byte views to a file descriptor, hashing each batch in a second thread.

    Each batch is hashed in the pool's one worker (hashlib releases the GIL on large
    buffers) while the same batch is written; one worker keeps the updates in order. With
    `durable`, the kernel is asked to start writing each batch to disk at once, so the
    final fsync waits for the last batches only instead of the whole file.
    """

    def __init__(self, fd: int, pool: ThreadPoolExecutor, *, durable: bool) -> None:
        self.fd = fd
        self.digest = hashlib.sha256()
        self.size = 0
        self._pool = pool
        self._durable = durable
        self._pending: list[Future[None]] = []

    def write_views(self, views: Iterable[memoryview]) -> None:
        """Write byte views in order: large ones in slices, small ones gathered (writev)."""
        for batch in _batches(views):
            self._pending.append(self._pool.submit(_update, self.digest, batch))
            n = _write_all(self.fd, batch)
            if self._durable:
                _start_writeback(self.fd, self.size, n)
            self.size += n
            # the writer runs at most a few slices ahead of the hash, so the host copy of a
            # GPU tensor is released soon after it is written
            if len(self._pending) > 4:
                self._pending.pop(0).result()

    def finish(self) -> str:
        """Wait for the hash of the last batch; the file's SHA-256 in hex."""
        for job in self._pending:
            job.result()
        self._pending.clear()
        return self.digest.hexdigest()


def _batches(views: Iterable[memoryview]) -> Iterator[list[memoryview]]:
    """Byte views regrouped into batches of about SLICE bytes, in order.

    A large view is cut into slices; small ones (biases, norms, the header) are gathered so
    that a model with thousands of small tensors costs one system call and one hash job per
    batch, not per tensor.
    """
    batch: list[memoryview] = []
    size = 0
    for view in views:
        for start in range(0, len(view), SLICE):
            part = view[start : start + SLICE]
            batch.append(part)
            size += len(part)
            if size >= SLICE or len(batch) >= _MAX_IOV:
                yield batch
                batch, size = [], 0
    if batch:
        yield batch


def _update(digest: Any, parts: list[memoryview]) -> None:
    for part in parts:
        digest.update(part)


def _write_all(fd: int, parts: list[memoryview]) -> int:
    """writev until every byte of `parts` is written (a write may take fewer); bytes written."""
    total = sum(len(p) for p in parts)
    while parts:
        n = os.writev(fd, parts)
        while parts and n >= len(parts[0]):
            n -= len(parts[0])
            parts = parts[1:]
        if parts and n:
            parts = [parts[0][n:], *parts[1:]]
    return total


def _read_all(fd: int, parts: list[memoryview]) -> bool:
    """readv until every view is filled; False when the file ends first."""
    while parts:
        n = os.readv(fd, parts)
        if not n:
            return False
        while parts and n >= len(parts[0]):
            n -= len(parts[0])
            parts = parts[1:]
        if parts and n:
            parts = [parts[0][n:], *parts[1:]]
    return True


def _tensor_bytes(t: torch.Tensor) -> memoryview:
    flat = t.detach().to("cpu").contiguous().reshape(-1)
    if flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    raw: Any = flat.view(torch.uint8).numpy()
    return memoryview(raw).cast("B")


def safetensors_header(
    tensors: Mapping[str, torch.Tensor], metadata: Mapping[str, str] | None = None
) -> bytes:
    """The 8-byte length and JSON header of a safetensors file holding `tensors` in order."""
    header: dict[str, Any] = {"__metadata__": dict(metadata)} if metadata else {}
    offset = 0
    for name, t in tensors.items():
        if t.dtype not in _DTYPES:
            raise ValueError(f"{name}: dtype {t.dtype} has no safetensors name")
        n = t.numel() * t.element_size()
        header[name] = {
            "dtype": _DTYPES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + n],
        }
        offset += n
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)  # the format aligns tensor data to 8 bytes
    return len(blob).to_bytes(8, "little") + blob


def write_safetensors(
    tensors: Mapping[str, torch.Tensor],
    path: Path,
    metadata: Mapping[str, str] | None = None,
    *,
    fsync: bool = True,
) -> FileDigest:
    """Stream `tensors` into a safetensors file at `path`, hashing while writing.

    No serialised copy of the whole state is built in memory (`safetensors.torch.save_file`
    builds one); the header and each tensor's bytes go from their memory to the file with
    writev, the SHA-256 computed in a second thread as they go. With `fsync`, writeback
    starts slice by slice while the rest is still being written, and the file is fsync'ed
    before this returns. Tensors on a GPU are copied to the host one at a time.
    """
    with _create(path) as fd, ThreadPoolExecutor(1) as pool:
        sink = _StreamWriter(fd, pool, durable=fsync)
        header = memoryview(safetensors_header(tensors, metadata))
        # a generator: a GPU tensor's host copy is made only when its turn to be written comes
        sink.write_views(itertools.chain([header], (_tensor_bytes(t) for t in tensors.values())))
        digest = sink.finish()
        if fsync:
            os.fsync(fd)
    return FileDigest(path.name, sink.size, digest)


@contextmanager
def _create(path: Path) -> Iterator[int]:
    """A new (or emptied) file open for writing, as open(path, "wb") but unbuffered."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        yield fd
    finally:
        os.close(fd)


def _write_hashed(path: Path, payload: bytes | None, obj: Any = None) -> FileDigest:
    with open(path, "wb") as handle:
        sink = _HashedFile(handle)
        if payload is not None:
            sink.write(payload)
        else:
            torch.save(obj, sink)  # type: ignore[arg-type]  # any object with write/flush
        handle.flush()
        os.fsync(handle.fileno())
    return FileDigest(path.name, sink.size, sink.digest.hexdigest())


def _byte_view(t: torch.Tensor) -> memoryview:
    """The bytes of a contiguous CPU tensor, writable, as the tensor holds them."""
    raw: Any = t.reshape(-1).view(torch.uint8).numpy()
    return memoryview(raw).cast("B")


class _HashedReads:
    """A reader over a handle that adds every byte it returns to `digest`."""

    def __init__(self, handle: BinaryIO, digest: Any) -> None:
        self.handle = handle
        self.digest = digest

    def read(self, n: int) -> bytes:
        chunks: list[bytes] = []
        while n > 0 and (chunk := self.handle.read(n)):
            chunks.append(chunk)
            n -= len(chunk)
        data = b"".join(chunks)
        self.digest.update(data)
        return data


@dataclass
class _Loaded:
    """A safetensors file read once: its digest, and its tensors or why there are none."""

    digest: FileDigest
    tensors: dict[str, torch.Tensor] | None
    problem: str = ""


def _read_safetensors(path: Path) -> _Loaded:
    """Read a safetensors file into new CPU tensors, hashing the bytes as they arrive.

    Only the header (bounded JSON, checked as the reference loader checks it) is parsed to
    know where each tensor's bytes go; they are read straight into the tensor's memory and
    hashed in a second thread, so the tensors hold exactly the bytes hashed. The digest is
    of the whole file also when the header is refused, so that a tampered file is told
    apart from a corrupt one. The caller compares it before any tensor is used.
    """
    digest = hashlib.sha256()
    with open_regular_raw(path) as handle, ThreadPoolExecutor(1) as pool:
        size = os.fstat(handle.fileno()).st_size
        info = inspect_handle(_HashedReads(handle, digest), size)
        problems = list(info.problems)
        problems += [f"dtype {t.dtype} has no torch type" for t in info.tensors
                     if t.dtype not in _TORCH_DTYPES]  # fmt: skip
        tensors: dict[str, torch.Tensor] = {}
        if not problems:
            # in file order, as safetensors' own loader returns them
            for t in sorted(info.tensors, key=lambda t: t.begin):
                tensors[t.name] = torch.empty(t.shape, dtype=_TORCH_DTYPES[t.dtype])
        pending: list[Future[None]] = []
        fd = handle.fileno()
        at = os.lseek(fd, 0, os.SEEK_CUR)
        # the header check proved that the tensors tile the rest of the file in this order
        for batch in _batches(_byte_view(t) for t in tensors.values()):
            # this slice and the next are requested at once: the disk reads the next one
            # while this one is copied and hashed
            prefetch(fd, at, AHEAD)
            if not _read_all(fd, batch):
                problems.append("the file ended before its last tensor")
                break
            at += sum(len(v) for v in batch)
            pending.append(pool.submit(_update, digest, batch))
        for job in pending:
            job.result()
    if problems:
        # a refused file is hashed again as it is now, as verify_checkpoint would hash it
        sha, size = sha256_path(path)
        return _Loaded(FileDigest(path.name, size, sha), None, "; ".join(problems))
    return _Loaded(FileDigest(path.name, size, digest.hexdigest()), tensors)


def read_safetensors(path: Path, sha256: str) -> dict[str, torch.Tensor]:
    """Load a safetensors file onto the CPU, verifying its SHA-256 while reading it.

    `sha256` is the digest the file must have (its SHA256SUMS line). The file is read
    once: its bytes go straight into the new tensors and are hashed in a second thread as
    they arrive, so no second pass is needed and the tensors returned hold exactly the
    bytes verified. A different digest is a `CheckpointError` (hash_mismatch) and no tensor
    is returned; a file that is not valid safetensors, one (unreadable).
    """
    loaded = _read_safetensors(path)
    if loaded.digest.sha256 != sha256:
        raise _mismatch(path, loaded.digest.sha256, sha256)
    if loaded.tensors is None:
        raise _not_safetensors(path, loaded.problem)
    return loaded.tensors


def _mismatch(target: Path, actual: str, expected: str) -> CheckpointError:
    return CheckpointError(
        "hash_mismatch",
        message(
            "portability",
            "SHA-256 {actual}... does not match {expected}... in {sums}: the file "
            "changed after it was written; nothing was loaded",
            actual=actual[:16],
            expected=expected[:16],
            sums=SUMS,
        ),
        target,
    )


def _not_safetensors(path: Path, problem: str) -> CheckpointError:
    return CheckpointError(
        "unreadable",
        message("portability", "not a valid safetensors file: {error}", error=problem),
        path,
    )


@dataclass
class CheckpointInfo:
    """A checkpoint on disk: its folder, step and the digest of every file."""

    path: Path
    step: int
    files: list[FileDigest]
    seconds: float = 0.0  # wall time of the whole write, fsyncs and rename included

    @property
    def total_bytes(self) -> int:
        """Bytes in the checkpoint's files (SHA256SUMS included)."""
        return sum(f.size for f in self.files)


class CheckpointWriter:
    """Builds one checkpoint folder under a hidden temporary name; `commit()` publishes it.

    Used as a context manager: leaving the block without `commit()` (an exception, a kill)
    removes the temporary folder, so no half-written checkpoint ever looks whole.
    """

    def __init__(self, root: Path, step: int) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.step = step
        self.final = root / f"{PREFIX}{step}"
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{PREFIX}{step}.", suffix=".tmp", dir=root))
        self.files: list[FileDigest] = []
        self.started = time.perf_counter()

    def __enter__(self) -> CheckpointWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.tmp.exists():
            shutil.rmtree(self.tmp, ignore_errors=True)

    def tensors(self, name: str, tensors: Mapping[str, torch.Tensor], meta: dict[str, str]) -> None:
        """A safetensors file."""
        self.files.append(write_safetensors(tensors, self.tmp / name, meta))

    def torch_object(self, name: str, obj: Any) -> None:
        """A torch.save file; `obj` must hold only what weights_only loading accepts."""
        self.files.append(_write_hashed(self.tmp / name, None, obj))

    def json(self, name: str, obj: Any) -> None:
        """A JSON file (sorted keys, UTF-8)."""
        text = json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        self.files.append(_write_hashed(self.tmp / name, text.encode()))

    def commit(self) -> CheckpointInfo:
        """Write SHA256SUMS, fsync the folder and rename it to `checkpoint-<step>`."""
        sums = format_sums(sorted(self.files, key=lambda f: f.path)).encode()
        self.files.append(_write_hashed(self.tmp / SUMS, sums))
        _fsync_dir(self.tmp)
        if self.final.exists():
            # Same step written again (a resumed run): replace it whole, never merge.
            shutil.rmtree(self.final)
        os.replace(self.tmp, self.final)
        _fsync_dir(self.root)
        seconds = time.perf_counter() - self.started
        return CheckpointInfo(self.final, self.step, list(self.files), seconds)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def list_checkpoints(root: Path) -> list[tuple[int, Path]]:
    """Published `checkpoint-<step>` folders under `root`, by step (temporary ones skipped)."""
    found: list[tuple[int, Path]] = []
    if not root.is_dir():
        return found
    for p in root.iterdir():
        if p.is_dir() and p.name.startswith(PREFIX) and p.name[len(PREFIX) :].isdigit():
            found.append((int(p.name[len(PREFIX) :]), p))
    return sorted(found)


def latest_checkpoint(root: Path) -> Path | None:
    """The published checkpoint with the highest step, or None."""
    found = list_checkpoints(root)
    return found[-1][1] if found else None


def verify_checkpoint(path: Path) -> list[FileDigest]:
    """Check every file against SHA256SUMS; raise CheckpointError on any difference.

    Every listed file must exist with its hash, every file present must be listed, and the
    files a checkpoint cannot do without (weights, trainer state, config) must be there.
    """
    return _check_files(path, _listed(path), {})


def _listed(path: Path) -> list[tuple[str, str, int]]:
    """SHA256SUMS's entries, once the folder holds it and no file it does not list."""
    sums_path = path / SUMS
    if not path.is_dir():
        raise CheckpointError(
            "not_a_checkpoint",
            message("portability", "no such checkpoint folder"),
            path,
        )
    if not sums_path.is_file():
        raise CheckpointError(
            "missing_sums",
            message("portability", "no {sums}: integrity cannot be checked", sums=SUMS),
            path,
        )
    try:
        entries = parse_sums(sums_path.read_text(encoding="utf-8"), sums_path)
    except (InputError, UnicodeDecodeError) as exc:
        raise CheckpointError(
            "unreadable",
            message(
                "portability", "{sums} is not a sha256sum file: {error}", sums=SUMS, error=str(exc)
            ),
            path,
        ) from None
    listed = {name for name, _h, _l in entries}
    present = {p.name for p in path.iterdir() if p.name != SUMS}
    for name in sorted(present - listed):
        raise CheckpointError(
            "unlisted_file",
            message("portability", "{name} is not listed in {sums}", name=name, sums=SUMS),
            path / name,
        )
    return entries


def _check_files(
    path: Path,
    entries: list[tuple[str, str, int]],
    readers: Mapping[str, Callable[[Path], FileDigest]],
) -> list[FileDigest]:
    """Each listed file against its line, in the order of SHA256SUMS.

    A file named in `readers` is hashed by its reader, which loads it while hashing it;
    every other file by `sha256_path`.
    """
    digests: list[FileDigest] = []
    for name, expected, _line in entries:
        target = path / name
        if "/" in name or name in ("", ".", "..") or not target.is_file():
            raise CheckpointError(
                "missing_file",
                message("portability", "{name} is listed but missing", name=name),
                target,
            )
        reader = readers.get(name)
        if reader is None:
            actual, size = sha256_path(target)
        else:
            got = reader(target)
            actual, size = got.sha256, got.size
        if actual != expected:
            raise _mismatch(target, actual, expected)
        digests.append(FileDigest(name, size, actual))
    listed = {name for name, _h, _l in entries}
    for name in REQUIRED:
        if name not in listed:
            raise CheckpointError(
                "missing_file",
                message("portability", "{name} is missing from the checkpoint", name=name),
                path,
            )
    return digests


@dataclass
class CheckpointState:
    """What a verified checkpoint holds, loaded onto the host."""

    path: Path
    step: int
    epoch: float
    config: dict[str, Any]
    weights: dict[str, torch.Tensor]
    trainer_state: dict[str, Any]
    environment: dict[str, Any]
    optimizer: dict[str, Any] | None = None
    scheduler: dict[str, Any] | None = None
    rng: dict[str, Any] | None = None
    files: list[FileDigest] = field(default_factory=list)

    @property
    def missing_for_resume(self) -> list[str]:
        """Files a resume at exactly this step needs and the checkpoint lacks."""
        have = {OPTIMIZER: self.optimizer, SCHEDULER: self.scheduler, RNG: self.rng}
        return [name for name, value in have.items() if value is None]


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except ValueError as exc:
        raise CheckpointError(
            "unreadable", message("portability", "not valid JSON: {error}", error=str(exc)), path
        ) from None
    if not isinstance(data, dict):
        raise CheckpointError("unreadable", message("portability", "not a JSON object"), path)
    return data


def _torch_file(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise CheckpointError(
            "unreadable",
            message("portability", "refused by weights-only loading: {error}", error=str(exc)),
            path,
        ) from None
    if not isinstance(data, dict):
        raise CheckpointError("unreadable", message("portability", "not a state dict"), path)
    return data


def read_checkpoint(path: Path) -> CheckpointState:
    """Verify (as `verify_checkpoint`) and then load a checkpoint folder onto the CPU.

    The weights are read once: hashed in their turn as they are read into their tensors,
    which are kept only when that digest is the one in SHA256SUMS; every other file is
    hashed before it is read. Errors are those `verify_checkpoint` raises, in its order.
    """
    loaded: dict[str, _Loaded] = {}

    def read_weights(target: Path) -> FileDigest:
        loaded[WEIGHTS] = _read_safetensors(target)
        return loaded[WEIGHTS].digest

    # the weights are required: _check_files returns only once read_weights has run
    digests = _check_files(path, _listed(path), {WEIGHTS: read_weights})
    state = _json(path / TRAINER_STATE)
    if state.get("format") != FORMAT:
        raise CheckpointError(
            "not_a_checkpoint",
            message("portability", "trainer_state.json format is not '{format}'", format=FORMAT),
            path,
        )
    weights = loaded[WEIGHTS].tensors
    if weights is None:
        raise _not_safetensors(path, loaded[WEIGHTS].problem)
    env_path = path / ENVIRONMENT
    return CheckpointState(
        path=path,
        step=int(state["global_step"]),
        epoch=float(state.get("epoch", 0.0)),
        config=_json(path / CONFIG),
        weights=weights,
        trainer_state=state,
        environment=_json(env_path) if env_path.is_file() else {},
        optimizer=_torch_file(path / OPTIMIZER),
        scheduler=_torch_file(path / SCHEDULER),
        rng=_torch_file(path / RNG),
        files=digests,
    )
