"""What every marks reader shares: a file that cannot be read said as a problem, file times,
bounded reads of small files, the job ids a tracker's tags and params carry."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from gpudecide.fsutil import NotRegularFileError, open_regular_raw
from gpudecide.marks.model import Identity, Problem, Where
from gpudecide.message import message

__all__ = [
    "MAX_SMALL_FILE",
    "identity_from_tags",
    "mtime",
    "newest_mtime",
    "read_small",
    "tag_keys",
    "unreadable",
]

# A tag, a param, a meta.yaml or a trainer_state.json read whole: at most this many bytes.
MAX_SMALL_FILE = 8 << 20
# Entries of one checkpoint folder looked at for its newest file time.
_MAX_ENTRIES = 10_000


def unreadable(shown: str, exc: OSError) -> Problem:
    """A file that could not be opened or read, as a problem (never raised)."""
    if isinstance(exc, NotRegularFileError):
        msg = message("marks", "not a regular file: skipped")
    elif exc.errno in (errno.EACCES, errno.EPERM):
        msg = message("marks", "permission denied: skipped")
    elif exc.errno == errno.ENOENT:
        msg = message("marks", "gone while it was read: skipped")
    else:
        msg = message(
            "marks",
            "cannot be read ({code}): skipped",
            code=errno.errorcode.get(exc.errno or 0, "error"),
        )
    return Problem(kind="unreadable", where=Where(path=shown), message=msg)


def read_small(path: Path, limit: int = MAX_SMALL_FILE) -> bytes | None:
    """The whole of a small regular file, None when it is larger than `limit` (OSError when
    it cannot be read)."""
    with open_regular_raw(path) as handle:
        data = handle.read(limit + 1)
    return None if len(data) > limit else data


def mtime(path: Path) -> datetime | None:
    """When a file was last written, in UTC (None when it is gone)."""
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        return None


def newest_mtime(folder: Path) -> datetime | None:
    """The newest modification time of a folder and the files right inside it: when a
    checkpoint folder was complete."""
    newest = mtime(folder)
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= _MAX_ENTRIES:
                    break
                try:
                    stamp = datetime.fromtimestamp(entry.stat(follow_symlinks=False).st_mtime, UTC)
                except OSError:
                    continue
                if newest is None or stamp > newest:
                    newest = stamp
    except OSError:
        pass
    return newest


# Tag and param keys (lower case) that name the job, as teams and launchers set them.
_TAG_FIELDS: dict[str, str] = {
    "gpudecide.job_id": "job_id",
    "job_id": "job_id",
    "jobid": "job_id",
    "slurm_job_id": "slurm_job_id",
    "slurm_jobid": "slurm_job_id",
    "slurm.job_id": "slurm_job_id",
    "slurm_array_job_id": "slurm_array_job_id",
    "slurm_array_task_id": "slurm_array_task_id",
    "slurm_restart_count": "slurm_restart_count",
    "slurm_cluster_name": "cluster",
    "pod": "pod",
    "pod_name": "pod",
    "k8s.pod": "pod",
    "namespace": "namespace",
    "pod_namespace": "namespace",
    "training_job_name": "sagemaker_job",
    "sagemaker_job": "sagemaker_job",
    "sagemaker.training_job_name": "sagemaker_job",
    "host": "host",
    "hostname": "host",
    "slurmd_nodename": "node",
    "node": "node",
    "node_name": "node",
}


def tag_keys() -> set[str]:
    """The tag and param keys (lower case) that name a job."""
    return set(_TAG_FIELDS)


def identity_from_tags(*sources: Mapping[str, str]) -> Identity:
    """The job identity in a tracker's tags and params (the first source that names a field
    wins; keys are matched without regard to case)."""
    found: dict[str, object] = {}
    for source in sources:
        for key, value in source.items():
            name = _TAG_FIELDS.get(key.strip().lower())
            text = value.strip()[:256] if isinstance(value, str) else None
            if name is None or not text or name in found:
                continue
            if name == "slurm_restart_count":
                if text.isdigit():
                    found[name] = int(text)
                continue
            found[name] = text
    return Identity.model_validate(found)
