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
Storage errors become one-line input errors naming `--storage` and the URL as `shown_url`
gives it (never a credential); a refused credential (403) says so. A URL that carries
credentials itself (`s3://KEY:SECRET@bucket`) is refused: they belong in the environment
(AWS_ACCESS_KEY_ID, ...) or a profile, not in a URL that records and logs would repeat. A
local storage is a folder on a disk: a file, a device or a kernel file system (/proc, /sys,
/dev) is refused. `Storage.check()` proves before a test starts that the storage answers
and takes a write (a closed port, missing credentials or a missing bucket: exit 2 before
anything trains).
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from gpudecide.artifacts import remote
from gpudecide.artifacts.hashing import FileDigest, list_files, path_key
from gpudecide.errors import InputError

__all__ = [
    "FIELD",
    "KERNEL_ROOTS",
    "LAST_NAMES",
    "PIECE",
    "Storage",
    "Transfer",
    "open_storage",
    "shown_url",
]

PIECE = 8 << 20
LAST_NAMES = ("run-manifest.json", "SHA256SUMS")
FIELD = "--storage"
# Folders whose files are the kernel's state: never a storage for exports.
KERNEL_ROOTS = ("/proc", "/sys", "/dev")
_KERNEL_TYPES = frozenset(
    {"proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "debugfs", "tracefs",
     "securityfs", "configfs", "pstore", "bpf", "mqueue", "hugetlbfs", "fusectl", "efivarfs"}
)  # fmt: skip
_SECRET_QUERY = ("signature", "credential", "token", "key", "secret", "password", "sig")


def shown_url(url: str) -> str:
    """`url` as a record, a message or a log may show it: without user information (an
    access key and its secret), without a query that carries a signature or a key, and
    without a fragment. A plain path is shown as given."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("@", 1)[-1].split("?", 1)[0]
    if not parts.scheme or len(parts.scheme) == 1 or "://" not in url:
        return url
    host = parts.netloc.rpartition("@")[2]
    query = parts.query
    if any(word in query.lower() for word in _SECRET_QUERY):
        query = ""
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


def _said(text: object, url: str) -> str:
    """A driver's error text with the URL (and its credentials) as shown."""
    out = str(text)
    parts = urlsplit(url) if "://" in url else None
    if parts is not None and "@" in parts.netloc:
        out = out.replace(url, shown_url(url)).replace(parts.netloc.rpartition("@")[0], "***")
    return out[:300]


def _kernel_fs(path: Path) -> str | None:
    """The kernel file system `path` (or its nearest existing parent) is on, else None."""
    real = os.path.realpath(path)
    for root in KERNEL_ROOTS:
        if real == root or real.startswith(root + "/"):
            return root
    probe = Path(real)
    existing = next((c for c in (probe, *probe.parents) if c.exists()), None)
    if existing is None:
        return None
    try:
        dev = os.stat(existing).st_dev
        mounts = Path("/proc/self/mounts").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3 or fields[2] not in _KERNEL_TYPES:
            continue
        try:
            if os.stat(fields[1]).st_dev == dev:
                return fields[2]
        except OSError:
            continue
    return None


def _local_folder(url: str) -> None:
    """A local storage is a folder on a disk (or a place one can be made)."""
    path = Path(url)
    kind = _kernel_fs(path)
    if kind is not None:
        raise InputError(
            "is on a kernel file system ({fstype}): exports are not written there",
            path=path,
            field=FIELD,
            hint="give a folder on a disk, or an s3:// URL",
            fstype=kind,
        )
    for existing in (path, *path.parents):
        try:
            mode = os.stat(existing).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise InputError(
                "cannot be used as storage: {error}", path=existing, field=FIELD, error=exc.strerror
            ) from None
        if not stat.S_ISDIR(mode):
            raise InputError(
                "is a file, not a folder: the storage is a folder exports are written into",
                path=existing,
                field=FIELD,
                hint="give a folder (it is created when missing), or an s3:// URL",
            )
        return


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
        field=FIELD,
        hint="check the credentials and the bucket policy (403)",
        url=shown_url(url),
        exc=_said(exc, url),
    )


def _unreachable(url: str, exc: BaseException) -> InputError:
    """A storage that does not answer, lacks credentials or has no such bucket."""
    kind = type(exc).__name__
    if kind == "NoCredentialsError" or "credentials" in str(exc).lower():
        return InputError(
            "no credentials for {url}",
            field=FIELD,
            hint="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a profile) in the "
            "environment; keys do not belong in the URL or the plan",
            url=shown_url(url),
        )
    if isinstance(exc, FileNotFoundError):
        return InputError(
            "{url} does not exist ({error})",
            field=FIELD,
            hint="create the bucket first, or check its name",
            url=shown_url(url),
            error=_said(exc, url),
        )
    return InputError(
        "storage {url} does not answer: {error}",
        field=FIELD,
        hint="check the endpoint (endpoint_url storage option), the network and the port",
        url=shown_url(url),
        error=_said(f"{kind}: {exc}", url),
    )


class Storage:
    """A folder at an fsspec URL, addressed by relative POSIX names."""

    def __init__(self, url: str, options: dict[str, Any] | None = None) -> None:
        self.url = url.rstrip("/") or url
        self.options = dict(options or {})
        if "://" in self.url and "@" in urlsplit(self.url).netloc:
            raise InputError(
                "{url}: credentials in the storage URL are refused",
                field=FIELD,
                hint="put them in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or "
                "a profile; records and logs repeat the URL",
                url=shown_url(self.url),
            )
        if self.url.startswith("file://"):
            self.url = self.url[len("file://") :] or "/"
        if "://" not in self.url:
            self.url = str(Path(self.url).resolve())
            _local_folder(self.url)
        try:
            self.fs, root = remote.filesystem(self.url, self.options)
        except InputError as exc:  # the URL came from --storage (or the plan's storage)
            values = {k: _said(v, self.url) for k, v in exc.values.items()}
            raise InputError(
                exc.template,
                path=exc.path,
                line=exc.line,
                field=FIELD,
                hint=exc.hint_template,
                **values,
            ) from None
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

    def object_path(self, name: str) -> str:
        """The driver's path of `name` (a relative name inside the storage)."""
        return self._path(name)

    def child_url(self, name: str) -> str:
        """The fsspec URL of `name` (what `get_dir` or `gpudecide audit --source` reads)."""
        return f"{self.url}/{name}" if name else self.url

    @property
    def shown(self) -> str:
        """The URL as records and messages show it (no credentials)."""
        return shown_url(self.url)

    def _quick_fs(self) -> Any:
        """The filesystem for the check: on S3 one attempt with short timeouts (botocore's
        retries take a minute to say a port is closed), unless the options set their own."""
        protocol = getattr(self.fs, "protocol", None)
        protocols = protocol if isinstance(protocol, tuple | list) else (protocol,)
        if "s3" not in protocols or "config_kwargs" in self.options:
            return self.fs
        quick = {
            **self.options,
            "skip_instance_cache": True,
            "config_kwargs": {
                "connect_timeout": 5,
                "read_timeout": 30,
                "retries": {"max_attempts": 1, "mode": "standard"},
            },
        }
        return remote.filesystem(self.url, quick)[0]

    def check(self) -> None:
        """Prove the storage answers and takes a write before a test relies on it: one small
        object written, read back and removed under a name of its own. A storage that does
        not answer, refuses the credentials or has no bucket is an InputError (exit 2)."""
        name = f".gpudecide-check-{os.getpid()}-{time.time_ns()}"
        path = self._path(name)
        fs = self._quick_fs()
        try:
            if self.is_local:
                fs.makedirs(self.root, exist_ok=True)
            with fs.open(path, "wb") as out:
                out.write(b"gpudecide storage check\n")
            with fs.open(path, "rb") as back:
                back.read()
            fs.rm(path)
        except PermissionError as exc:
            raise _denied(self.url, exc) from None
        except Exception as exc:  # any driver's failure, said in one line
            raise _unreachable(self.url, exc) from None

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
        except Exception as exc:  # an OSError or a driver's own (botocore)
            raise InputError(
                "export to {child_url} failed: {exc}",
                field=FIELD,
                child_url=shown_url(self.child_url(name)),
                exc=_said(exc, self.url),
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
