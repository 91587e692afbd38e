"""Streamed, parallel SHA-256 of a file tree (SPEC A4, A5, E3 step 2).

* Streamed: every file is read into one reusable buffer per worker, so memory stays flat
  whatever the file size (a 4 GB shard costs the same few MiB as a 4 KB config).
* Parallel: hashlib releases the GIL while it digests a buffer larger than 2 KiB, so plain
  threads (one per core) hash several files at once; the biggest files are started first so
  that one large shard does not finish alone at the end.
* Nothing is ignored silently: symbolic links (they may point outside the root), sockets,
  FIFOs, devices, unreadable files, undecodable names and folders on a kernel file system
  mounted inside the tree (/proc, /sys) are listed in `skipped` with the reason, never hashed
  and never dropped without a word. A root on a kernel file system is bad input.

Output formats: `sha256sum` lines (``sha256sum -c`` reads them back), JSON, and the OpenSSF
model-signing v1.0 payload (an in-toto Statement whose `predicate.resources[]` carry one
SHA-256 per file, the "files" serialization). The per-file digest is the SHA-256 of the bytes
in all three, so a gpudecide manifest can be cross-checked against a model-signing signature.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from gpudecide.artifacts.places import kernel_filesystem_of_device, refuse_kernel_input
from gpudecide.errors import InputError
from gpudecide.fsutil import ProgressFn, file_kind, sha256_path
from gpudecide.message import Message, english, message
from gpudecide.textlines import split_lines

__all__ = [
    "IN_TOTO_STATEMENT",
    "MODEL_SIGNING_PREDICATE",
    "FileDigest",
    "Skipped",
    "SumsCheck",
    "TreeHash",
    "check_tree",
    "format_sums",
    "hash_files",
    "hash_tree",
    "list_files",
    "model_signing_statement",
    "normalise_name",
    "parse_sums",
    "path_key",
]

MODEL_SIGNING_PREDICATE = "https://model_signing/signature/v1.0"
IN_TOTO_STATEMENT = "https://in-toto.io/Statement/v1"


@dataclass(frozen=True)
class FileDigest:
    """One hashed file: POSIX path relative to the root, size in bytes, SHA-256 hex."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Skipped:
    """A path that was not hashed, and why (`why`: the reason as a message)."""

    path: str
    why: Message

    @property
    def reason(self) -> str:
        """Why, in English (the JSON outputs and the manifest keep it)."""
        return english(self.why)


@dataclass
class TreeHash:
    """The digests of a tree, plus everything that was left out and why."""

    root: Path
    files: list[FileDigest]
    skipped: list[Skipped]
    seconds: float = 0.0
    workers: int = 1
    excluded: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        """Bytes hashed."""
        return sum(f.size for f in self.files)

    def by_path(self) -> dict[str, FileDigest]:
        """Digests keyed by relative path."""
        return {f.path: f for f in self.files}

    def as_dict(self) -> dict[str, Any]:
        """Machine form (the `--json` output of `gpudecide hash`)."""
        secs = self.seconds
        return {
            "root": str(self.root),
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files],
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "excluded": list(self.excluded),
            "file_count": len(self.files),
            "total_bytes": self.total_bytes,
            "seconds": round(secs, 3),
            "throughput_mb_s": round(self.total_bytes / secs / 1e6, 1) if secs > 0 else None,
            "workers": self.workers,
        }


def path_key(rel: str) -> tuple[str, ...]:
    """Sort key of a relative path: component-wise, as model-signing orders its resources."""
    return PurePosixPath(rel).parts


def _rel(parts: Iterable[str]) -> str:
    return "/".join(parts)


def list_files(
    root: Path, exclude: Iterable[str] = ()
) -> tuple[list[tuple[str, Path, int]], list[Skipped]]:
    """Every regular file under `root` (relative POSIX path, absolute path, size).

    Links are not followed and are listed as skipped: a link may point outside the root, and
    a manifest that hashes what a link points at today proves nothing about tomorrow.
    """
    excluded = set(exclude)
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        raise InputError("no such file or directory", path=root) from None
    except PermissionError:
        raise InputError("permission denied", path=root) from None
    except OSError as exc:
        raise InputError("cannot read: {strerror}", path=root, strerror=exc.strerror) from None
    if stat.S_ISLNK(st.st_mode):
        # The root too: a link given as the root is listed and refused, never followed (a
        # link to /etc would otherwise hash /etc; README: links are listed, never followed).
        try:
            target = os.readlink(root)
        except OSError:
            target = "?"
        raise InputError(
            "is a symbolic link (to {target!r}); links are listed, never followed",
            path=root,
            hint="pass the folder itself if it is the one you mean",
            target=target,
        )
    refuse_kernel_input(root)
    if stat.S_ISREG(st.st_mode):
        return [(root.name, root, st.st_size)], []
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(
            "is {file_kind}, not a regular file or a directory",
            path=root,
            file_kind=file_kind(st.st_mode),
        )
    found: list[tuple[str, Path, int]] = []
    skipped: list[Skipped] = []

    def walk(directory: Path, prefix: tuple[str, ...], dev: int) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            if not prefix:  # the root itself: bad input, not a finding
                raise InputError(
                    "cannot read: {strerror}", path=root, strerror=exc.strerror
                ) from None
            why = message("artifacts", "directory not readable: {reason}", reason=exc.strerror)
            skipped.append(Skipped(_rel(prefix) + "/", why))
            return
        for entry in entries:
            parts = (*prefix, entry.name)
            rel = _rel(parts)
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                skipped.append(
                    Skipped(ascii(rel), message("artifacts", "file name is not valid UTF-8"))
                )
                continue
            if rel in excluded:
                continue
            try:
                if entry.is_symlink():
                    target = os.readlink(entry.path)
                    why = message(
                        "artifacts",
                        "symbolic link to {target!r}: refused, links are not followed",
                        target=target,
                    )
                    skipped.append(Skipped(rel, why))
                    continue
                if entry.is_dir(follow_symlinks=False):
                    sub = entry.stat(follow_symlinks=False).st_dev
                    kernel = kernel_filesystem_of_device(sub) if sub != dev else None
                    if kernel is not None:
                        why = message(
                            "artifacts", "on a {fstype} file system: not read", fstype=kernel
                        )
                        skipped.append(Skipped(rel + "/", why))
                        continue
                    walk(Path(entry.path), parts, sub)
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                why = message("artifacts", "cannot stat: {reason}", reason=exc.strerror)
                skipped.append(Skipped(rel, why))
                continue
            if stat.S_ISREG(info.st_mode):
                found.append((rel, Path(entry.path), info.st_size))
            else:
                why = message("artifacts", "not a regular file (socket, FIFO or device)")
                skipped.append(Skipped(rel, why))

    walk(root, (), st.st_dev)
    return found, skipped


def hash_files(
    items: list[tuple[str, Path, int]],
    *,
    workers: int | None = None,
    on_bytes: ProgressFn | None = None,
) -> tuple[list[FileDigest], list[Skipped], int]:
    """Hash files in parallel threads; unreadable ones come back as skipped, not errors."""
    n_workers = max(1, min(workers or os.cpu_count() or 1, len(items) or 1))

    def one(item: tuple[str, Path, int]) -> FileDigest | Skipped:
        rel, path, _size = item
        try:
            hexdigest, size = sha256_path(path, on_bytes)
        except PermissionError:
            return Skipped(rel, message("artifacts", "not readable (permission denied)"))
        except OSError as exc:
            reason = str(exc.strerror or exc)
            return Skipped(rel, message("artifacts", "not readable: {reason}", reason=reason))
        return FileDigest(rel, size, hexdigest)

    # Largest first (longest-processing-time scheduling): the big shard starts at once.
    ordered = sorted(items, key=lambda it: -it[2])
    if n_workers == 1:
        results = [one(it) for it in ordered]
    else:
        with ThreadPoolExecutor(max_workers=n_workers, thread_name_prefix="sha256") as pool:
            results = list(pool.map(one, ordered))
    digests = sorted(
        (r for r in results if isinstance(r, FileDigest)), key=lambda d: path_key(d.path)
    )
    skipped = [r for r in results if isinstance(r, Skipped)]
    return digests, skipped, n_workers


def hash_tree(
    root: Path,
    *,
    exclude: Iterable[str] = (),
    workers: int | None = None,
    on_bytes: ProgressFn | None = None,
    on_total: Callable[[int, int], None] | None = None,
) -> TreeHash:
    """Hash every regular file under `root` (or `root` itself when it is a file).

    `exclude` names relative paths left out on purpose (for example the manifest being
    written into the same folder); they are reported in `excluded`, not hidden.
    """
    excluded = sorted(set(exclude))
    items, skipped = list_files(root, excluded)
    if on_total is not None:
        on_total(len(items), sum(size for _, _, size in items))
    start = time.perf_counter()
    digests, unreadable, n_workers = hash_files(items, workers=workers, on_bytes=on_bytes)
    seconds = time.perf_counter() - start
    present = {rel for rel, _, _ in items}
    return TreeHash(
        root=root,
        files=digests,
        skipped=sorted(skipped + unreadable, key=lambda s: s.path),
        seconds=seconds,
        workers=n_workers,
        excluded=[e for e in excluded if e not in present],
    )


# ---- sha256sum format -------------------------------------------------------------------


def _escape(name: str) -> tuple[str, bool]:
    # GNU coreutils: a name with a backslash, newline or CR is escaped and the line starts
    # with a backslash, so `sha256sum -c` reads it back exactly.
    if not any(c in name for c in "\\\n\r"):
        return name, False
    return name.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r"), True


def _unescape(name: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(name):
        c = name[i]
        if c == "\\" and i + 1 < len(name):
            nxt = name[i + 1]
            out.append({"\\": "\\", "n": "\n", "r": "\r"}.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def format_sums(files: Iterable[FileDigest]) -> str:
    """`sha256sum` text: one `<hex>  <path>` line per file, paths relative to the root.

    Check it with `cd ROOT && sha256sum -c SUMS` (or `gpudecide hash ROOT --verify SUMS`).
    """
    lines = []
    for f in files:
        name, escaped = _escape(f.path)
        lead = "\\" if escaped else ""
        lines.append(f"{lead}{f.sha256}  {name}")
    return "".join(line + "\n" for line in lines)


_GNU_LINE = re.compile(r"^(\\?)([0-9a-fA-F]{64}) ([ *])(.+)$")
_BSD_LINE = re.compile(r"^(\\?)SHA256 \((.+)\) = ([0-9a-fA-F]{64})$")


def parse_sums(text: str, path: str | Path) -> list[tuple[str, str, int]]:
    """Read `sha256sum` output (GNU or BSD style): (name, hex, line number) per entry."""
    entries: list[tuple[str, str, int]] = []
    for lineno, raw in enumerate(split_lines(text), start=1):
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        gnu = _GNU_LINE.match(line)
        if gnu:
            escaped, hexdigest, _mode, name = gnu.groups()
        else:
            bsd = _BSD_LINE.match(line)
            if not bsd:
                raise InputError(
                    "not a sha256sum line",
                    path=path,
                    line=lineno,
                    hint="expected '<64 hex digits>  <file>' as `sha256sum` prints it",
                )
            escaped, name, hexdigest = bsd.groups()
        entries.append((_unescape(name) if escaped else name, hexdigest.lower(), lineno))
    if not entries:
        raise InputError("no checksum lines", path=path, hint="is this a sha256sum file?")
    return entries


@dataclass
class SumsCheck:
    """Result of checking a tree against a list of expected digests; `refusals` holds why
    each refused path was refused, as a message (`refused` keeps the English)."""

    ok: bool
    matched: int
    mismatched: list[dict[str, Any]]
    missing: list[str]
    extra: list[str]
    refused: list[dict[str, str]]
    skipped: list[Skipped]
    refusals: dict[str, Message] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Machine form."""
        return {
            "ok": self.ok,
            "matched": self.matched,
            "mismatched": self.mismatched,
            "missing": self.missing,
            "extra": self.extra,
            "refused": self.refused,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }


def _outside_root(name: str) -> Message | None:
    if name.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", name):
        return message("artifacts", "absolute path: refused, only files under the root are checked")
    parts = PurePosixPath(name).parts
    if ".." in parts:
        return message("artifacts", "'..' leaves the root: refused")
    return None


def normalise_name(name: str) -> str:
    """`./a/b` and `a//b` name the same file as `a/b`."""
    return str(PurePosixPath(name)) if name not in ("", ".") else name


def check_tree(tree: TreeHash, expected: list[tuple[str, str, int]]) -> SumsCheck:
    """Every expected digest matches, nothing expected is missing, nothing unexpected is there."""
    have = tree.by_path()
    skipped_paths = {s.path: s.why for s in tree.skipped}
    seen: set[str] = set()
    mismatched: list[dict[str, Any]] = []
    missing: list[str] = []
    refused: list[dict[str, str]] = []
    refusals: dict[str, Message] = {}

    def refuse(path: str, why: Message, lineno: int) -> None:
        refused.append({"path": path, "reason": english(why), "line": str(lineno)})
        refusals[path] = why

    matched = 0
    for name, hexdigest, lineno in expected:
        outside = _outside_root(name)
        if outside:
            refuse(name, outside, lineno)
            continue
        key = normalise_name(name)
        seen.add(key)
        got = have.get(key)
        if got is None:
            if key in skipped_paths:
                refuse(key, skipped_paths[key], lineno)
            else:
                missing.append(key)
        elif got.sha256 != hexdigest:
            mismatched.append({"path": key, "expected": hexdigest, "actual": got.sha256})
        else:
            matched += 1
    extra = [p for p in have if p not in seen]
    extra += [s.path for s in tree.skipped if s.path not in seen]
    ok = not (mismatched or missing or extra or refused)
    return SumsCheck(
        ok,
        matched,
        mismatched,
        missing,
        sorted(extra, key=path_key),
        refused,
        tree.skipped,
        refusals,
    )


# ---- OpenSSF model-signing export ---------------------------------------------------------


def model_signing_statement(
    files: Iterable[FileDigest], model_name: str, ignore_paths: Iterable[str] = ()
) -> dict[str, Any]:
    """The model-signing v1.0 payload ("files" serialization, SHA-256) of these digests.

    Shape (sigstore/model-transparency, `Payload`): an in-toto Statement v1 whose
    `predicate.resources` list `{name, algorithm, digest}` per file in path order, and whose
    single subject digest is the SHA-256 of all file digests (raw bytes) concatenated in that
    order. It is unsigned here: sign it with model-signing, or compare it with the payload of
    an existing signature to cross-check a gpudecide manifest.
    """
    ordered = sorted(files, key=lambda f: path_key(f.path))
    root = hashlib.sha256()
    resources = []
    for f in ordered:
        root.update(bytes.fromhex(f.sha256))
        resources.append({"name": f.path, "algorithm": "sha256", "digest": f.sha256})
    return {
        "_type": IN_TOTO_STATEMENT,
        "subject": [{"name": model_name, "digest": {"sha256": root.hexdigest()}}],
        "predicateType": MODEL_SIGNING_PREDICATE,
        "predicate": {
            "serialization": {
                "method": "files",
                "hash_type": "sha256",
                "allow_symlinks": False,
                "ignore_paths": sorted(ignore_paths),
            },
            "resources": resources,
        },
    }
