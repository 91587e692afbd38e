"""Measured throughput and migration windows, no more precise than the sample allows (E5, V1).

A window is extrapolated only from a sample at least as large as the plan's floor (default
256 MB) or from the whole export when the run is no bigger than the export itself; a
smaller sample gives its rate, its size and a note, never a window. Figures are rounded to
the significant digits the sample holds: 1 under 1 MB, 2 under the floor, 3 above. The
range is the lowest and highest rate of the files of at least 1 MB that made up the
sample (None with fewer than two such files).
"""

from __future__ import annotations

import math
from typing import Any

from gpudecide.message import english, message
from gpudecide.portability.plan import ExportTestPlan

__all__ = [
    "RANGE_MIN_BYTES",
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
