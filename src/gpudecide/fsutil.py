"""File helpers every module shares: regular-file reads, atomic writes, streamed SHA-256."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from gpudecide.errors import InputError

__all__ = [
    "AHEAD",
    "CHUNK",
    "NotRegularFileError",
    "ProgressFn",
    "atomic_write_bytes",
    "atomic_write_set",
    "atomic_write_text",
    "ensure_dir",
    "file_kind",
    "open_regular",
    "open_regular_raw",
    "prefetch",
    "read_regular",
    "relative_or_given",
    "require_regular_file",
    "sha256_handle",
    "sha256_path",
]


# 1 MiB: large enough that the per-call overhead (GIL hand-off, Python loop) is < 1 % of the
# time SHA-256 takes on the buffer, small enough that 16 hashing threads stay far below 100 MB.
CHUNK = 1 << 20
# How far ahead of a sequential reader the kernel is asked to read (`prefetch`): two 16 MiB
# slices, so the disk works on the next ones while the CPU copies and hashes this one.
AHEAD = 32 << 20
ProgressFn = Callable[[int], None]


def prefetch(fd: int, offset: int, length: int) -> None:
    """Ask the kernel to start reading `length` bytes at `offset` into the page cache now.

    Advice only (posix_fadvise WILLNEED): the call returns at once and a file system that
    ignores it, or a system without it, only reads as it would have. The verified load of a
    cold 1 GB checkpoint that asks for each slice and the next before reading them ran 1.1x
    faster at the median of eight rounds here, 1.2x at best (benchmarks/checkpoint_io.py).
    """
    _advise(fd, offset, length, "POSIX_FADV_WILLNEED")


def _advise(fd: int, offset: int, length: int, advice: str) -> None:
    """posix_fadvise where the system has it; a refusal changes nothing that is read."""
    if hasattr(os, "posix_fadvise"):
        with contextlib.suppress(OSError):
            os.posix_fadvise(fd, offset, length, getattr(os, advice))


def _read_position(handle: Any) -> tuple[int, int] | None:
    """(descriptor, offset) of a handle on a seekable file, else None (a pipe, a BytesIO)."""
    try:
        fd = handle.fileno()
        return fd, os.lseek(fd, 0, os.SEEK_CUR)
    except (AttributeError, OSError, ValueError):
        return None


def sha256_handle(handle: Any, on_bytes: ProgressFn | None = None) -> tuple[str, int]:
    """SHA-256 and length of everything readable from a binary handle, in constant memory."""
    digest = hashlib.sha256()
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    total = 0
    readinto = getattr(handle, "readinto", None)
    place = _read_position(handle)
    asked = 0  # bytes from the start position the kernel was asked to read ahead
    while True:
        if place is not None and total + AHEAD // 2 >= asked:
            prefetch(place[0], place[1] + asked, AHEAD)
            asked += AHEAD
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
    """SHA-256 and size of one regular file, streamed; OSError when it cannot be read."""
    # buffering=0: readinto goes straight from the kernel into our buffer, no second copy.
    # Only regular files: a FIFO would block for ever, /dev/zero would never end.
    with open_regular_raw(path) as handle:
        return sha256_handle(handle, on_bytes)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def ensure_dir(directory: Path) -> None:
    """Create `directory` and its parents; a file in the way is an InputError naming it."""
    for existing in (directory, *directory.parents):
        if os.path.lexists(existing):
            if not existing.is_dir():
                raise InputError(
                    "is a file, not a folder",
                    path=existing,
                    hint="move it away or choose another place than {directory}",
                    directory=directory,
                )
            break
    directory.mkdir(parents=True, exist_ok=True)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` so that a crash leaves either the old file or the new one.

    Temp file in the same directory, fsync, rename, fsync of the directory (DESIGN: writes are
    atomic; nothing half-written may look whole).
    """
    target = Path(path)
    ensure_dir(target.parent)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        # The temporary name means nothing to the user: name the file being written.
        raise type(exc)(exc.errno, exc.strerror, str(target)) from None
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would have.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise _named(exc, target) from None
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


# --- reading only regular files (issue: a FIFO or a device as an input hangs the CLI) -----------

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words, from its `st_mode`."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


class NotRegularFileError(OSError):
    """Raised for a FIFO, device, socket or directory where a regular file is read."""


def open_regular_raw(path: str | Path) -> BinaryIO:
    """Open `path` for binary reading only if it is a regular file; OSError otherwise.

    The open is non-blocking, so a FIFO without a writer cannot hang us, and the check is done
    on the opened descriptor (fstat), so the file cannot be swapped between check and read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(
                errno.EINVAL, f"is {file_kind(mode)}, not a regular file", str(path)
            )
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        # Every reader here goes from start to end: the hint doubles the kernel's readahead
        # window (a cold 1 GB file read in 16 MiB blocks: 1.07x-3x faster in runs here, the
        # disk being shared).
        _advise(fd, 0, 0, "POSIX_FADV_SEQUENTIAL")
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: str | Path) -> BinaryIO:
    """Open a user-given input for reading: a regular file, else a one-line InputError.

    Every reader of user input goes through here (issue 14 item 6: FIFOs and devices as
    inputs hung the CLI; DESIGN: bad input is one line, exit 2).
    """
    try:
        return open_regular_raw(path)
    except NotRegularFileError as exc:
        raise InputError(
            exc.strerror or "not a regular file", path=path, hint="only regular files are read"
        ) from None
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except NotADirectoryError:
        raise InputError(
            "a part of this path is a file, not a folder", path=path, hint="check the path"
        ) from None
    except PermissionError:
        raise InputError("permission denied", path=path) from None
    except OSError as exc:
        raise InputError("cannot open: {strerror}", path=path, strerror=exc.strerror) from None


def read_regular(path: str | Path, limit: int) -> bytes:
    """The whole content of a regular file of at most `limit` bytes (else an InputError)."""
    with open_regular(path) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise InputError("cannot read: {strerror}", path=path, strerror=exc.strerror) from None
    if len(data) > limit:
        raise InputError(
            "is larger than the {limit} MiB this input may have",
            path=path,
            hint="split it, or check that it is the file you meant",
            limit=limit // (1 << 20) or 1,
        )
    return data


# --- a set of files replaced as one unit (issue: report files of two runs side by side) --------

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    import ctypes  # only the report's swap needs it; every command imports this module

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    c_int, c_path = ctypes.c_int, ctypes.c_char_p
    renameat2.argtypes = [c_int, c_path, c_int, c_path, ctypes.c_uint]
    rc = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    errno_ = ctypes.get_errno()
    if errno_ in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(errno_, os.strerror(errno_), str(b))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# A staging folder untouched this long belongs to a killed run, not to one still writing.
_STALE_SECONDS = 600


def _clean_leftovers(parent: Path, name: str) -> None:
    """Remove set folders a killed earlier run left behind (never the live folder)."""
    now = time.time()
    for stale in parent.glob(f".{name}.set-*"):
        try:
            old = now - stale.lstat().st_mtime > _STALE_SECONDS
        except OSError:
            continue
        if old:
            shutil.rmtree(stale, ignore_errors=True)


def atomic_write_set(directory: str | Path, files: dict[str, bytes]) -> None:
    """Replace `directory` by a folder holding exactly `files` ({name: bytes}) as one unit.

    All files are written and fsynced in a new folder beside it, then the two folders are
    swapped in one rename (RENAME_EXCHANGE), so a reader sees the old set or the new set,
    never a mix and never a part (issue 14 item 12). Other entries of an existing folder are
    carried over (hard links for files, moved folders) so a shared `--out` folder keeps them.
    A failure (disk full, read-only) leaves the old folder untouched and raises OSError.
    """
    target = Path(directory)
    if any("/" in n or n in ("", ".", "..") for n in files):
        raise ValueError("file names of a set must be plain names")
    parent = target.parent
    ensure_dir(parent)
    if os.path.lexists(target) and not target.is_dir():
        raise InputError(
            "is a file, not a folder", path=target, hint="choose a folder to write these files to"
        )
    _clean_leftovers(parent, target.name)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.set-", dir=parent))
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, str(target)) from None
    try:
        os.chmod(staging, 0o777 & ~_umask())
        for name, data in sorted(files.items()):
            _write_synced(staging / name, data)
        if target.is_dir():
            _carry_over(target, staging, set(files))
        _fsync_dir(staging)
        if target.is_dir() and _exchange(staging, target):
            # `staging` now holds the old set.
            _fsync_dir(parent)
            shutil.rmtree(staging, ignore_errors=True)
            return
        if target.is_dir():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.set-", dir=parent))
            os.rmdir(old)
            os.rename(target, old)
            os.rename(staging, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(staging, target)
        _fsync_dir(parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _named(exc: OSError, path: Path) -> OSError:
    """The same fault with the path it happened on (a failed write() names no file)."""
    if exc.filename is not None:
        return exc
    return type(exc)(exc.errno, exc.strerror, str(path))


def _write_synced(path: Path, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise _named(exc, path) from None


def _carry_over(old: Path, new: Path, replaced: set[str]) -> None:
    for entry in old.iterdir():
        if entry.name in replaced:
            continue
        if entry.is_dir() and not entry.is_symlink():
            # A folder cannot be hard-linked; copying it keeps the old set whole until the swap.
            shutil.copytree(entry, new / entry.name, symlinks=True)
        else:
            os.link(entry, new / entry.name, follow_symlinks=False)


def require_regular_file(path: Path, what: str = "file") -> None:
    """An input given by path is a regular file: a FIFO or a device would block or never
    end, so it is refused by name before any reader opens it (issue 14 item 6)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except OSError as exc:
        raise InputError("cannot read: {strerror}", path=path, strerror=exc.strerror) from None
    if stat.S_ISDIR(mode):
        raise InputError("is a directory, not a {what}", path=path, what=what)
    if not stat.S_ISREG(mode):
        kind = file_kind(mode)
        raise InputError(
            "is {kind}, not a regular file" if kind.startswith("a ") else "is {kind}",
            path=path,
            hint="save the log to a file and give that file",
            kind=kind,
        )


def relative_or_given(path: Path, root: Path | None) -> str:
    """A path relative to `root` when it lies inside it, else as the user gave it."""
    if root is not None:
        try:
            return str(path.resolve().relative_to(root.resolve()))
        except ValueError:
            pass
    return str(path)
