"""Copy an export out of object storage, hashing as it streams, and time it (SPEC E5, V1).

Throttled egress stretches the migration window: the audit copies the export from its
`--source` (any fsspec URL: `s3://bucket/prefix`, `gs://...`, `file://...`), measures the
bytes per second while copying and hashing, and extrapolates the time to move the whole
run (its size comes from the plan). The copy lands in a temporary folder beside the target
and is renamed into place only when every file arrived: a failed or denied copy leaves
nothing half-written.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from gpudecide.artifacts.hashing import FileDigest, path_key
from gpudecide.errors import InputError, from_os_error
from gpudecide.fsutil import CHUNK, ProgressFn, ensure_dir

__all__ = [
    "COPY_CHUNK",
    "Egress",
    "fetch",
    "filesystem",
    "parse_options",
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


def _denied(url: str, exc: BaseException) -> InputError:
    return InputError(
        "access denied reading {url} ({exc})",
        field="--source",
        hint="check the credentials and the bucket policy (403): the export cannot be read",
        url=url,
        exc=str(exc),
    )


def filesystem(url: str, options: dict[str, Any]) -> tuple[Any, str]:
    """The fsspec filesystem of `url` and the path inside it; a driver that is missing or a
    URL it refuses is an InputError naming `--source`."""
    try:
        import fsspec  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - fsspec is a dependency
        raise InputError("fsspec is not installed", field="--source") from None
    try:
        return fsspec.core.url_to_fs(url, **options)  # type: ignore[no-any-return]
    except ImportError as exc:
        proto = url.split("://", 1)[0]
        raise InputError(
            "no driver for {proto}:// ({exc})",
            field="--source",
            hint="install it, e.g. `pip install s3fs` for s3://",
            proto=proto,
            exc=str(exc),
        ) from None
    except (ValueError, TypeError) as exc:
        raise InputError(
            "cannot open {url}: {exc}", field="--source", url=url, exc=str(exc)
        ) from None


# transitional: gpudecide.portability.storage still calls it by this name
_filesystem = filesystem


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


def _find(fs: Any, root: str, url: str) -> dict[str, Any]:
    try:
        return fs.find(root, detail=True)  # type: ignore[no-any-return]
    except PermissionError as exc:
        raise _denied(url, exc) from None
    except FileNotFoundError:
        raise InputError("nothing there", field="--source", path=url) from None
    except OSError as exc:
        raise InputError(
            "cannot list {url}: {exc}", field="--source", url=url, exc=str(exc)
        ) from None


def _files_under(listing: dict[str, Any], root: str, url: str) -> list[tuple[str, str, int]]:
    """(path relative to the root, object name, size) of every file the listing holds."""
    root_key = str(root).rstrip("/")
    items: list[tuple[str, str, int]] = []
    for name, info in listing.items():
        if info.get("type") not in (None, "file"):
            continue
        rel = str(name)[len(root_key) :].lstrip("/") if str(name).startswith(root_key) else ""
        parts = PurePosixPath(rel).parts
        if not rel or ".." in parts or rel.startswith("/"):
            raise InputError(
                "object {name!r} is not under {url}", field="--source", name=str(name), url=url
            )
        items.append((rel, str(name), int(info.get("size") or 0)))
    if not items:
        raise InputError("no files under this URL", field="--source", path=url)
    return items


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
        raise _denied(url, exc) from None
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise InputError(
            "copy from {url} failed: {exc}", field="--source", url=url, exc=str(exc)
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
) -> Egress:
    """Copy every file under `url` into `dest` (new or empty), hashing while copying."""
    _require_new_or_empty(dest)
    fs, root = filesystem(url, options)
    started = time.perf_counter()
    listing = _find(fs, root, url)
    list_seconds = time.perf_counter() - started
    items = _files_under(listing, root, url)
    workers = max(1, min(streams, len(items)))
    copied, seconds = _copy_into(url, fs, items, dest, workers, on_bytes)
    digests = sorted((d for d, _ in copied), key=lambda d: path_key(d.path))
    return Egress(
        source=url,
        files=digests,
        bytes=sum(d.size for d in digests),
        seconds=seconds,
        list_seconds=list_seconds,
        streams=workers,
        per_file=sorted((t for _, t in copied), key=lambda p: path_key(str(p["path"]))),
    )
