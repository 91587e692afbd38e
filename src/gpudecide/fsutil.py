"""File helpers every module shares: atomic writes and streamed SHA-256."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

# 1 MiB: large enough that the per-call overhead (GIL hand-off, Python loop) is < 1 % of the
# time SHA-256 takes on the buffer, small enough that 16 hashing threads stay far below 100 MB.
CHUNK = 1 << 20
ProgressFn = Callable[[int], None]


def sha256_handle(handle: Any, on_bytes: ProgressFn | None = None) -> tuple[str, int]:
    """SHA-256 and length of everything readable from a binary handle, in constant memory."""
    digest = hashlib.sha256()
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    total = 0
    readinto = getattr(handle, "readinto", None)
    while True:
        if readinto is not None:
            n = readinto(buf)
            if not n:
                break
            digest.update(view[:n])
        else:
            chunk = handle.read(CHUNK)
            if not chunk:
                break
            n = len(chunk)
            digest.update(chunk)
        total += n
        if on_bytes is not None:
            on_bytes(n)
    return digest.hexdigest(), total


def sha256_path(path: str | Path, on_bytes: ProgressFn | None = None) -> tuple[str, int]:
    """SHA-256 and size of one file, streamed; raises OSError when it cannot be read."""
    # buffering=0: readinto goes straight from the kernel into our buffer, no second copy.
    with open(path, "rb", buffering=0) as handle:
        return sha256_handle(handle, on_bytes)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` so that a crash leaves either the old file or the new one.

    Temp file in the same directory, fsync, rename, fsync of the directory (DESIGN: writes are
    atomic; nothing half-written may look whole).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would have.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def atomic_write_text(path: str | Path, text: str) -> None:
    """UTF-8 text variant of :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"))
