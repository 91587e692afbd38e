"""Every run in the marks folders a team points gpudecide at.

    read_marks([Path("marks")])         MarkSet: runs, problems (file:line), counts

A folder is walked (links are not followed, at most MAX_ENTRIES entries, MAX_DEPTH deep)
and each thing in it read by what it is: `*.jsonl` (the marks the training script wrote),
`events.out.tfevents.*` (TensorBoard), an MLflow file-store run folder (`meta.yaml` with
`metrics/` or `tags/`), a SQLite file with MLflow's tables (`*.db`, `*.sqlite`,
`*.sqlite3`), a folder of Hugging Face `checkpoint-N/` folders. A file may be given on its
own too. Other files are left alone. Nothing that is wrong inside raises: it is a problem
in the MarkSet; only a path that is not there is an InputError.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from gpudecide.errors import InputError
from gpudecide.marks import checkpoints, jsonl, mlflow, tensorboard
from gpudecide.marks.model import MarkSet, Problem, Where
from gpudecide.marks.sources import unreadable
from gpudecide.message import message

__all__ = ["MAX_DEPTH", "MAX_ENTRIES", "read_marks"]

MAX_ENTRIES = 200_000
MAX_DEPTH = 16
_SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def _file(path: Path, shown: str, folders: list[str]) -> MarkSet | None:
    """The runs of one file, None when it is not a kind of file marks are read from."""
    name = path.name
    if name.endswith(".jsonl"):
        return jsonl.read_marks_file(path, shown, folders)
    if tensorboard.is_event_file(name):
        return tensorboard.read_event_file(path, shown, folders)
    if path.suffix.lower() in _SQLITE_SUFFIXES and mlflow.is_sqlite_file(path):
        return mlflow.read_sqlite_store(path, shown, folders)
    return None


def _folder(top: Path, given: str, out: MarkSet) -> None:
    entries = 0
    base_hint = [top.resolve().name] if top.resolve().name else []

    def failed(exc: OSError) -> None:
        out.add(unreadable(str(exc.filename or given), exc))

    for dirpath, dirnames, filenames in os.walk(top, onerror=failed, followlinks=False):
        here = Path(dirpath)
        rel = here.relative_to(top)
        depth = len(rel.parts)
        hints = base_hint + list(rel.parts)
        shown_here = given if not rel.parts else f"{given.rstrip('/')}/{rel.as_posix()}"
        entries += len(dirnames) + len(filenames)
        if entries > MAX_ENTRIES:
            out.add(
                Problem(
                    kind="too_many",
                    where=Where(path=given),
                    message=message(
                        "marks",
                        "more than {limit} files and folders: the rest is not read",
                        limit=MAX_ENTRIES,
                    ),
                )
            )
            return
        dirnames.sort()
        keep: list[str] = []
        ckpts: list[Path] = []
        for name in dirnames:
            sub = here / name
            if name == ".trash":  # MLflow's deleted runs
                continue
            if checkpoints.is_checkpoint_folder(sub):
                ckpts.append(sub)
            elif mlflow.is_file_store_run(sub):
                out.merge(mlflow.read_file_store_run(sub, f"{shown_here}/{name}", hints))
            elif depth + 1 < MAX_DEPTH:
                keep.append(name)
        dirnames[:] = keep
        if ckpts:
            out.merge(checkpoints.read_checkpoint_folders(here, ckpts, shown_here, hints))
        for name in sorted(filenames):
            found = _file(here / name, f"{shown_here}/{name}", hints)
            if found is not None:
                out.merge(found)


def read_marks(paths: Sequence[Path]) -> MarkSet:
    """Every run in these folders or files, with what could not be used (see the module's
    docstring)."""
    out = MarkSet()
    for path in paths:
        given = str(path)
        if path.is_dir():
            _folder(path, given, out)
            continue
        if not path.exists():
            raise InputError(
                "no such file or directory",
                path=path,
                hint="give the folder the training scripts write marks to",
            )
        found = _file(path, given, [path.resolve().parent.name])
        if found is None:
            out.add(
                Problem(
                    kind="unreadable",
                    where=Where(path=given),
                    message=message(
                        "marks",
                        "not a marks file (*.jsonl), a TensorBoard event file or an MLflow "
                        "database",
                    ),
                )
            )
        else:
            out.merge(found)
    return out
