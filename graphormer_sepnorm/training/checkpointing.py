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

The same points serve a stop: SIGTERM (a scheduler's preemption), SIGINT
(Ctrl+C) and, under SLURM with Lightning's auto-requeue, its requeue signal
(after Lightning's own handler has requeued the job) make the run write
``last.ckpt`` at the next such point and stop with :class:`RunStopped`
(the command line exits with 128 + the signal number), instead of
Lightning's exit status 0 without a checkpoint.
"""
from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Optional, Union

from lightning.pytorch.callbacks import Checkpoint

__all__ = ['LastCheckpoint', 'RunStopped', 'DDP_AGREEMENT_STEPS']

#: With several processes, the steps between two checks of the stop signals
#: and the clock (the processes must agree on a save: it is collective).
DDP_AGREEMENT_STEPS = 10


class RunStopped(Exception):
    r"""Training stopped on a signal after writing ``last.ckpt``.

    Args:
        signum (int): The signal received.
        step (int): The training step the checkpoint holds.
        path (Path): The checkpoint written.
    """
    def __init__(self, signum: int, step: int, path: Path) -> None:
        self.signum = int(signum)
        run_dir = path.parent.parent
        super().__init__(
            f"stopped by {signal.Signals(signum).name} at step {step}: "
            f"{path} holds that step; continue with --resume {run_dir}")


class LastCheckpoint(Checkpoint):
    r"""Writes :obj:`path` (``last.ckpt``) where Lightning resumes exactly:

    * after every :obj:`every_n_steps`-th training step, after the first
      step :obj:`every_n_minutes` after the last write, after the step that
      reaches :obj:`max_steps`, and after the step during which a stop
      signal came (with several processes: at the next multiple of
      :data:`DDP_AGREEMENT_STEPS`), unless that step is the last batch of
      an epoch;
    * at the end of every epoch that validated or whose last batch was such
      a step (after the validation and after the best-model
      :class:`~lightning.pytorch.callbacks.ModelCheckpoint`, whose state the
      file then holds).

    After the write that follows a stop signal it raises
    :class:`RunStopped`. A :class:`~lightning.pytorch.callbacks.Checkpoint`
    so that Lightning runs it after the other callbacks; list it after the
    best-model checkpoint callback.

    Args:
        path (str or Path): The file to write.
        every_n_steps (int): Training steps between saves.
        every_n_minutes (float, optional): Wall-clock minutes between saves
            (:obj:`None`: no timed saves). (default: :obj:`None`)
        stop_on_signals (bool, optional): Handle the stop signals as above
            (:obj:`False`: leave them to Lightning). (default: :obj:`True`)
    """
    def __init__(self, path: Union[str, Path], every_n_steps: int,
                 every_n_minutes: Optional[float] = None,
                 stop_on_signals: bool = True) -> None:
        self.path = Path(path)
        self.every_n_steps = int(every_n_steps)
        self.every_n_minutes = every_n_minutes
        self.stop_on_signals = stop_on_signals
        self._save_at_epoch_end = False
        self._last_save = time.monotonic()
        self._signal: Optional[int] = None
        self._handlers: dict = {}

    def _save(self, trainer) -> None:
        # weights_only=False: the whole training state, not the weights only
        trainer.save_checkpoint(str(self.path), weights_only=False)
        self._last_save = time.monotonic()

    # ------------------------------------------------------------------
    # Stop signals

    def _stop_signals(self, trainer) -> list:
        from lightning.fabric.plugins.environments import SLURMEnvironment
        signals = [signal.SIGTERM, signal.SIGINT]
        environment = trainer._accelerator_connector.cluster_environment
        if isinstance(environment, SLURMEnvironment) and \
                environment.auto_requeue and environment.requeue_signal:
            signals.append(environment.requeue_signal)
        return signals

    def on_train_start(self, trainer, pl_module) -> None:
        # Lightning registered its handlers before this hook: ours replace
        # them for the training loop, chaining to SLURM's requeue handler.
        self._last_save = time.monotonic()
        if not self.stop_on_signals or sys.platform == 'win32':
            return
        if trainer.received_sigterm:
            # Came during setup, to Lightning's handler, which would end the
            # first step with exit status 0: it is ours to handle.
            self._signal = signal.SIGTERM
            trainer._signal_connector.received_sigterm = False
        try:
            for signum in self._stop_signals(trainer):
                self._handlers[signum] = signal.signal(signum, self._on_signal)
        except ValueError:  # not the main thread: signals are not ours
            self._handlers = {}

    def _on_signal(self, signum: int, frame) -> None:
        if self._signal is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl+C stops at once
        self._signal = signum
        previous = self._handlers.get(signum)
        if signum not in (signal.SIGTERM, signal.SIGINT) and callable(previous):
            previous(signum, frame)  # Lightning's SLURM requeue
        print(f"{signal.Signals(signum).name} received: writing "
              f"{self.path} after this step, then stopping", file=sys.stderr,
              flush=True)

    def teardown(self, trainer, pl_module, stage: str) -> None:
        for signum, handler in self._handlers.items():
            signal.signal(signum, handler)
        self._handlers = {}

    def _any_rank(self, trainer, decision: bool) -> bool:
        if trainer.world_size == 1:
            return decision
        return trainer.strategy.reduce_boolean_decision(decision, all=False)

    def _stop(self, trainer) -> None:
        signum = self._signal
        self._signal = None
        raise RunStopped(signum if signum is not None else signal.SIGTERM,
                         trainer.global_step, self.path)

    # ------------------------------------------------------------------
    # Hooks

    def on_train_batch_end(self, trainer, pl_module, outputs, batch,
                           batch_idx: int) -> None:
        step = trainer.global_step
        stop = timed = False
        # Several processes agree (a collective, so a host sync) only every
        # DDP_AGREEMENT_STEPS steps, the same steps on every rank.
        if trainer.world_size == 1 or step % DDP_AGREEMENT_STEPS == 0:
            wanted = self._signal is not None or (
                self.every_n_minutes is not None and time.monotonic()
                - self._last_save >= 60 * self.every_n_minutes)
            if self._any_rank(trainer, wanted):
                stop = self._any_rank(trainer, self._signal is not None)
                timed = not stop
        if not (step % self.every_n_steps == 0 or stop or timed
                or 0 < trainer.max_steps <= step):
            return
        if trainer.fit_loop.epoch_loop.batch_progress.is_last_batch:
            self._save_at_epoch_end = True
        else:
            self._save(trainer)
            if stop:
                self._stop(trainer)

    def on_validation_end(self, trainer, pl_module) -> None:
        if not trainer.sanity_checking:
            self._save_at_epoch_end = True

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        stop = self._any_rank(trainer, self._signal is not None)
        if self._save_at_epoch_end or stop:
            self._save(trainer)
            self._save_at_epoch_end = False
        if stop:
            self._stop(trainer)
