r"""Graphormer's learning-rate schedule (fairseq ``polynomial_decay``):
linear warmup from 0 to the peak, then polynomial decay to ``end_lr``."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.optim.lr_scheduler import LambdaLR

__all__ = ['PolynomialDecayWithWarmup', 'polynomial_decay_scheduler']


@dataclass
class PolynomialDecayWithWarmup:
    r"""The factor applied to the peak learning rate at optimizer step
    :obj:`step` (0 for the first update), as a picklable callable whose
    fields are plain numbers (so :class:`~torch.optim.lr_scheduler.LambdaLR`
    state dicts load with :obj:`weights_only=True`).

    * :obj:`step < warmup_steps`: :obj:`(step + 1) / warmup_steps`
      (fairseq's warmup, which starts at :obj:`lr / warmup_steps`);
    * then :obj:`end + (1 - end) * (1 - progress) ** power` with
      :obj:`progress = (step - warmup) / (total - warmup)` and
      :obj:`end = end_lr / peak_lr`;
    * at and after :obj:`total_steps`: :obj:`end`.
    """
    warmup_steps: int
    total_steps: int
    peak_lr: float
    end_lr: float = 1e-9
    power: float = 1.0

    def __call__(self, step: int) -> float:
        end = self.end_lr / self.peak_lr
        if step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        if step >= self.total_steps:
            return end
        span = max(self.total_steps - self.warmup_steps, 1)
        remaining = 1.0 - (step - self.warmup_steps) / span
        return end + (1.0 - end) * remaining**self.power


def polynomial_decay_scheduler(optimizer: torch.optim.Optimizer,
                               warmup_steps: int, total_steps: int,
                               end_lr: float = 1e-9,
                               power: float = 1.0) -> LambdaLR:
    r"""A per-step :class:`~torch.optim.lr_scheduler.LambdaLR` following
    :class:`PolynomialDecayWithWarmup` from the optimizer's learning rate."""
    peak = optimizer.param_groups[0]['lr']
    schedule = PolynomialDecayWithWarmup(int(warmup_steps), int(total_steps),
                                         float(peak), float(end_lr),
                                         float(power))
    return LambdaLR(optimizer, schedule)
