r"""What a run shows its user while it trains: one progress bar for the
whole run, warnings about a schedule that cannot do what the config asks,
and none of the third-party messages that say nothing about the run."""
from __future__ import annotations

import logging
import math
import sys
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

import torch
from lightning.pytorch.callbacks import Callback, TQDMProgressBar
from lightning.pytorch.utilities.rank_zero import rank_zero_only

from .hardware import free_cores, oversubscription

__all__ = ['RunProgressBar', 'RunNotices', 'notice', 'quiet_third_party']

# Lightning's logger of rank-zero messages, which advertises a cloud
# service at every Trainer construction.
_LIGHTNING_LOG = 'lightning.pytorch.utilities.rank_zero'
# Warnings about Lightning's internals (a torch deprecation inside
# Lightning) or about a logging interval longer than a small dataset's
# epoch, which the user cannot act on.
_NOISE = (r'.*isinstance\(treespec, LeafSpec\).*',
          r'.*is smaller than the logging interval.*',
          # RunModule copies PyG batches itself (non-blocking): intended.
          r'.*overridden `transfer_batch_to_device`.*')


@rank_zero_only
def notice(message: str) -> None:
    r"""Prints :obj:`message` as one ``warning:`` line on standard error,
    on global rank zero only."""
    print(f'warning: {message}', file=sys.stderr, flush=True)


class _DropAdvertisement(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return 'litlogger' not in record.getMessage()


@contextmanager
def quiet_third_party() -> Iterator[None]:
    r"""Within the block, drops Lightning's logger advertisement and the
    warnings of :data:`_NOISE`; everything else is shown."""
    log = logging.getLogger(_LIGHTNING_LOG)
    drop = _DropAdvertisement()
    log.addFilter(drop)
    try:
        with warnings.catch_warnings():
            for message in _NOISE:
                warnings.filterwarnings('ignore', message=message)
            yield
    finally:
        log.removeFilter(drop)


class RunProgressBar(TQDMProgressBar):
    r"""A progress bar of the whole run instead of one epoch: the optimizer
    steps done out of the run's last step (its overall ETA), counted from
    the resumed step after ``--resume``, the epoch, the training loss and
    the best validation metric so far.

    Args:
        best (ModelCheckpoint): The callback keeping the best model (its
            :obj:`best_model_score` is shown once a validation ran).
    """
    def __init__(self, best: Any) -> None:
        super().__init__()
        self._best = best

    def on_train_start(self, trainer, pl_module) -> None:
        super().on_train_start(trainer, pl_module)
        bar = self.train_progress_bar
        total = trainer.estimated_stepping_batches
        bar.reset(total=total if math.isfinite(total) else None)
        # tqdm's rate and ETA count from `initial`: the resumed step.
        bar.initial = bar.n = bar.last_print_n = trainer.global_step
        bar.refresh()

    def on_train_epoch_start(self, trainer, *_: Any) -> None:
        epochs = f'/{trainer.max_epochs}' if trainer.max_epochs and \
            trainer.max_epochs > 0 else ''
        self.train_progress_bar.set_description(
            f'Epoch {trainer.current_epoch + 1}{epochs}')

    def on_train_batch_end(self, trainer, pl_module, outputs, batch,
                           batch_idx: int) -> None:
        bar = self.train_progress_bar
        if self._should_update(trainer.global_step, bar.total):
            bar.n = trainer.global_step
            bar.set_postfix(self.get_metrics(trainer, pl_module))

    def get_metrics(self, trainer, pl_module) -> dict:
        items = super().get_metrics(trainer, pl_module)
        items.pop('v_num', None)
        score = self._best.best_model_score
        if score is not None and math.isfinite(float(score)):
            items['best_val'] = f'{float(score):.4g}'
        return items


class RunNotices(Callback):
    r"""What a run says on standard error when training starts (once every
    check before it has passed, so that a refused run prints only its
    error): its folder and torch threads, and warnings (:func:`notice`)
    when the machine is oversubscribed
    (:func:`~.hardware.oversubscription`) or the run is too short for its
    config: the learning-rate warmup lasts longer than the run (the peak
    :obj:`optim.lr` is never reached), or no validation falls within the
    run (nothing to select the saved model by: it holds the final
    weights)."""
    def on_train_start(self, trainer, pl_module) -> None:
        threads = torch.get_num_threads()
        cores, _, load = free_cores()
        if trainer.is_global_zero:
            print(f'Run folder: {trainer.default_root_dir} (torch threads: '
                  f'{threads}; load {load:.1f} on {cores} cores)',
                  file=sys.stderr, flush=True)
        busy = oversubscription(threads)
        if busy:
            notice(busy)
        steps = trainer.estimated_stepping_batches
        if not math.isfinite(steps):
            return
        schedules = [getattr(config.scheduler, 'lr_lambdas', [None])[0]
                     for config in trainer.lr_scheduler_configs]
        warmup = getattr(schedules[0], 'warmup_steps', 0) if schedules else 0
        if warmup > steps:
            notice(f"the learning rate warms up over {warmup} steps but the "
                   f"run trains {steps}: it never reaches optim.lr (it ends "
                   f"at {steps / warmup:.2g} of it). Set optim.warmup_ratio "
                   f"(e.g. 0.05) or a smaller optim.warmup_steps")
        if trainer.check_val_every_n_epoch is None:
            first = trainer.val_check_batch  # every this many steps
        else:
            first = trainer.num_training_batches * \
                trainer.check_val_every_n_epoch
        if math.isfinite(first) and steps < first:
            notice(f"no validation falls within this run: the first comes "
                   f"after {first} steps and the run trains {steps}, so "
                   f"best_val_metric will be null and model.safetensors "
                   f"will hold the final weights, not a model selected on "
                   f"validation. Train at least {first} steps "
                   f"(train.max_steps) for a selected model")
