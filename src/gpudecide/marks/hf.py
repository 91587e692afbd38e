"""Lifecycle marks from a Hugging Face `Trainer`:

    from gpudecide.marks.hf import MarksCallback
    trainer = Trainer(..., callbacks=[MarksCallback()])

`prep_start` when the Trainer is built (unless the script wrote one before), `first_step`
after the first optimizer step, `checkpoint` after each save (`<output_dir>/checkpoint-N`,
the step N), `end` when training finishes. Only the main process writes (the Trainer's
`is_world_process_zero`), unless `all_ranks=True`.
"""

from __future__ import annotations

import os
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from gpudecide.marks.writer import MarkWriter, default_writer

__all__ = ["MarksCallback"]


class MarksCallback(TrainerCallback):
    """Writes the Trainer's lifecycle marks (see the module's docstring). `folder` and the
    writer's options as in `MarkWriter`; without them the process's writer is used
    (`$GPUDECIDE_MARKS_DIR`)."""

    def __init__(
        self,
        folder: str | os.PathLike[str] | None = None,
        *,
        all_ranks: bool = False,
        **options: Any,
    ) -> None:
        self._folder = folder
        self._all_ranks = all_ranks
        self._options = options
        self._writer: MarkWriter | None = None
        self._prep_written = False

    def writer(self, state: TrainerState | None = None) -> MarkWriter:
        """The writer, made once; the rank is the Trainer's (0 for the main process)."""
        if self._writer is None:
            if self._folder is None and not self._options and not self._all_ranks:
                self._writer = default_writer()
            else:
                self._writer = MarkWriter(self._folder, all_ranks=self._all_ranks, **self._options)
        if state is not None and not self._all_ranks:
            self._writer.rank = 0 if state.is_world_process_zero else 1
        return self._writer

    def on_init_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        """The Trainer is built: preparation is under way."""
        self._prep_written = self.writer(state).prep_start()

    def on_train_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        """A callback added after the Trainer was built still marks preparation."""
        if not self._prep_written:
            self._prep_written = self.writer(state).prep_start()

    def on_step_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        """The first optimizer step of this process is done."""
        self.writer(state).step(state.global_step)

    def on_save(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        """The Trainer calls this after the checkpoint folder is written."""
        folder = os.path.join(args.output_dir or "", f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}")
        self.writer(state).checkpoint(state.global_step, folder)

    def on_train_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        """Training finished (the Trainer does not call this after an exception)."""
        self.writer(state).end("completed")
