"""MLflow runs as marks, from a file store (`mlruns/<experiment>/<run>/`) or a SQLite
tracking store, read directly (PyYAML for `meta.yaml`, `sqlite3` for the database): no
MLflow needed to read them.

Per run: the earliest metric timestamp is `first_step` (an upper bound: a metric is logged
after the steps it sums up; MLflow's own `system/...` metrics, sampled from the run's start,
are left out), checkpoint artifacts are `checkpoint` marks (a `checkpoint-N` folder, a
`.ckpt` file or a file under a folder named for checkpoints, at the file's time; only
artifacts on a local disk), the run's start joins it to a job by time (`seen`) and its end
is `end`. The job comes from tags or params (`slurm_job_id`, `job_id`, `pod`,
`training_job_name`, `host`, ...: `gpudecide.marks.sources.tag_keys`). Deleted runs are
left out.

The file store's layout (MLflow's `FileStore`): `meta.yaml` (run_id, start_time and
end_time in milliseconds, status as a number, artifact_uri, lifecycle_stage), `metrics/<key>`
(lines `timestamp value step`), `params/<key>` and `tags/<key>` (the value), `artifacts/`.
The SQLite store's tables used: `runs`, `metrics`, `tags`, `params`.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import yaml

from gpudecide.marks.model import Identity, Mark, MarkSet, Problem, Run, Where
from gpudecide.marks.sources import (
    identity_from_tags,
    mtime,
    newest_mtime,
    read_small,
    tag_keys,
    unreadable,
)
from gpudecide.message import message

__all__ = [
    "checkpoint_artifacts",
    "is_file_store_run",
    "is_sqlite_file",
    "read_file_store_run",
    "read_sqlite_store",
]

_SQLITE_MAGIC = b"SQLite format 3\x00"
# MLflow's RunStatus numbers (file store) and names (SQL store), as the marks say them.
_STATUS = {
    "1": None,
    "2": None,
    "3": "completed",
    "4": "failed",
    "5": "cancelled",
    "RUNNING": None,
    "SCHEDULED": None,
    "FINISHED": "completed",
    "FAILED": "failed",
    "KILLED": "cancelled",
}
_CHECKPOINT_DIR = re.compile(r"^checkpoint(?:s)?(?:[-_=]?(\d+))?$", re.IGNORECASE)
_STEP = re.compile(r"(?:step[=_-]?|checkpoint[-_])(\d+)", re.IGNORECASE)
_CHECKPOINT_SUFFIXES = (".ckpt", ".pt", ".pth", ".safetensors", ".bin", ".distcp")
_MAX_ENTRIES = 10_000
_MAX_DEPTH = 6
_METRIC_LINES = 64
_MAX_RUNS = 100_000


def _ms(value: Any) -> datetime | None:
    try:
        ms = int(value)
    except (TypeError, ValueError):
        return None
    if not 0 < ms < 10**14:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC)


def is_file_store_run(folder: Path) -> bool:
    """Whether a folder is one run of an MLflow file store."""
    return (folder / "meta.yaml").is_file() and (
        (folder / "metrics").is_dir() or (folder / "tags").is_dir()
    )


def is_sqlite_file(path: Path) -> bool:
    """Whether a file is a SQLite database (its first 16 bytes)."""
    try:
        with path.open("rb") as handle:
            return handle.read(16) == _SQLITE_MAGIC
    except OSError:
        return False


def _local_artifacts(uri: str | None, fallback: Path | None) -> Path | None:
    """The artifact folder on this machine: the run's artifact URI when it is a local path
    that exists, else the store's own `artifacts/` folder beside the run."""
    if uri:
        parsed = urlparse(uri)
        if parsed.scheme in ("", "file"):
            local = Path(unquote(parsed.path))
            if local.is_dir():
                return local
    if fallback is not None and fallback.is_dir():
        return fallback
    return None


def _walk(root: Path) -> Iterator[tuple[Path, bool]]:
    """(path, is_folder) below root, bounded in entries and depth, not following links."""
    stack: list[tuple[Path, int]] = [(root, 0)]
    count = 0
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            count += 1
            if count > _MAX_ENTRIES:
                return
            is_dir = entry.is_dir(follow_symlinks=False)
            yield Path(entry.path), is_dir
            named = _CHECKPOINT_DIR.match(entry.name)
            whole = named is not None and named.group(1) is not None  # checkpoint-N: one mark
            if is_dir and depth + 1 < _MAX_DEPTH and not whole:
                stack.append((Path(entry.path), depth + 1))


def checkpoint_artifacts(artifacts: Path, where: Where) -> list[Mark]:
    """Checkpoint marks for the checkpoints among a run's artifacts."""
    out: list[Mark] = []
    for path, is_dir in _walk(artifacts):
        step: int | None
        named = _CHECKPOINT_DIR.match(path.name)
        if is_dir and named and named.group(1) is not None:
            at = newest_mtime(path)
            step = int(named.group(1))
        elif not is_dir and (
            path.suffix.lower() == ".ckpt"
            or (
                path.suffix.lower() in _CHECKPOINT_SUFFIXES
                and any(_CHECKPOINT_DIR.match(p) for p in path.relative_to(artifacts).parts[:-1])
            )
        ):
            at = mtime(path)
            found = _STEP.search(path.name)
            step = int(found.group(1)) if found else None
        else:
            continue
        if at is not None:
            out.append(Mark(kind="checkpoint", at=at, step=step, path=str(path), where=where))
    return out


def _run(
    *,
    name: str,
    where: Where,
    start: Any,
    end: Any,
    status: Any,
    first_metric: tuple[Any, Any] | None,
    identity: Identity,
    artifacts: Path | None,
    folders: list[str],
) -> Run:
    marks: list[Mark] = []
    started = _ms(start)
    if started is not None:
        marks.append(Mark(kind="seen", at=started, where=where))
    if first_metric is not None:
        at = _ms(first_metric[0])
        step = first_metric[1]
        if at is not None:
            marks.append(
                Mark(
                    kind="first_step",
                    at=at,
                    step=step if isinstance(step, int) else None,
                    where=where,
                )
            )
    if artifacts is not None:
        marks.extend(checkpoint_artifacts(artifacts, where))
    ended = _ms(end)
    if ended is not None:
        marks.append(Mark(kind="end", at=ended, status=_STATUS.get(str(status)), where=where))
    return Run(
        source="mlflow", name=name, identity=identity, marks=marks, folders=folders, where=where
    )


def _first_metric_line(path: Path) -> tuple[int, int | None] | None:
    """The earliest (timestamp, step) among a metric file's first lines."""
    try:
        with path.open("rb") as handle:
            lines = [handle.readline(4096) for _ in range(_METRIC_LINES)]
    except OSError:
        return None
    best: tuple[int, int | None] | None = None
    for line in lines:
        parts = line.split()
        if len(parts) < 2:
            continue
        try:
            stamp = int(parts[0])
            step = int(parts[2]) if len(parts) > 2 else None
        except ValueError:
            continue
        if best is None or stamp < best[0]:
            best = (stamp, step)
    return best


def _values(folder: Path) -> dict[str, str]:
    """The tags or params of a file-store run that name the job."""
    keys = tag_keys()
    out: dict[str, str] = {}
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return out
    for entry in entries[:_MAX_ENTRIES]:
        if entry.name.lower() not in keys or not entry.is_file(follow_symlinks=False):
            continue
        try:
            data = read_small(Path(entry.path), 4096)
        except OSError:
            continue
        if data is not None:
            out[entry.name] = data.decode("utf-8", "replace")
    return out


def read_file_store_run(folder: Path, shown: str, folders: list[str] | None = None) -> MarkSet:
    """One run of an MLflow file store (`folder` holds its meta.yaml)."""
    out = MarkSet(files=1)
    meta_shown = f"{shown}/meta.yaml"
    where = Where(path=meta_shown)
    try:
        data = read_small(folder / "meta.yaml", 1 << 20)
    except OSError as exc:
        out.add(unreadable(meta_shown, exc))
        return out
    try:
        meta = yaml.safe_load(data) if data is not None else None
    except yaml.YAMLError:
        meta = None
    if not isinstance(meta, dict) or not (meta.get("run_id") or meta.get("run_uuid")):
        out.add(
            Problem(
                kind="not_mlflow",
                where=where,
                message=message("marks", "not the meta.yaml of an MLflow run"),
            )
        )
        return out
    if meta.get("lifecycle_stage") == "deleted":
        return out
    first: tuple[int, int | None] | None = None
    metrics = folder / "metrics"
    for path, is_dir in _walk(metrics) if metrics.is_dir() else ():
        rel = path.relative_to(metrics).parts
        if is_dir or rel[0] == "system":
            continue
        line = _first_metric_line(path)
        if line is not None and (first is None or line[0] < first[0]):
            first = line
    identity = identity_from_tags(_values(folder / "tags"), _values(folder / "params"))
    out.runs.append(
        _run(
            name=str(meta.get("run_id") or meta.get("run_uuid")),
            where=where,
            start=meta.get("start_time"),
            end=meta.get("end_time"),
            status=meta.get("status"),
            first_metric=first,
            identity=identity,
            artifacts=_local_artifacts(
                meta.get("artifact_uri") if isinstance(meta.get("artifact_uri"), str) else None,
                folder / "artifacts",
            ),
            folders=list(folders or []),
        )
    )
    return out


def _tracking_tables(con: sqlite3.Connection) -> bool:
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {"runs", "metrics", "tags", "params"} <= names


def read_sqlite_store(path: Path, shown: str, folders: list[str] | None = None) -> MarkSet:
    """Every run of an MLflow SQLite tracking store (opened read-only)."""
    out = MarkSet(files=1)
    where = Where(path=shown)
    try:
        con = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    except sqlite3.Error:
        out.add(
            Problem(
                kind="not_mlflow",
                where=where,
                message=message("marks", "not an MLflow tracking database"),
            )
        )
        return out
    try:
        if not _tracking_tables(con):
            out.add(
                Problem(
                    kind="not_mlflow",
                    where=where,
                    message=message("marks", "not an MLflow tracking database"),
                )
            )
            return out
        keys = sorted(tag_keys())
        marks = ",".join("?" for _ in keys)
        named: dict[str, dict[str, str]] = {}
        for table in ("tags", "params"):
            rows = con.execute(
                f"SELECT run_uuid, key, value FROM {table} WHERE lower(key) IN ({marks})", keys
            )
            for run_uuid, key, value in rows:
                named.setdefault(f"{table}:{run_uuid}", {})[str(key)] = str(value)
        # SQLite takes a bare column of a min() aggregate from the row with the minimum
        first = {
            run_uuid: (stamp, step)
            for run_uuid, stamp, step in con.execute(
                "SELECT run_uuid, min(timestamp), step FROM metrics "
                "WHERE key NOT LIKE 'system/%' GROUP BY run_uuid"
            )
        }
        runs = con.execute(
            "SELECT run_uuid, start_time, end_time, status, artifact_uri, lifecycle_stage "
            f"FROM runs ORDER BY start_time LIMIT {_MAX_RUNS}"
        ).fetchall()
    except sqlite3.Error:
        out.add(
            Problem(
                kind="not_mlflow",
                where=where,
                message=message("marks", "not an MLflow tracking database"),
            )
        )
        return out
    finally:
        con.close()
    for run_uuid, start, end, status, artifact_uri, stage in runs:
        if stage == "deleted":
            continue
        run_where = Where(path=f"{shown}#run={run_uuid}")
        identity = identity_from_tags(
            named.get(f"tags:{run_uuid}", {}), named.get(f"params:{run_uuid}", {})
        )
        out.runs.append(
            _run(
                name=str(run_uuid),
                where=run_where,
                start=start,
                end=end,
                status=status,
                first_metric=first.get(run_uuid),
                identity=identity,
                artifacts=_local_artifacts(
                    artifact_uri if isinstance(artifact_uri, str) else None, None
                ),
                folders=list(folders or []),
            )
        )
    return out
