"""Measured throughput and migration windows, no more precise than the sample allows (E5, V1).

A window is extrapolated only from a sample at least as large as the plan's floor
(`throughput_floor_mb`, default 64 MB) or from the whole export when the run is no bigger
than the export itself; a smaller sample gives its rate, its size and a note, never a
window. Figures are rounded to the significant digits the sample holds: 1 under 1 MB, 2
under the floor, 3 above. The range is the lowest and highest rate of the files of at least
1 MB that made up the sample (None with fewer than two such files).

Why 64 MB: below it a rate measures latency and caches, not bandwidth. An object store
takes a sample of 64 MB in 8 pieces of 8 MiB (one request each, plus the upload's start and
completion), so the per-request latency of tens of milliseconds is a small part of the
time; a 0.5 MB export is one request, all latency. On a local disk the sample is written
with fsync and its pages are dropped from the page cache before it is read back, so both
rates are the disk's, not the memory's.

A test's own export is a few MB: `probe` measures the storage itself, writing a sample of
the floor's size beside the export, reading it back (its SHA-256 compared) and removing it.
The migration window of one full run is then the plan's `run_size_gb` over the slower of
the two rates. When the sample cannot be taken (the storage refuses it, the disk lacks the
room, the export was made elsewhere: `--from-export`) the throughput is "not measured", with
the command that would measure it.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import shutil
import time
from typing import TYPE_CHECKING, Any

from gpudecide.message import Message, english, message
from gpudecide.portability.plan import ExportTestPlan

if TYPE_CHECKING:
    from gpudecide.portability.storage import Storage

__all__ = [
    "POOL_PIECES",
    "RANGE_MIN_BYTES",
    "from_transfers",
    "migration_window_hours",
    "not_measured",
    "probe",
    "significant",
    "throughput_figures",
]


def significant(value: float, digits: int) -> float:
    """`value` rounded to `digits` significant digits."""
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


RANGE_MIN_BYTES = 1_000_000  # per-file rates of smaller files are mostly open/close latency


def _range(per_file: list[dict[str, Any]], digits: int) -> list[float] | None:
    """Lowest and highest per-file rate (GB/s) over files of at least 1 MB; None if < 2."""
    rates = [
        int(f["bytes"]) / float(f["seconds"]) / 1e9
        for f in per_file
        if int(f.get("bytes", 0)) >= RANGE_MIN_BYTES and float(f.get("seconds", 0)) > 0
    ]
    if len(rates) < 2:
        return None
    return [significant(min(rates), digits), significant(max(rates), digits)]


def throughput_figures(
    transfer: dict[str, Any] | None, floor_bytes: int, plan: ExportTestPlan
) -> dict[str, Any] | None:
    """Rate (GB/s), sample size, the digits it supports and, when allowed, the window."""
    if not transfer or not transfer.get("bytes") or not transfer.get("seconds"):
        return None
    n, secs = int(transfer["bytes"]), float(transfer["seconds"])
    digits = 1 if n < 1_000_000 else (2 if n < floor_bytes else 3)
    rate = n / secs
    out: dict[str, Any] = {
        "sample_bytes": n,
        "seconds": significant(secs, 3),
        "gbps": significant(rate / 1e9, digits),
        "significant_digits": digits,
        "floor_bytes": floor_bytes,
        "below_floor": n < floor_bytes,
        "range_gbps": _range(transfer.get("per_file") or [], digits),
        "migration_window_hours": None,
        "note": "",
    }
    run_bytes = int(plan.run_size_gb * 1e9) if plan.run_size_gb else None
    if run_bytes is None:
        note = message("portability", "no run_size_gb in the plan: no migration window computed")
    elif n >= floor_bytes or n >= run_bytes:
        out["migration_window_hours"] = significant(run_bytes / rate / 3600, digits)
        out["run_bytes"] = run_bytes
        return out
    else:
        note = message(
            "portability",
            "{n:num} bytes measured, under the {floor:num}-byte floor: too small a sample to "
            "extrapolate {run:num} bytes from; no window given",
            n=n,
            floor=floor_bytes,
            run=run_bytes,
        )
    # The note in English and as a message the report shows in the reader's language.
    out["note"], out["note_message"] = english(note), note
    return out


# Distinct random pieces the sample is written from (made before the clock starts, 64 MB):
# a larger sample repeats them, each repeat with its own counter in front.
POOL_PIECES = 8


def _pool(piece: int) -> list[bytes]:
    return [os.urandom(piece) for _ in range(POOL_PIECES)]


def _digits(n: int, floor: int) -> int:
    return 1 if n < 1_000_000 else (2 if n < floor else 3)


def not_measured(floor: int, why: Message, command: str, storage: str = "") -> dict[str, Any]:
    """The sample's figures when no sample was taken: why, and the command that would take
    one."""
    return {
        "measured": False,
        "source": None,
        "storage": storage,
        "sample_bytes": 0,
        "floor_bytes": floor,
        "write_seconds": None,
        "read_seconds": None,
        "write_gbps": None,
        "read_gbps": None,
        "gbps": None,
        "significant_digits": 0,
        "note": english(why),
        "note_message": why,
        "command": command,
    }


def _measured(
    source: str, storage: str, n: int, floor: int, write_s: float, read_s: float
) -> dict[str, Any]:
    digits = _digits(n, floor)
    write = significant(n / write_s / 1e9, digits) if write_s > 0 else None
    read = significant(n / read_s / 1e9, digits) if read_s > 0 else None
    slower = min(r for r in (write, read) if r is not None) if (write or read) else None
    why = message(
        "portability",
        "{n:num} bytes written and read back (the floor is {floor:num} bytes: below it, "
        "request latency and caches decide the rate, not the storage's bandwidth)",
        n=n,
        floor=floor,
    )
    return {
        "measured": True,
        "source": source,
        "storage": storage,
        "sample_bytes": n,
        "floor_bytes": floor,
        "write_seconds": significant(write_s, 3),
        "read_seconds": significant(read_s, 3),
        "write_gbps": write,
        "read_gbps": read,
        "gbps": slower,
        "significant_digits": digits,
        "note": english(why),
        "note_message": why,
        "command": "",
    }


def from_transfers(
    export: dict[str, Any] | None, restore: dict[str, Any] | None, floor: int, storage: str
) -> dict[str, Any] | None:
    """The sample when the export itself was at least the floor, written and read back."""
    if not export or not restore:
        return None
    n = int(export.get("bytes") or 0)
    if n < floor or int(restore.get("bytes") or 0) != n:
        return None
    return _measured(
        "export", storage, n, floor, float(export["seconds"]), float(restore["seconds"])
    )


def probe(storage: Storage, name: str, floor: int, command: str) -> dict[str, Any]:
    """Write `floor` bytes to `name` in the storage, read them back and remove them; the
    rates each way. Not measured (with why) when the storage refuses or lacks the room."""
    from gpudecide.portability.storage import PIECE

    shown = storage.shown
    path = storage.object_path(name)
    if storage.is_local:
        free = shutil.disk_usage(storage.root if os.path.isdir(storage.root) else "/").free
        if free < 2 * floor:
            why = message(
                "portability",
                "{free:num} bytes free on the storage's disk, too few for a {floor:num}-byte "
                "sample",
                free=free,
                floor=floor,
            )
            return not_measured(floor, why, command, shown)
    pool = _pool(PIECE)
    sent = hashlib.sha256()
    try:
        t0 = time.perf_counter()
        n = _write(storage, path, pool, floor, sent)
        write_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        got, back = _read(storage, path, PIECE)
        read_s = time.perf_counter() - t0
    except Exception as exc:  # any driver's failure: the figure is missing, not the test
        why = message(
            "portability",
            "the sample could not be written and read back: {error}",
            error=f"{type(exc).__name__}: {str(exc)[:200]}",
        )
        return not_measured(floor, why, command, shown)
    finally:
        with contextlib.suppress(Exception):  # already gone, or never written
            storage.fs.rm(path)
    if got != n or back != sent.hexdigest():
        why = message(
            "portability",
            "the sample read back differs from what was written ({got:num} of {n:num} bytes)",
            got=got,
            n=n,
        )
        return not_measured(floor, why, command, shown)
    return _measured("probe", shown, n, floor, write_s, read_s)


def _write(storage: Storage, path: str, pool: list[bytes], total: int, digest: Any) -> int:
    """The sample, written in pieces from the pool (each with its counter in front); on a
    local disk flushed with fsync and dropped from the page cache."""
    written = 0
    if storage.is_local:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle = open(path, "wb")  # noqa: SIM115 - the with below closes it, after fsync
    else:
        handle = storage.fs.open(path, "wb")
    with handle:
        i = 0
        while written < total:
            piece = memoryview(pool[i % len(pool)])[: total - written]
            head = i.to_bytes(8, "little")[: len(piece)]
            for part in (head, piece[len(head) :]):
                handle.write(part)
                digest.update(part)
            written += len(piece)
            i += 1
        if storage.is_local:
            handle.flush()
            os.fsync(handle.fileno())
            os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    return written


def _read(storage: Storage, path: str, piece: int) -> tuple[int, str]:
    digest = hashlib.sha256()
    n = 0
    opener = open if storage.is_local else storage.fs.open
    with opener(path, "rb") as handle:
        while chunk := handle.read(piece):
            digest.update(chunk)
            n += len(chunk)
    return n, digest.hexdigest()


def migration_window_hours(run_size_gb: float | None, gbps: float | None) -> float | None:
    """Hours to move one full run at the measured rate (None without either)."""
    if not run_size_gb or not gbps:
        return None
    return significant(run_size_gb / gbps / 3600, 3)
