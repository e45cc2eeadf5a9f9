r"""Where ``checkpoints/last.ckpt`` is written, so that a run killed at any
moment and continued with ``--resume`` ends exactly as if uninterrupted.

Lightning 2.6 resumes from a checkpoint written after an epoch's *last*
training batch as if that epoch had ended: it skips the epoch's validation
(its metrics.csv row never comes back) and the next epoch's
:meth:`on_train_epoch_start` (so that epoch's mean train loss also counts
the previous epoch's batches). A step-interval
:class:`~lightning.pytorch.callbacks.ModelCheckpoint` writes exactly such a
checkpoint whenever the interval falls on an epoch's last batch.
:class:`LastCheckpoint` writes that save at the end of the epoch instead,
after the validation, the point from which Lightning resumes an epoch
boundary as designed.
"""
from __future__ import annotations

from pathlib import Path
from typing import Union

from lightning.pytorch.callbacks import Checkpoint

__all__ = ['LastCheckpoint']


class LastCheckpoint(Checkpoint):
    r"""Writes :obj:`path` (``last.ckpt``) where Lightning resumes exactly:

    * after every :obj:`every_n_steps`-th training step and after the step
      that reaches :obj:`max_steps`, unless that step is the last batch of
      an epoch;
    * at the end of every epoch that validated or whose last batch was such
      a step (after the validation and after the best-model
      :class:`~lightning.pytorch.callbacks.ModelCheckpoint`, whose state the
      file then holds).

    A :class:`~lightning.pytorch.callbacks.Checkpoint` so that Lightning
    runs it after the other callbacks; list it after the best-model
    checkpoint callback.

    Args:
        path (str or Path): The file to write.
        every_n_steps (int): Training steps between saves.
    """
    def __init__(self, path: Union[str, Path], every_n_steps: int) -> None:
        self.path = Path(path)
        self.every_n_steps = int(every_n_steps)
        self._save_at_epoch_end = False

    def _save(self, trainer) -> None:
        # weights_only=False: the whole training state, not the weights only
        trainer.save_checkpoint(str(self.path), weights_only=False)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch,
                           batch_idx: int) -> None:
        step = trainer.global_step
        if not (step % self.every_n_steps == 0
                or 0 < trainer.max_steps <= step):
            return
        if trainer.fit_loop.epoch_loop.batch_progress.is_last_batch:
            self._save_at_epoch_end = True
        else:
            self._save(trainer)

    def on_validation_end(self, trainer, pl_module) -> None:
        if not trainer.sanity_checking:
            self._save_at_epoch_end = True

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        if self._save_at_epoch_end:
            self._save(trainer)
            self._save_at_epoch_end = False
