"""External storage for exports: any fsspec URL; a local folder or `s3://` (s3fs) (SPEC E3.2).

    store = open_storage("s3://bucket/exports", {"endpoint_url": "http://127.0.0.1:9000"})
    sent = store.put_dir(Path("run/checkpoint-20"), "run-1/checkpoint-20")   # hashed as read
    store.listing("run-1")                      # ['checkpoint-20/SHA256SUMS', ...]
    got = store.get_dir("run-1", Path("restore/run-1"))                      # hashed as written
    sent.gbps, got.gbps, sent.bytes

A plain path (no `://`) is a local folder. Every transfer streams in 8 MiB pieces and hashes
what passes through it, so the SHA-256 of each exported file comes from the copy itself,
and measures its own throughput. Local uploads go to a temporary folder that is then
renamed; on an object store each object appears only once fully written, and the manifest
and sums files are written after the files they list. Downloads land in a temporary
folder renamed into place once every file arrived (`gpudecide.artifacts.remote.fetch`).
Storage errors become one-line input errors naming the URL; a refused credential (403)
says so.
"""

from __future__ import annotations

import hashlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from gpudecide.artifacts import remote
from gpudecide.artifacts.hashing import FileDigest, list_files, path_key
from gpudecide.errors import InputError

__all__ = [
    "LAST_NAMES",
    "PIECE",
    "Storage",
    "Transfer",
    "open_storage",
]

PIECE = 8 << 20
LAST_NAMES = ("run-manifest.json", "SHA256SUMS")


@dataclass
class Transfer:
    """One folder moved: files with their SHA-256, bytes, seconds, where from and to."""

    source: str
    target: str
    files: list[FileDigest]
    seconds: float
    per_file: list[dict[str, Any]] = field(default_factory=list)  # path, bytes, seconds

    @property
    def bytes(self) -> int:
        """Bytes moved."""
        return sum(f.size for f in self.files)

    @property
    def gbps(self) -> float | None:
        """Throughput in GB/s (1e9 bytes), None when nothing measurable moved."""
        return self.bytes / self.seconds / 1e9 if self.seconds > 0 and self.bytes else None

    def as_dict(self) -> dict[str, Any]:
        """JSON form for evidence figures."""
        return {
            "source": self.source,
            "target": self.target,
            "files": len(self.files),
            "bytes": self.bytes,
            "seconds": round(self.seconds, 6),
            "gbps": self.gbps,
            "per_file": self.per_file,
        }


def _denied(url: str, exc: BaseException) -> InputError:
    return InputError(
        "access denied at {url} ({exc})",
        field="--storage",
        hint="check the credentials and the bucket policy (403)",
        url=url,
        exc=exc,
    )


class Storage:
    """A folder at an fsspec URL, addressed by relative POSIX names."""

    def __init__(self, url: str, options: dict[str, Any] | None = None) -> None:
        self.url = url.rstrip("/")
        self.options = dict(options or {})
        if "://" not in self.url:
            self.url = str(Path(self.url).resolve())
        self.fs, root = remote.filesystem(self.url, self.options)
        self.root = str(root).rstrip("/")
        self._timings: list[dict[str, Any]] = []  # per-file timings of the running put_dir
        self.is_local = getattr(self.fs, "protocol", None) in ("file", ("file", "local"))

    def _path(self, name: str) -> str:
        parts = PurePosixPath(name).parts
        if ".." in parts or name.startswith("/"):
            raise InputError(
                "{name!r} is not a relative name inside the storage", field="name", name=name
            )
        return f"{self.root}/{name}".rstrip("/") if name else self.root

    def child_url(self, name: str) -> str:
        """The fsspec URL of `name` (what `get_dir` or `gpudecide audit --source` reads)."""
        return f"{self.url}/{name}" if name else self.url

    def _upload(self, src: Path, rel: str, tmp_dir: str) -> FileDigest:
        digest = hashlib.sha256()
        n = 0
        t0 = time.perf_counter()
        with open(src, "rb") as handle, self.fs.open(f"{tmp_dir}/{rel}", "wb") as out:
            while piece := handle.read(PIECE):
                digest.update(piece)
                out.write(piece)
                n += len(piece)
        self._timings.append({"path": rel, "bytes": n, "seconds": time.perf_counter() - t0})
        return FileDigest(rel, n, digest.hexdigest())

    def _put_all(
        self, found: list[tuple[str, Path, int]], base: str, streams: int
    ) -> list[FileDigest]:
        if self.is_local:
            for rel, _p, _s in found:
                self.fs.makedirs(str(PurePosixPath(f"{base}/{rel}").parent), exist_ok=True)
        # Manifests and sums go last: a reader that sees them sees every file they list.
        last = [it for it in found if PurePosixPath(it[0]).name in LAST_NAMES]
        first = [it for it in found if it not in last]
        with ThreadPoolExecutor(max(1, min(streams, len(found) or 1))) as pool:
            digests = list(pool.map(lambda it: self._upload(it[1], it[0], base), first))
        return digests + [self._upload(p, rel, base) for rel, p, _s in last]

    def put_dir(self, src: Path, name: str, streams: int = 4) -> Transfer:
        """Copy every file of the local folder `src` to `name` (replacing what was there).

        Locally the copy goes to a temporary folder renamed into place. On an object store,
        where there is no rename, each object appears only once fully written, and the run
        manifest and SHA256SUMS files are written after every file they list.
        """
        found, skipped = list_files(src)
        if skipped:
            raise InputError(
                "cannot export {file}: {reason}",
                path=src,
                file=skipped[0].path,
                reason=skipped[0].reason,
            )
        target = self._path(name)
        self._timings = []
        started = time.perf_counter()
        try:
            if self.fs.exists(target):
                self.fs.rm(target, recursive=True)
            if self.is_local:
                tmp = f"{target}.partial-{time.time_ns()}"
                digests = self._put_all(found, tmp, streams)
                self.fs.mv(tmp, target, recursive=True)
            else:
                digests = self._put_all(found, target, streams)
        except PermissionError as exc:
            raise _denied(self.child_url(name), exc) from None
        except OSError as exc:
            raise InputError(
                "export to {child_url} failed: {exc}",
                field="--storage",
                child_url=self.child_url(name),
                exc=exc,
            ) from None
        seconds = time.perf_counter() - started
        digests.sort(key=lambda d: path_key(d.path))
        timings = sorted(self._timings, key=lambda t: path_key(str(t["path"])))
        return Transfer(str(src), self.child_url(name), digests, seconds, timings)

    def get_dir(self, name: str, dest: Path, streams: int = 4) -> Transfer:
        """Copy everything under `name` into the new folder `dest`, hashing as it arrives."""
        started = time.perf_counter()
        egress = remote.fetch(self.child_url(name), dest, self.options, streams=streams)
        seconds = time.perf_counter() - started
        return Transfer(self.child_url(name), str(dest), egress.files, seconds, egress.per_file)

    def listing(self, name: str = "") -> list[str]:
        """Relative names of every file under `name` (empty when nothing is there)."""
        base = self._path(name)
        try:
            found = self.fs.find(base)
        except FileNotFoundError:
            return []
        except PermissionError as exc:
            raise _denied(self.child_url(name), exc) from None
        cut = len(base) + 1
        return sorted(str(p)[cut:] for p in found if str(p).startswith(base + "/"))

    def exists(self, name: str) -> bool:
        """Whether anything is stored at `name`."""
        return bool(self.fs.exists(self._path(name)))

    def remove(self, name: str) -> None:
        """Delete everything under `name`."""
        if self.exists(name):
            self.fs.rm(self._path(name), recursive=True)


def open_storage(url: str, options: dict[str, Any] | None = None) -> Storage:
    """The storage at `url` (a local folder when there is no scheme)."""
    return Storage(url, options)
