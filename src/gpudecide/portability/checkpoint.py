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

Loading (`read_checkpoint`) checks SHA256SUMS against every file BEFORE any byte is parsed:
a tampered or truncated file, a file missing from the sums or a file the sums do not list
is a `CheckpointError`. The `.pt`/`.pth` files are then read with
`torch.load(weights_only=True)`, which constructs only tensors and plain containers and
never runs code from the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import torch

from gpudecide.artifacts.hashing import FileDigest, format_sums, parse_sums
from gpudecide.errors import InputError
from gpudecide.fsutil import sha256_path
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


class _HashingWriter:
    """A binary sink that hashes every byte it writes (in a helper thread) and counts them."""

    def __init__(self, handle: BinaryIO, pool: ThreadPoolExecutor | None) -> None:
        # pool=None: hash inline, for callers (torch.save) that reuse a buffer after write().
        self.handle = handle
        self.digest = hashlib.sha256()
        self.size = 0
        self._pool = pool
        self._pending: list[Future[None]] = []

    def write(self, data: bytes | memoryview) -> int:
        view = memoryview(data).cast("B")
        for start in range(0, len(view), SLICE):
            part = view[start : start + SLICE]
            if self._pool is None:
                self.digest.update(part)
                self.handle.write(part)
                self.size += len(part)
                continue
            # hashlib releases the GIL on large buffers: the hash of this slice runs while
            # the same slice is written; one worker keeps the updates in order.
            self._pending.append(self._pool.submit(self.digest.update, part))
            self.handle.write(part)
            self.size += len(part)
            if len(self._pending) > 4:
                self._pending.pop(0).result()
        return len(view)

    def flush(self) -> None:
        self.handle.flush()

    def finish(self) -> str:
        for job in self._pending:
            job.result()
        self._pending.clear()
        return self.digest.hexdigest()


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
    builds one); each tensor's bytes go from its storage to the file. Tensors on a GPU are
    copied to the host one at a time.
    """
    with open(path, "wb") as handle, ThreadPoolExecutor(1) as pool:
        sink = _HashingWriter(handle, pool)
        sink.write(safetensors_header(tensors, metadata))
        for t in tensors.values():
            sink.write(_tensor_bytes(t))
        digest = sink.finish()
        handle.flush()
        if fsync:
            os.fsync(handle.fileno())
    return FileDigest(path.name, sink.size, digest)


def _write_hashed(path: Path, payload: bytes | None, obj: Any = None) -> FileDigest:
    with open(path, "wb") as handle:
        sink = _HashingWriter(handle, None)
        if payload is not None:
            sink.write(payload)
        else:
            torch.save(obj, sink)  # type: ignore[arg-type]  # any object with write/flush
        digest = sink.finish()
        handle.flush()
        os.fsync(handle.fileno())
    return FileDigest(path.name, sink.size, digest)


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
    digests: list[FileDigest] = []
    for name, expected, _line in entries:
        target = path / name
        if "/" in name or name in ("", ".", "..") or not target.is_file():
            raise CheckpointError(
                "missing_file",
                message("portability", "{name} is listed but missing", name=name),
                target,
            )
        actual, size = sha256_path(target)
        if actual != expected:
            raise CheckpointError(
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
        digests.append(FileDigest(name, size, actual))
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
    """Verify (`verify_checkpoint`) and then load a checkpoint folder onto the CPU."""
    from safetensors.torch import load_file

    digests = verify_checkpoint(path)
    state = _json(path / TRAINER_STATE)
    if state.get("format") != FORMAT:
        raise CheckpointError(
            "not_a_checkpoint",
            message("portability", "trainer_state.json format is not '{format}'", format=FORMAT),
            path,
        )
    try:
        weights = load_file(str(path / WEIGHTS), device="cpu")
    except Exception as exc:
        raise CheckpointError(
            "unreadable",
            message("portability", "not a valid safetensors file: {error}", error=str(exc)),
            path,
        ) from None
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
