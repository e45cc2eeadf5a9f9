r"""Precise BatchNorm statistics before each validation (SepNorm's graph
token).

SepNorm normalizes the graph token with a BatchNorm, whose running
statistics are an exponential average over the last training batches. At a
high learning rate those batches were computed by weights that have since
moved, so the statistics lag the weights and validation scores a model
that does not exist: on the ZINC-subset SepNorm run of
``benchmarks/results/bn_recalibration/`` the validation MAE of epoch 1 was
1.349 with the running statistics and 0.655 after re-estimating them.
Re-estimating them with the weights frozen, each batch weighing the same
(`"Rethinking 'Batch' in BatchNorm" <https://arxiv.org/abs/2105.07576>`_
calls it precise BatchNorm), removes the lag; training itself does not
change, since in training mode BatchNorm uses the statistics of each batch.
"""
from __future__ import annotations

from typing import Iterable, Optional

import torch
from lightning.pytorch.callbacks import Callback

from ..data.batch_loader import GraphBatchLoader, loader_layout

__all__ = ['recalibrate_batch_norm', 'PreciseBatchNorm']

#: Added to the run's seed for the order of the recalibration batches, so
#: that they are not the first batches of the first epoch.
_ORDER_SALT = 7919


def batch_norms(model: torch.nn.Module) -> list[torch.nn.Module]:
    r"""The BatchNorm layers of :obj:`model`."""
    return [m for m in model.modules()
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]


def recalibrate_batch_norm(model: torch.nn.Module, batches: Iterable,
                           device: Optional[torch.device] = None,
                           seed: int = 0) -> int:
    r"""Re-estimates every BatchNorm's running statistics of :obj:`model`
    on :obj:`batches` with the weights frozen, each batch weighing the same
    (:func:`torch.optim.swa_utils.update_bn`), in training mode as the
    statistics were gathered (dropout on, seeded by :obj:`seed` on a forked
    generator, so that the caller's random state is kept). Returns the
    number of BatchNorm layers (none: nothing runs)."""
    from torch.optim.swa_utils import update_bn
    norms = batch_norms(model)
    if norms:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            update_bn(batches, model, device=device)
    return len(norms)


class PreciseBatchNorm(Callback):
    r"""Before every validation, re-estimates the model's BatchNorm
    statistics on :obj:`num_batches` training batches (the same ones every
    time: a fixed order drawn from the run's seed, split between the
    processes as training batches are), with :func:`recalibrate_batch_norm`.

    The module must hold the network as :obj:`model` and its data module
    must expose :obj:`train_dataset`.

    Args:
        num_batches (int): Training batches of :obj:`data.batch_size` graphs
            (over all processes) to average.
        batch_size (int): Graphs per global batch.
        seed (int): The run's seed.
    """
    def __init__(self, num_batches: int, batch_size: int, seed: int) -> None:
        self.num_batches = int(num_batches)
        self.batch_size = int(batch_size)
        self.seed = int(seed)

    def on_validation_start(self, trainer, pl_module) -> None:
        if trainer.sanity_checking or not batch_norms(pl_module.model):
            return
        loader = GraphBatchLoader(
            trainer.datamodule.train_dataset, self.batch_size, shuffle=True,
            seed=self.seed + _ORDER_SALT, rank=trainer.global_rank,
            world_size=trainer.world_size, pad=True,
            layout=loader_layout(trainer))
        batches = (batch for index, batch in zip(range(self.num_batches),
                                                 loader))
        # update_bn leaves the model in the mode it found it in: eval here.
        recalibrate_batch_norm(pl_module.model, batches,
                               device=pl_module.device, seed=self.seed)
