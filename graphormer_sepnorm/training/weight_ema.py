r"""An exponential moving average of the weights (:obj:`optim.ema_decay`):
Lightning's :class:`~lightning.pytorch.callbacks.WeightAveraging`, kept
after every optimizer step, validates in place of the trained weights, so
that the best checkpoint, the test scores and :obj:`model.safetensors` are
the averaged model's. A fine-tuning run's validation metric jumps from
epoch to epoch (MolHIV's does); the average moves slowly and smooths it.

What it adds to Lightning's callback:

* The decay warms up as TensorFlow's ``ExponentialMovingAverage`` with
  ``num_updates`` does: after :math:`n` updates it is
  :math:`\min(d, (1 + n) / (10 + n))`, so that the average forgets the
  starting weights (a fine-tuned model's fresh head) within a few hundred
  steps instead of keeping :math:`d^t` of them after :math:`t` steps.
* Nothing is swapped or saved from the average before its first update
  (Lightning's sanity validation runs before any).
* Buffers that no checkpoint holds (the regression targets' scaling, set
  when the module is set up, after the average was copied from it) are
  copied into the average when training starts: a resumed run's average
  would otherwise keep the copy's defaults.

Buffers are averaged too (BatchNorm's running statistics follow the
averaged weights). With :obj:`train.precise_bn_batches`, the statistics are
re-estimated for the averaged weights, after the swap
(:class:`~.precise_bn.PreciseBatchNorm` runs after this callback).
"""
from __future__ import annotations

from typing import Any, Union

import torch
from lightning.pytorch.callbacks import WeightAveraging
from torch import Tensor

__all__ = ['WeightEMA', 'warmed_up_decay']


def warmed_up_decay(decay: float, num_averaged: Union[int, Tensor]
                    ) -> Union[float, Tensor]:
    r"""The decay of the update after :obj:`num_averaged` earlier ones:
    :math:`\min(d, (1 + n) / (10 + n))`; a tensor for a tensor count (on
    its device, with no host sync)."""
    ratio = (1.0 + num_averaged) / (10.0 + num_averaged)
    if isinstance(ratio, Tensor):
        return ratio.clamp(max=decay)
    return min(decay, ratio)


class _WarmedUpEMA:
    r"""The averaging function of :class:`~torch.optim.swa_utils.
    AveragedModel`, called with the update count as a tensor on the
    weights' device: the decay is computed there, with no host sync."""

    def __init__(self, decay: float) -> None:
        self.decay = float(decay)

    def __call__(self, averaged: Tensor, current: Tensor,
                 num_averaged: Tensor) -> Tensor:
        if not averaged.is_floating_point():  # BatchNorm's step count
            return current
        decay = warmed_up_decay(self.decay, num_averaged.to(averaged.dtype))
        return torch.lerp(current, averaged, decay)


class WeightEMA(WeightAveraging):
    r"""The exponential moving average of the weights, updated after every
    optimizer step and validated in their place (see the module).

    Args:
        decay (float): The decay :math:`d` in :math:`(0, 1)` once warmed up
            (:obj:`optim.ema_decay`): the average's horizon is about
            :math:`1 / (1 - d)` steps.
    """
    def __init__(self, decay: float) -> None:
        if not 0.0 < decay < 1.0:
            raise ValueError(f"optim.ema_decay must be in (0, 1), got "
                             f"{decay}")
        # Updated after every optimizer step (WeightAveraging's default).
        super().__init__(avg_fn=_WarmedUpEMA(decay))

    def _started(self) -> bool:
        model = self._average_model
        return model is not None and int(model.n_averaged) > 0

    def on_train_start(self, trainer, pl_module) -> None:
        kept = pl_module.state_dict().keys()
        average = dict(self._average_model.module.named_buffers())
        for name, buffer in pl_module.named_buffers():
            if name not in kept:
                average[name].data = buffer.data.clone()

    def on_validation_epoch_start(self, trainer, pl_module) -> None:
        if self._started():
            self._swap_models(pl_module)

    def on_validation_epoch_end(self, trainer, pl_module) -> None:
        if self._started():
            self._swap_models(pl_module)

    def on_train_end(self, trainer, pl_module) -> None:
        if self._started():
            self._copy_average_to_current(pl_module)

    def on_save_checkpoint(self, trainer, pl_module,
                           checkpoint: dict[str, Any]) -> None:
        if self._started():
            super().on_save_checkpoint(trainer, pl_module, checkpoint)
