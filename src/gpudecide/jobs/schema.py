"""The canonical job table (DESIGN: canonical job record) as an Arrow schema; its words
(columns, kinds, states) are `gpudecide.jobs.columns`, re-exported here.

One row per *attempt*: a Slurm job requeued twice has three rows sharing `job_id` with
`attempt` 1, 2, 3. A value the source does not carry is null, never guessed.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from gpudecide.jobs.columns import (
    CANONICAL_COLUMNS,
    COLUMN_DOCS,
    KINDS,
    REQUIRED_COLUMNS,
    RESTART_AFTER_STATES,
    SLURM_COMPACT_STATES,
    SLURM_STATES,
    STATES,
    TIMESTAMP_COLUMNS,
)

__all__ = [
    "ATTEMPTS_SCHEMA",
    "CANONICAL_COLUMNS",
    "COLUMN_DOCS",
    "KINDS",
    "REQUIRED_COLUMNS",
    "RESTART_AFTER_STATES",
    "SLURM_COMPACT_STATES",
    "SLURM_STATES",
    "STATES",
    "TIMESTAMP_COLUMNS",
    "attempts_table",
]

_TS = pa.timestamp("us", tz="UTC")

ATTEMPTS_SCHEMA = pa.schema(
    [
        pa.field("source", pa.string(), nullable=False),
        pa.field("job_id", pa.string(), nullable=False),
        pa.field("attempt", pa.int32(), nullable=False),
        pa.field("array_job_id", pa.string()),
        pa.field("chain_id", pa.string()),
        pa.field("name", pa.string()),
        pa.field("kind_label", pa.string()),
        pa.field("user", pa.string()),
        pa.field("team", pa.string()),
        pa.field("partition", pa.string()),
        pa.field("gpu_count", pa.int32()),
        pa.field("gpu_type", pa.string()),
        pa.field("req_gpus", pa.int32()),
        pa.field("priority", pa.int64()),
        pa.field("priority_class", pa.string()),
        pa.field("site", pa.string()),
        pa.field("state", pa.string(), nullable=False),
        pa.field("state_detail", pa.string()),
        pa.field("exit_code", pa.string()),
        pa.field("wait_reason", pa.string()),
        *(pa.field(c, _TS) for c in TIMESTAMP_COLUMNS),
        pa.field("elapsed_s", pa.float64()),
        pa.field("time_limit_s", pa.int64()),
        pa.field("steps", pa.int32()),
        pa.field("pending_tasks", pa.int32()),
        pa.field("extras", pa.string()),
        # where gpu_count came from (sacct: AllocTRES, AllocGRES, ReqTRES, ReqGRES); null for
        # sources with a gpu_count column of their own, and where the row had no GPU field
        pa.field("gpu_source", pa.string()),
    ]
)


def attempts_table(rows: list[dict[str, Any]], source: str) -> pa.Table:
    """Canonical rows (dicts keyed by column name; missing keys are null) as an Arrow table."""
    columns: dict[str, list[Any]] = {f.name: [] for f in ATTEMPTS_SCHEMA}
    for row in rows:
        for name in columns:
            columns[name].append(source if name == "source" else row.get(name))
    return pa.table(columns, schema=ATTEMPTS_SCHEMA)
