r"""One row per validated epoch of a Lightning run, in the columns of our
own runs' ``metrics.csv``, plus CPU time."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional, Union

from lightning.pytorch.callbacks import Callback

from graphormer_sepnorm.training.lit_module import write_history
from .clock import CpuBudgetClock

__all__ = ['EpochHistory', 'history_columns']


def history_columns(metric: str) -> list[str]:
    r"""The columns of a baseline's ``metrics.csv``."""
    return ['epoch', 'step', 'train_loss', f'val_{metric}', 'lr',
            'wall_time_s', 'cpu_time_s']


class EpochHistory(Callback):
    r"""Records, after every validation, the epoch, the optimizer step, the
    mean training loss of the epoch, the validation metric, the learning
    rate and the time spent so far (kept in the checkpoint, so a resumed run
    keeps its earlier rows), and rewrites :obj:`metrics_file` with them.

    The training loss is averaged here over the epoch's batches, weighted by
    batch size, from the loss each training step returns.

    Args:
        clock (CpuBudgetClock): The run's clock (for the time columns).
        metric (str): The metric's name in the rows (:obj:`"mae"`,
            :obj:`"rocauc"`).
        logged_key (str): The key under which the model logs the
            validation metric (e.g. :obj:`"val/mae"`).
        scale (float, optional): Factor from the logged value to the
            reported one, e.g. the target standard deviation for an MAE
            logged on standardized targets. (default: :obj:`1.0`)
        metrics_file (str or Path, optional): CSV rewritten after every
            validation, columns :func:`history_columns`.
            (default: :obj:`None`)

    Attributes:
        rows (list of dict): The rows so far.
    """
    def __init__(self, clock: CpuBudgetClock, metric: str, logged_key: str,
                 scale: float = 1.0,
                 metrics_file: Optional[Union[str, Path]] = None) -> None:
        self.clock = clock
        self.metrics_file = metrics_file
        self.metric = metric
        self.logged_key = logged_key
        self.scale = float(scale)
        self.rows: list[dict] = []
        self._loss_sum = 0.0
        self._loss_count = 0

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self._loss_sum, self._loss_count = 0.0, 0

    def on_train_batch_end(self, trainer, pl_module, outputs, batch,
                           batch_idx) -> None:
        loss = outputs['loss'] if isinstance(outputs, dict) else outputs
        size = len(batch[0]) if isinstance(batch, (list, tuple)) else 1
        self._loss_sum += float(loss.detach()) * size
        self._loss_count += size

    def on_validation_end(self, trainer, pl_module) -> None:
        # Runs after Lightning has computed the epoch's logged metrics and
        # before ModelCheckpoint saves (checkpoint callbacks run last).
        if trainer.sanity_checking:
            return
        wall, cpu = self.clock.tick()
        logged = trainer.callback_metrics.get(self.logged_key)
        value = math.nan if logged is None else float(logged) * self.scale
        optimizer = trainer.optimizers[0] if trainer.optimizers else None
        row = {
            'epoch': int(trainer.current_epoch),
            'step': int(trainer.global_step),
            'train_loss': (self._loss_sum / self._loss_count
                           if self._loss_count else math.nan),
            f'val_{self.metric}': value,
            'lr': (float(optimizer.param_groups[0]['lr'])
                   if optimizer else math.nan),
            'wall_time_s': wall,
            'cpu_time_s': cpu,
        }
        self.rows = [r for r in self.rows if r['epoch'] != row['epoch']]
        self.rows.append(row)
        if self.metrics_file is not None:
            write_history(self.rows, self.metrics_file,
                          history_columns(self.metric))

    def best_row(self, higher_is_better: bool) -> Optional[dict]:
        r"""The row of the best validation metric (the first on ties, as
        :class:`~lightning.pytorch.callbacks.ModelCheckpoint` keeps the
        first)."""
        key = f'val_{self.metric}'
        rows = [r for r in self.rows if not math.isnan(r[key])]
        if not rows:
            return None
        best = (max if higher_is_better else min)(r[key] for r in rows)
        return next(r for r in rows if r[key] == best)

    def state_dict(self) -> dict[str, Any]:
        return {'rows': [dict(r) for r in self.rows]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.rows = [dict(r) for r in state_dict['rows']]
