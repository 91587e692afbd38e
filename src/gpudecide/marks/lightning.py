"""Lifecycle marks from a PyTorch Lightning `Trainer`:

    from gpudecide.marks.lightning import MarksCallback
    trainer = L.Trainer(..., callbacks=[MarksCallback()])

`prep_start` when fitting begins, `first_step` after the first training batch, `checkpoint`
for each file a `ModelCheckpoint` saved (its step and path, at the file's modification
time), `end` when fitting ends ("completed", or "failed" on an exception). Only global rank
0 writes, unless `all_ranks=True`. Works with `lightning` and with `pytorch_lightning`.

Lightning calls its checkpoint callbacks after every other callback, so a checkpoint saved at
the end of a batch or an epoch is marked at the next hook (the next batch, the validation
loop, or the end of fitting), with the time its file was written.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

try:
    import lightning.pytorch as pl
except ImportError:  # the older package name
    import pytorch_lightning as pl  # type: ignore[no-redef]

from gpudecide.marks.writer import MarkWriter, default_writer

__all__ = ["MarksCallback"]


class MarksCallback(pl.Callback):
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
        super().__init__()
        self._folder = folder
        self._all_ranks = all_ranks
        self._options = options
        self._writer: MarkWriter | None = None
        self._seen: dict[str, int] = {}  # checkpoint path -> modification time marked

    def writer(self, trainer: Any) -> MarkWriter:
        """The writer, made once; the rank is the Trainer's global rank."""
        if self._writer is None:
            if self._folder is None and not self._options and not self._all_ranks:
                self._writer = default_writer()
            else:
                self._writer = MarkWriter(self._folder, all_ranks=self._all_ranks, **self._options)
        if not self._all_ranks:
            self._writer.rank = int(getattr(trainer, "global_rank", 0) or 0)
        return self._writer

    def _saved(self, trainer: Any) -> None:
        """Mark each checkpoint file saved since the last look, at its modification time."""
        for callback in getattr(trainer, "checkpoint_callbacks", None) or ():
            step = getattr(callback, "_last_global_step_saved", None)
            for attr in ("_last_checkpoint_saved", "last_model_path"):
                path = getattr(callback, attr, None)
                if not isinstance(path, str) or not path:
                    continue
                try:
                    mtime = os.stat(path).st_mtime_ns
                except OSError:
                    continue  # not on this machine's disk (a remote path) or removed again
                if self._seen.get(path) == mtime:
                    continue
                self._seen[path] = mtime
                at = datetime.fromtimestamp(mtime / 1e9, UTC)
                number = step if isinstance(step, int) else None
                self.writer(trainer).checkpoint(number, path, at=at)

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        """Fitting begins: preparation (data, model to device, sanity checks) is under way."""
        self.writer(trainer).prep_start()

    def on_train_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int
    ) -> None:
        """A checkpoint saved at the end of the last batch is on disk now."""
        self._saved(trainer)

    def on_train_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        """The first training batch of this process is done."""
        self.writer(trainer).step(int(trainer.global_step))

    def on_validation_start(self, trainer: Any, pl_module: Any) -> None:
        """Checkpoints saved before validation."""
        self._saved(trainer)

    def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
        """Checkpoints saved at the end of the last epoch."""
        self._saved(trainer)

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        """Fitting finished: the last checkpoints, then the end."""
        self._saved(trainer)
        self.writer(trainer).end("completed")

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        """Fitting stopped on an exception: the checkpoints saved so far, then the end."""
        self._saved(trainer)
        status = "interrupted" if isinstance(exception, KeyboardInterrupt) else "failed"
        self.writer(trainer).end(status)
