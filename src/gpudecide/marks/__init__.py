"""Lifecycle marks: when preparation began, the first training step ran and each checkpoint
was written, from the training code itself and from what teams already log (SPEC Q1, Q4, G1).

    from gpudecide import marks
    marks.first_step(step)                  # gpudecide.marks.writer: standard library only

Importing this package imports the writer only: a training image needs neither gpudecide's
dependencies nor its command line. The rest is imported where it is used:

- `gpudecide.marks.hf.MarksCallback`: a Hugging Face Trainer callback;
- `gpudecide.marks.lightning.MarksCallback`: a PyTorch Lightning callback;
- `gpudecide.marks.read.read_marks(folders)`: every run found in marks folders (the marks
  JSONL, TensorBoard event files, MLflow file and SQLite stores, Hugging Face
  `checkpoint-N/` folders), with what could not be read;
- `gpudecide.marks.apply.apply_marks(attempts, marks)`: the canonical job table with
  `prep_start`, `first_step` and `last_checkpoint` filled from the marks, and the join report.
"""

from gpudecide.marks.writer import (
    ENV_DIR,
    MarkWriter,
    checkpoint,
    configure,
    end,
    first_step,
    prep_start,
    training,
)

__all__ = [
    "ENV_DIR",
    "MarkWriter",
    "checkpoint",
    "configure",
    "end",
    "first_step",
    "prep_start",
    "training",
]
