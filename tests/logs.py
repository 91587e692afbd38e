"""Small canonical CSV logs written by tests; every figure asserted is computed by hand."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

COLUMNS = [
    "job_id",
    "attempt",
    "name",
    "user",
    "kind",
    "chain_id",
    "gpu_count",
    "gpu_type",
    "priority",
    "priority_class",
    "state",
    "submit",
    "eligible",
    "start",
    "prep_start",
    "first_step",
    "last_checkpoint",
    "end",
    "wait_reason",
    "time_limit_s",
]


def write_csv(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write rows with the canonical columns (missing values empty)."""
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            unknown = set(row) - set(COLUMNS)
            assert not unknown, f"test log uses unknown columns {unknown}"
            writer.writerow({c: row.get(c, "") for c in COLUMNS})
    return path


def job(
    job_id: str,
    name: str,
    gpus: int | str,
    start: str,
    end: str,
    state: str = "completed",
    **extra: Any,
) -> dict[str, Any]:
    """One attempt; submit defaults to start."""
    row = {
        "job_id": job_id,
        "name": name,
        "gpu_count": gpus,
        "start": start,
        "end": end,
        "state": state,
        "submit": extra.pop("submit", start),
        "user": "u1",
    }
    row.update(extra)
    return row
