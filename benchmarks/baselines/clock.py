r"""The time a Lightning run spends in :meth:`~lightning.pytorch.Trainer.fit`,
on the wall clock and in CPU time, with an optional CPU-time budget."""
from __future__ import annotations

import time
from typing import Any, Optional

from lightning.pytorch.callbacks import Callback

__all__ = ['CpuBudgetClock']


class CpuBudgetClock(Callback):
    r"""Counts the wall-clock and process CPU time of training and
    validation (kept in the checkpoint, so a resumed run continues the
    count) and stops training when a CPU-time budget is spent.

    CPU time (:func:`time.process_time`) is the budget because this
    benchmark's machines are shared: a run's wall time grows with other
    people's load, its CPU time does not. With one thread it is the time on
    one core.

    The budget is checked twice. After each epoch's validation, training
    stops when the next epoch, as long as the longest one so far, would
    overrun the budget; so a run never starts an epoch it cannot finish.
    After each training batch, training stops as soon as the budget is
    spent; Lightning then still validates that unfinished epoch once, so a
    run can exceed the budget by at most one validation pass.

    Args:
        max_cpu_minutes (float, optional): The CPU-time budget in minutes.
            (default: :obj:`None`, no budget)

    Attributes:
        wall_time_s (float): Wall-clock seconds in fit so far.
        cpu_time_s (float): CPU seconds in fit so far.
        stopped_by_budget (bool): Whether the budget stopped training.
    """
    def __init__(self, max_cpu_minutes: Optional[float] = None) -> None:
        if max_cpu_minutes is not None and max_cpu_minutes <= 0:
            raise ValueError(f"The CPU-time budget must be positive minutes, "
                             f"got {max_cpu_minutes}")
        self.max_cpu_s = (None if max_cpu_minutes is None else
                          60.0 * max_cpu_minutes)
        self.wall_time_s = 0.0
        self.cpu_time_s = 0.0
        self.longest_epoch_cpu_s = 0.0
        self.stopped_by_budget = False
        self._mark: Optional[tuple[float, float]] = None
        self._epoch_start_cpu_s = 0.0

    def tick(self) -> tuple[float, float]:
        r"""Adds the time since the last tick; returns
        :obj:`(wall_time_s, cpu_time_s)`."""
        now = (time.perf_counter(), time.process_time())
        if self._mark is not None:
            self.wall_time_s += now[0] - self._mark[0]
            self.cpu_time_s += now[1] - self._mark[1]
        self._mark = now
        return self.wall_time_s, self.cpu_time_s

    def _stop(self, trainer) -> None:
        trainer.should_stop = True
        self.stopped_by_budget = True

    def on_fit_start(self, trainer, pl_module) -> None:
        self._mark = None
        self.tick()

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self._epoch_start_cpu_s = self.tick()[1]

    def on_train_batch_end(self, trainer, pl_module, outputs, batch,
                           batch_idx) -> None:
        cpu = self.tick()[1]
        if self.max_cpu_s is not None and cpu >= self.max_cpu_s:
            self._stop(trainer)

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        cpu = self.tick()[1]
        self.longest_epoch_cpu_s = max(self.longest_epoch_cpu_s,
                                       cpu - self._epoch_start_cpu_s)
        last_epoch = 0 <= trainer.max_epochs <= trainer.current_epoch + 1
        if (self.max_cpu_s is not None and not trainer.should_stop
                and not last_epoch
                and cpu + self.longest_epoch_cpu_s > self.max_cpu_s):
            self._stop(trainer)

    def on_fit_end(self, trainer, pl_module) -> None:
        self.tick()
        self._mark = None

    def state_dict(self) -> dict[str, Any]:
        if self._mark is not None:
            self.tick()
        return {'wall_time_s': self.wall_time_s,
                'cpu_time_s': self.cpu_time_s,
                'longest_epoch_cpu_s': self.longest_epoch_cpu_s,
                'stopped_by_budget': self.stopped_by_budget}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.wall_time_s = state_dict['wall_time_s']
        self.cpu_time_s = state_dict['cpu_time_s']
        self.longest_epoch_cpu_s = state_dict['longest_epoch_cpu_s']
        self.stopped_by_budget = state_dict['stopped_by_budget']
