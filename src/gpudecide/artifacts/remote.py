"""Copy an export out of object storage, hashing as it streams, and time it (SPEC E5, V1).

Throttled egress stretches the migration window: the audit copies the export from its
`--source` (any fsspec URL: `s3://bucket/prefix`, `gs://...`, `file://...`), measures the
bytes per second while copying and hashing, and extrapolates the time to move the whole
run (its size comes from the plan). The copy lands in a temporary folder beside the target
and is renamed into place only when every file arrived: a failed or denied copy leaves
nothing half-written.

What a record or an error shows of the URL is `shown_url`: no user information (an access
key and its secret in `s3://KEY:SECRET@bucket`), no query (a presigned URL's signature), no
fragment. A local source (a path or `file://`) is read like a local export: a FIFO or a
device is refused, links and other non-regular files are listed as skipped, never followed,
and nothing is read from a kernel file system (/proc, /sys).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import stat
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from gpudecide.artifacts import places
from gpudecide.artifacts.hashing import FileDigest, Skipped, path_key
from gpudecide.errors import InputError, from_os_error
from gpudecide.fsutil import CHUNK, ProgressFn, ensure_dir, file_kind
from gpudecide.message import message

__all__ = [
    "COPY_CHUNK",
    "Egress",
    "fetch",
    "filesystem",
    "parse_options",
    "shown_url",
]

COPY_CHUNK = 8 * CHUNK


@dataclass
class Egress:
    """What the copy measured."""

    source: str
    files: list[FileDigest]
    bytes: int
    seconds: float
    list_seconds: float
    streams: int
    per_file: list[dict[str, Any]] = field(default_factory=list)
    # Objects of a local source that were not copied (links, FIFOs, devices), and why.
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def bytes_per_second(self) -> float | None:
        """Measured throughput over the data transfer (listing excluded)."""
        return self.bytes / self.seconds if self.seconds > 0 else None

    def window_hours(self, run_bytes: int) -> float | None:
        """Hours to move `run_bytes` at the measured rate."""
        rate = self.bytes_per_second
        return run_bytes / rate / 3600 if rate else None


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """`key=value` storage options; true/false/none and integers are converted."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(
                "{pair!r} is not KEY=VALUE",
                field="--storage-option",
                hint="e.g. endpoint_url=http://host:9000",
                pair=pair,
            )
        low = value.lower()
        parsed: Any = value
        if low in ("true", "false"):
            parsed = low == "true"
        elif low in ("none", "null"):
            parsed = None
        elif value.isdigit():
            parsed = int(value)
        out[key] = parsed
    return out


def shown_url(url: str) -> str:
    """`url` as a record or an error may show it: without user information (a key and its
    secret), query (a presigned signature) or fragment. A plain path is shown as given."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("@", 1)[-1].split("?", 1)[0]
    if not parts.scheme or len(parts.scheme) == 1:  # a path, or a Windows drive letter
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _secrets_of(url: str) -> list[str]:
    """The parts of `url` a record must not show: its user information and its query."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    if not parts.scheme or len(parts.scheme) == 1:
        return []
    userinfo = parts.netloc.rpartition("@")[0]
    found = [userinfo, *userinfo.split(":")] if userinfo else []
    if parts.query:
        found.append(parts.query)
    return sorted((s for s in found if len(s) >= 3), key=len, reverse=True)


def _said(text: str, url: str) -> str:
    """A driver's error text with the URL as shown and no part of its user information or
    query anywhere in it (a driver may quote the URL whole, or the bucket it parsed)."""
    if not url:
        return text
    text = text.replace(url, shown_url(url))
    for secret in _secrets_of(url):
        text = text.replace(secret, "***")
    return text


def _denied(url: str, exc: BaseException, field_name: str) -> InputError:
    return InputError(
        "access denied reading {url} ({exc})",
        field=field_name,
        hint="check the credentials and the bucket policy (403): the export cannot be read",
        url=shown_url(url),
        exc=_said(str(exc), url),
    )


def filesystem(url: str, options: dict[str, Any], *, field: str = "--source") -> tuple[Any, str]:
    """The fsspec filesystem of `url` and the path inside it; a driver that is missing or a
    URL it refuses is an InputError naming `field` (the option the URL came from)."""
    try:
        import fsspec  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - fsspec is a dependency
        raise InputError("fsspec is not installed", field=field) from None
    try:
        return fsspec.core.url_to_fs(url, **options)  # type: ignore[no-any-return]
    except ImportError as exc:
        proto = url.split("://", 1)[0]
        raise InputError(
            "no driver for {proto}:// ({exc})",
            field=field,
            hint="install it, e.g. `pip install s3fs` for s3://",
            proto=proto,
            exc=_said(str(exc), url),
        ) from None
    except (ValueError, TypeError) as exc:
        raise InputError(
            "cannot open {url}: {exc}", field=field, url=shown_url(url), exc=_said(str(exc), url)
        ) from None


class _LocalFault(Exception):
    """A write to the local copy failed (as opposed to a read from the source)."""

    def __init__(self, error: OSError) -> None:
        self.error = error
        super().__init__(str(error))


def _local(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except OSError as exc:
        raise _LocalFault(exc) from None


def _require_new_or_empty(dest: Path) -> None:
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(
            "exists and is not an empty folder",
            path=dest,
            hint="with --source, EXPORT_DIR is where the copy goes: name a new folder",
        )


def _find(fs: Any, root: str, url: str, field_name: str) -> dict[str, Any]:
    try:
        return fs.find(root, detail=True)  # type: ignore[no-any-return]
    except PermissionError as exc:
        raise _denied(url, exc, field_name) from None
    except FileNotFoundError:
        raise InputError("nothing there", field=field_name, path=shown_url(url)) from None
    except OSError as exc:
        raise InputError(
            "cannot list {url}: {exc}",
            field=field_name,
            url=shown_url(url),
            exc=_said(str(exc), url),
        ) from None


def _is_local(fs: Any) -> bool:
    protocol = getattr(fs, "protocol", ())
    return "file" in (protocol if isinstance(protocol, (tuple, list)) else (protocol,))


def _local_root(root: str, url: str, field_name: str) -> None:
    """A local source is a folder of regular files on a disk: a FIFO or a device given as the
    source would block or never end, and a kernel file system holds no export."""
    try:
        mode = os.stat(root).st_mode
    except OSError:
        return  # the listing names what is wrong (nothing there, permission denied)
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        raise InputError(
            "is {file_kind}, not a regular file or a directory",
            path=shown_url(url),
            field=field_name,
            file_kind=file_kind(mode),
        )
    places.refuse_kernel_input(Path(root), field_name)


def _local_skip(name: str, info: dict[str, Any]) -> Skipped | None:
    """Why a local object is not copied: a link (never followed), not a regular file, or a
    file on a kernel file system (a mount inside the source)."""
    try:
        st = os.lstat(name)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode) or info.get("islink"):
        target = str(info.get("destination") or "?")
        why = message(
            "artifacts",
            "symbolic link to {target!r}: refused, links are not followed",
            target=target,
        )
        return Skipped(name, why)
    if not stat.S_ISREG(st.st_mode):
        return Skipped(name, message("artifacts", "not a regular file (socket, FIFO or device)"))
    kind = places.kernel_filesystem_of_device(st.st_dev)
    if kind is not None:
        return Skipped(
            name, message("artifacts", "on a {fstype} file system: not read", fstype=kind)
        )
    return None


def _files_under(
    listing: dict[str, Any], root: str, url: str, local: bool, field_name: str
) -> tuple[list[tuple[str, str, int]], list[Skipped]]:
    """(path relative to the root, object name, size) of every file the listing holds, and
    the local objects left out (with the path relative to the root)."""
    root_key = str(root).rstrip("/")
    items: list[tuple[str, str, int]] = []
    skipped: list[Skipped] = []
    for name, info in listing.items():
        rel = str(name)[len(root_key) :].lstrip("/") if str(name).startswith(root_key) else ""
        if local:
            skip = _local_skip(str(name), info)
            if skip is not None:
                skipped.append(Skipped(rel or PurePosixPath(str(name)).name, skip.why))
                continue
        if info.get("type") not in (None, "file"):
            continue
        parts = PurePosixPath(rel).parts
        if not rel or ".." in parts or rel.startswith("/"):
            raise InputError(
                "object {name!r} is not under {url}",
                field=field_name,
                name=str(name),
                url=shown_url(url),
            )
        items.append((rel, str(name), int(info.get("size") or 0)))
    if not items:
        raise InputError("no files under this URL", field=field_name, path=shown_url(url))
    return items, sorted(skipped, key=lambda s: path_key(s.path))


def _copy_file(
    fs: Any, tmp: Path, on_bytes: ProgressFn | None, item: tuple[str, str, int]
) -> tuple[FileDigest, dict[str, Any]]:
    """Copy one object into `tmp`, hashing while copying; its digest and its timing."""
    rel, name, _size = item
    target = tmp / rel
    _local(lambda: target.parent.mkdir(parents=True, exist_ok=True))
    digest = hashlib.sha256()
    n = 0
    t0 = time.perf_counter()
    with fs.open(name, "rb", block_size=COPY_CHUNK) as src, _local(open, target, "wb") as dst:
        while chunk := src.read(COPY_CHUNK):
            digest.update(chunk)
            _local(dst.write, chunk)
            n += len(chunk)
            if on_bytes is not None:
                on_bytes(len(chunk))
    timing = {"path": rel, "bytes": n, "seconds": round(time.perf_counter() - t0, 4)}
    return FileDigest(rel, n, digest.hexdigest()), timing


def _copy_into(
    url: str,
    fs: Any,
    items: list[tuple[str, str, int]],
    dest: Path,
    workers: int,
    on_bytes: ProgressFn | None,
    field_name: str,
) -> tuple[list[tuple[FileDigest, dict[str, Any]]], float]:
    """Copy every item into a hidden folder beside `dest`, then move it into place.

    Returns each file's digest and timing, and the seconds the copy took.
    """
    parent = dest.parent
    ensure_dir(parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=parent))
    copy = functools.partial(_copy_file, fs, tmp, on_bytes)
    t_copy = time.perf_counter()
    try:
        # Largest first, so one big file does not start last and run on alone.
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="egress") as pool:
            copied = list(pool.map(copy, sorted(items, key=lambda it: -it[2])))
        seconds = time.perf_counter() - t_copy
        if dest.exists():
            dest.rmdir()
        os.replace(tmp, dest)
    except _LocalFault as fault:
        # Disk full or read-only here is not the source's fault: name the local folder.
        shutil.rmtree(tmp, ignore_errors=True)
        raise from_os_error(fault.error, dest) from None
    except PermissionError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _denied(url, exc, field_name) from None
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise InputError(
            "copy from {url} failed: {exc}",
            field=field_name,
            url=shown_url(url),
            exc=_said(str(exc), url),
        ) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return copied, seconds


def fetch(
    url: str,
    dest: Path,
    options: dict[str, Any],
    *,
    streams: int = 4,
    on_bytes: ProgressFn | None = None,
    field: str = "--source",
) -> Egress:
    """Copy every file under `url` into `dest` (new or empty), hashing while copying;
    `field`: the option the URL came from, named by its errors."""
    _require_new_or_empty(dest)
    places.check_folder_output(dest, field=None)
    fs, root = filesystem(url, options, field=field)
    local = _is_local(fs)
    if local:
        _local_root(str(root), url, field)
    started = time.perf_counter()
    listing = _find(fs, root, url, field)
    list_seconds = time.perf_counter() - started
    items, skipped = _files_under(listing, root, url, local, field)
    workers = max(1, min(streams, len(items)))
    copied, seconds = _copy_into(url, fs, items, dest, workers, on_bytes, field)
    digests = sorted((d for d, _ in copied), key=lambda d: path_key(d.path))
    return Egress(
        source=shown_url(url),
        files=digests,
        bytes=sum(d.size for d in digests),
        seconds=seconds,
        list_seconds=list_seconds,
        streams=workers,
        per_file=sorted((t for _, t in copied), key=lambda p: path_key(str(p["path"]))),
        skipped=skipped,
    )
