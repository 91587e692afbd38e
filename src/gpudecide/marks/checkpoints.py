"""Hugging Face Trainer `checkpoint-N/` folders as checkpoint marks.

The Trainer writes `<output_dir>/checkpoint-<global step>/` with the weights, the optimizer
and `trainer_state.json`; the folders of one output directory are one run. Each folder is a
checkpoint mark at the newest time of the files in it (when the save was complete), its step
from `trainer_state.json`'s `global_step` (else the folder's name). `save_total_limit`
deletes older folders, so what is left says when the last checkpoints were written, which
is what lost work needs. The folders carry no job id: the run joins a job by the name of a
folder above it (an output directory named after the job) or not at all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from gpudecide.marks.model import Mark, MarkSet, Problem, Run, Where
from gpudecide.marks.sources import newest_mtime, read_small
from gpudecide.message import message

__all__ = ["CHECKPOINT_FOLDER", "is_checkpoint_folder", "read_checkpoint_folders"]

CHECKPOINT_FOLDER = re.compile(r"^checkpoint-(\d+)$")


def is_checkpoint_folder(folder: Path) -> bool:
    """Whether a folder is one the Trainer saved (`checkpoint-N` with its trainer_state.json)."""
    return (
        CHECKPOINT_FOLDER.match(folder.name) is not None
        and (folder / "trainer_state.json").is_file()
    )


def _global_step(folder: Path, shown: str, out: MarkSet) -> int | None:
    try:
        data = read_small(folder / "trainer_state.json")
    except OSError:
        data = None
    try:
        state = json.loads(data) if data is not None else None
    except (ValueError, RecursionError):
        state = None
    step = state.get("global_step") if isinstance(state, dict) else None
    if isinstance(step, int) and not isinstance(step, bool) and step >= 0:
        return step
    out.add(
        Problem(
            kind="bad_value",
            where=Where(path=f"{shown}/trainer_state.json"),
            message=message(
                "marks",
                "no global_step in trainer_state.json: the step is taken from the folder's name",
            ),
        )
    )
    return None


def read_checkpoint_folders(
    output_dir: Path, checkpoints: list[Path], shown: str, folders: list[str] | None = None
) -> MarkSet:
    """The checkpoint folders of one output directory as one run; `shown`: the output
    directory as problems name it."""
    out = MarkSet(files=len(checkpoints))
    marks: list[Mark] = []
    numbered = [(CHECKPOINT_FOLDER.match(f.name), f) for f in checkpoints]
    for named, folder in sorted(
        ((m, f) for m, f in numbered if m is not None), key=lambda mf: int(mf[0].group(1))
    ):
        folder_shown = f"{shown}/{folder.name}"
        at = newest_mtime(folder)
        if at is None:
            continue
        step = _global_step(folder, folder_shown, out)
        marks.append(
            Mark(
                kind="checkpoint",
                at=at,
                step=step if step is not None else int(named.group(1)),
                path=str(folder),
                where=Where(path=folder_shown),
            )
        )
    if marks:
        out.runs.append(
            Run(
                source="hf-checkpoints",
                name=shown,
                marks=marks,
                folders=list(folders or []),
                where=Where(path=shown),
            )
        )
    return out
