"""Where the artifact commands read from and write to, by class of path (issue 28).

Outputs (`hash --out`, `manifest create --out`, `manifest provenance --out`, `audit
--evidence-dir`, the folder `audit --source` copies into) are checked before any work is
done, and again when written:

* a regular file, or a new name in a writable folder: written atomically (a temporary file
  beside it, renamed into place), so a full disk or a kill leaves the old file or none;
* a pipe (a FIFO with its reader, `/dev/stdout`), a terminal, `/dev/null`, `/dev/zero` or
  `/dev/full`: written into as a stream, never replaced by a regular file; a FIFO without a
  reader is refused at once instead of blocking, and a write the device refuses
  (`/dev/full`: no space left) is exit 2;
* anything else is refused, naming it: a folder where a file is asked for (and a file where a
  folder is), a block device (the output is never written onto a disk), another character
  device, a socket, a path through a file, a read-only folder, a path on a kernel file system
  (/proc, /sys).

Inputs: a folder or file to hash or audit that lives on a kernel file system (/proc, /sys,
debugfs, ...) is refused: what it holds is the kernel's state, read-blocking in places
(`/proc/kmsg`), and no export. `special_filesystem` says which file system that is.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from gpudecide import mountinfo
from gpudecide.errors import InputError, from_os_error
from gpudecide.fsutil import atomic_write_bytes

__all__ = [
    "Target",
    "check_folder_output",
    "check_output",
    "kernel_filesystem_of_device",
    "refuse_kernel_input",
    "special_filesystem",
    "write_output",
]

# Where proc and sysfs are mounted on every Linux, for systems without /proc/self/mountinfo.
_KERNEL_ROOTS = (("/proc", "proc"), ("/sys", "sysfs"))
# Character devices that take a stream without harm: null, zero, full (major 1), and the
# terminals (4: tty0-63 and serial, 5: /dev/tty and /dev/console, 136-143: pseudo-terminals).
_STREAM_DEVICES = {(1, 3), (1, 5), (1, 7), (5, 0), (5, 1)}
_TERMINAL_MAJORS = {4, *range(136, 144)}
# Names that are a descriptor of this process: written in place, appended to, never replaced.
_DESCRIPTOR_PREFIXES = ("/dev/fd/", "/dev/stdout", "/dev/stderr", "/proc/self/fd/")


@lru_cache(maxsize=1)
def _mount_types() -> dict[int, str]:
    """st_dev -> file system type of the mounts this process sees (none off Linux); the
    first mount of a device is the one its files show."""
    types: dict[int, str] = {}
    for mount in mountinfo.read():
        if mount.dev is not None:
            types.setdefault(mount.dev, mount.fstype)
    return types


def kernel_filesystem_of_device(dev: int) -> str | None:
    """The kernel file system type of the mount whose st_dev is `dev`, else None."""
    kind = _mount_types().get(dev)
    return kind if kind in mountinfo.KERNEL_FILESYSTEMS else None


def special_filesystem(path: Path) -> str | None:
    """The kernel file system (`proc`, `sysfs`, ...) `path` or its nearest existing parent is
    on, else None."""
    probe = Path(os.path.abspath(path))
    for candidate in (probe, *probe.parents):
        try:
            dev = os.stat(candidate).st_dev
        except OSError:
            continue
        found = kernel_filesystem_of_device(dev)
        if found is not None:
            return found
        break
    real = os.path.realpath(probe)
    for root, kind in _KERNEL_ROOTS:
        if real == root or real.startswith(root + "/"):
            return kind
    return None


def refuse_kernel_input(path: Path, field: str | None = None) -> None:
    """An input on a kernel file system is bad input, named with its file system. A FIFO
    or a device is left to the reader, which names it as what it is."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = stat.S_IFREG  # not there (yet): where it would be decides
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return
    kind = special_filesystem(path)
    if kind is not None:
        raise InputError(
            "is on a {fstype} file system: its files are the kernel's state, not an export",
            path=path,
            field=field,
            hint="copy the files you mean into a folder and give that folder",
            fstype=kind,
        )


def _kernel_output(path: Path, field: str | None) -> None:
    kind = special_filesystem(path)
    if kind is not None:
        raise InputError(
            "is on a {fstype} file system: no output is written there",
            path=path,
            field=field,
            hint="write to a file on a disk",
            fstype=kind,
        )


@dataclass(frozen=True)
class Target:
    """Where an output goes: `file` (replaced atomically at `path`, the file a link points
    at) or `stream` (written into the pipe, terminal or device `path` names)."""

    kind: Literal["file", "stream"]
    path: Path


def _is_descriptor(path: Path) -> bool:
    text = str(path)
    if text.startswith(_DESCRIPTOR_PREFIXES):
        return True
    parts = Path(os.path.abspath(path)).parts
    return len(parts) >= 4 and parts[1] == "proc" and parts[3] == "fd"


def _device_ok(mode: int, rdev: int) -> bool:
    if not stat.S_ISCHR(mode):
        return False
    pair = (os.major(rdev), os.minor(rdev))
    return pair in _STREAM_DEVICES or pair[0] in _TERMINAL_MAJORS


def _not_writable(path: Path, code: int) -> InputError:
    return from_os_error(OSError(code, os.strerror(code), str(path)), path)


def _writable_folder(folder: Path, named: Path) -> None:
    """`folder` exists as a folder and this process may create files in it; the error
    names `named`, the path the user gave."""
    if not os.access(folder, os.W_OK | os.X_OK):
        try:
            probe = os.statvfs(folder)
            read_only = bool(probe.f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        raise _not_writable(named, errno.EROFS if read_only else errno.EACCES)


def _parent_for_new(path: Path, field: str | None, named: Path | None = None) -> None:
    """A name that does not exist yet: its nearest existing parent must be a writable folder
    (the folders between are created), never a file and never a kernel file system."""
    for parent in path.parents:
        if os.path.lexists(parent):
            try:
                mode = os.stat(parent).st_mode
            except OSError as exc:
                raise from_os_error(exc, parent) from None
            if not stat.S_ISDIR(mode):
                raise InputError(
                    "is a file, not a folder",
                    path=parent,
                    field=field,
                    hint="{target} is under it: move the file away or name another place",
                    target=str(path),
                )
            _kernel_output(parent, field)
            _writable_folder(parent, named or path)
            return


def check_output(path: Path, *, field: str | None = "--out") -> Target:
    """Where the output file `path` may be written, or InputError naming it (exit 2)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        _parent_for_new(path, field)
        raise _not_writable(path, errno.ENOTDIR) from None
    except OSError as exc:
        raise from_os_error(exc, path) from None
    if st is None:
        # A new name, or a link to one: the file is created where the link points.
        real = Path(os.path.realpath(path)) if os.path.islink(path) else path
        _kernel_output(real, field)
        _parent_for_new(real, field, path)
        return Target("file", real)
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise InputError(
            "is a folder, not a file",
            path=path,
            field=field,
            hint="name a file inside it, for example {example}",
            example=str(path / "SHA256SUMS"),
        )
    if stat.S_ISFIFO(mode) or _device_ok(mode, st.st_rdev):
        return Target("stream", path)
    if stat.S_ISREG(mode):
        if _is_descriptor(path):
            return Target("stream", path)
        real = Path(os.path.realpath(path))
        _kernel_output(real, field)
        _writable_folder(real.parent, path)
        return Target("file", real)
    if stat.S_ISBLK(mode):
        raise InputError(
            "is a block device: the output is never written onto a disk",
            path=path,
            field=field,
            hint="write to a file",
        )
    if stat.S_ISSOCK(mode):
        raise InputError("is a socket, not a file", path=path, field=field, hint="write to a file")
    raise InputError(
        "is a character device: only a pipe, a terminal or /dev/null takes the output",
        path=path,
        field=field,
        hint="write to a file",
    )


def check_folder_output(path: Path, *, field: str | None) -> None:
    """The folder `path` (existing, or to be created) can take new files, or InputError."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        real = Path(os.path.realpath(path)) if os.path.islink(path) else path
        _kernel_output(real, field)
        _parent_for_new(real, field, path)
        return
    except NotADirectoryError:
        _parent_for_new(path, field)
        raise _not_writable(path, errno.ENOTDIR) from None
    except OSError as exc:
        raise from_os_error(exc, path) from None
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(
            "is not a folder",
            path=path,
            field=field,
            hint="name a folder (it is created when it does not exist)",
        )
    _kernel_output(path, field)
    _writable_folder(path, path)


def _open_stream(path: Path, field: str | None) -> int:
    flags = os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    if _is_descriptor(path):
        flags |= os.O_APPEND  # `>> file` stays appended to; `> file` is empty already
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise InputError(
                "is a FIFO with no reader",
                path=path,
                field=field,
                hint="start the reader first, or write to a file",
            ) from None
        raise from_os_error(exc, path) from None
    # Non-blocking only to open a FIFO without a reader; the writes wait for the reader.
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def _write_stream(path: Path, data: bytes, field: str | None) -> None:
    fd = _open_stream(path, field)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as exc:
        raise from_os_error(exc, path) from None
    finally:
        os.close(fd)


def write_output(path: Path, text: str, *, field: str | None = "--out") -> Target:
    """Write `text` (UTF-8) where `path` says: the class is checked again, so a device put in
    place since the first check is written into, never replaced."""
    target = check_output(path, field=field)
    data = text.encode("utf-8")
    if target.kind == "stream":
        _write_stream(target.path, data, field)
        return target
    try:
        atomic_write_bytes(target.path, data)
    except OSError as exc:
        raise from_os_error(exc, target.path) from None
    return target
