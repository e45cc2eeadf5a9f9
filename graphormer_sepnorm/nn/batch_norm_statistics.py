r"""BatchNorm running statistics that match the weights: re-estimated with
:func:`recalibrate_batch_norm`, and a warning when a model is evaluated with
statistics older than its weights (:func:`warn_if_stale`).

SepNorm normalizes the graph token with a BatchNorm, whose running
statistics are an exponential average over the last training batches. At a
high learning rate those batches were computed by weights that have since
moved, so the statistics lag the weights and evaluation scores a model that
does not exist (``benchmarks/results/own_loop_recalibration.md``).
Re-estimating them with the weights frozen, each batch weighing the same
(`"Rethinking 'Batch' in BatchNorm" <https://arxiv.org/abs/2105.07576>`_
calls it precise BatchNorm), removes the lag; training itself does not
change, since in training mode BatchNorm uses the statistics of each batch.

Plain PyTorch: no Lightning, so that one's own training loop can call it.
"""
from __future__ import annotations

import contextlib
import itertools
import warnings
from typing import Iterable, Iterator, Optional, Union

import torch

__all__ = ['recalibrate_batch_norm', 'batch_norms', 'seeded_generators',
           'mark_statistics_current', 'warn_if_stale']

#: Attribute of a model holding :func:`weights_version` when its statistics
#: were last made to match its weights.
_STAMP = '_batch_norm_weights_version'
#: ... and the :func:`weights_version` last warned about.
_WARNED = '_batch_norm_warned_version'


def batch_norms(model: torch.nn.Module) -> list[torch.nn.Module]:
    r"""The BatchNorm layers of :obj:`model`."""
    return [m for m in model.modules()
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]


def recalibrate_batch_norm(model: torch.nn.Module, loader: Iterable,
                           num_batches: Optional[int] = None,
                           device: Optional[Union[str, torch.device]] = None,
                           seed: int = 0) -> int:
    r"""Re-estimates the running statistics of every BatchNorm of
    :obj:`model` (SepNorm's graph token) on training batches, with the
    weights frozen, each batch weighing the same. Call it after training
    and before evaluating (validation, saving): in evaluation mode
    BatchNorm uses these statistics, which during training only trail the
    weights.

    The batches run in training mode, as the statistics were gathered
    (:func:`torch.optim.swa_utils.update_bn`; dropout on, seeded by
    :obj:`seed` through :func:`seeded_generators`, which keeps the caller's
    random state); the model is left in the mode it was in, and no weight
    changes. A model without BatchNorm (ShareNorm) is left alone.

    Args:
        model (torch.nn.Module): The model, e.g. a
            :class:`~graphormer_sepnorm.GraphormerSepNorm`.
        loader (Iterable): Training batches, e.g. a
            :class:`~graphormer_sepnorm.GraphormerDataLoader` over the
            training set.
        num_batches (int, optional): Use only the first :obj:`num_batches`
            batches (a few dozen suffice); :obj:`None`: all of them.
            (default: :obj:`None`)
        device (str or torch.device, optional): Move each batch there first.
            (default: :obj:`None`, as they come)
        seed (int, optional): Seed of the dropout draws. (default: :obj:`0`)

    Returns:
        int: The number of BatchNorm layers re-estimated (:obj:`0`: nothing
        ran).
    """
    from torch.optim.swa_utils import update_bn
    if num_batches is not None and int(num_batches) < 1:
        raise ValueError(f"num_batches must be at least 1 (or None for the "
                         f"whole loader), got {num_batches}")
    norms = batch_norms(model)
    if norms:
        batches = (loader if num_batches is None else
                   itertools.islice(loader, int(num_batches)))
        device = torch.device(device) if device is not None else None
        with seeded_generators(seed, device):
            update_bn(batches, model, device=device)
    mark_statistics_current(model)
    return len(norms)


@contextlib.contextmanager
def seeded_generators(seed: int, device: Optional[torch.device] = None
                      ) -> Iterator[None]:
    r"""Runs the block with the CPU generator and, if :obj:`device` is a
    CUDA device, that device's generator seeded with :obj:`seed`, and
    restores both states after.

    Only these two are touched: :func:`torch.manual_seed` would also seed
    every other CUDA device, and :func:`torch.random.fork_rng` without
    devices would not restore the CUDA state it changed, so a run's
    dropout on the GPU would be re-seeded at every validation.

    Args:
        seed (int): The seed.
        device (torch.device, optional): Where the model runs.
            (default: :obj:`None`, the CPU)
    """
    device = torch.device(device) if device is not None else None
    cuda = device is not None and device.type == 'cuda'
    if cuda and device.index is None:
        device = torch.device('cuda', torch.cuda.current_device())
    cpu_state = torch.get_rng_state()
    cuda_state = torch.cuda.get_rng_state(device) if cuda else None
    try:
        torch.default_generator.manual_seed(seed)
        if cuda:
            torch.cuda.default_generators[device.index].manual_seed(seed)
        yield
    finally:
        torch.set_rng_state(cpu_state)
        if cuda:
            torch.cuda.set_rng_state(cuda_state, device)


def weights_version(model: torch.nn.Module) -> int:
    r"""A count that grows whenever a weight of :obj:`model` changes in
    place (an optimizer step, a copy into it): the sum of the parameters'
    version counters."""
    return sum(p._version for p in model.parameters())


def mark_statistics_current(model: torch.nn.Module) -> None:
    r"""Records that :obj:`model`'s BatchNorm statistics match its weights
    as they are now (after building, loading or
    :func:`recalibrate_batch_norm`), so that :func:`warn_if_stale` keeps
    quiet until the weights change."""
    setattr(model, _STAMP, weights_version(model))


def warn_if_stale(model: torch.nn.Module, stacklevel: int = 2) -> bool:
    r"""Warns, and returns :obj:`True`, if :obj:`model` has BatchNorm layers
    and its weights changed since its statistics were last made current
    (:func:`mark_statistics_current`): evaluated now, it would use running
    statistics gathered by older weights. A model whose
    :obj:`warn_stale_statistics` attribute is false is never warned about
    (a training loop that validates with the running statistics on
    purpose).

    Args:
        model (torch.nn.Module): The model about to be evaluated.
        stacklevel (int, optional): Of :func:`warnings.warn`.
            (default: :obj:`2`)
    """
    if not getattr(model, 'warn_stale_statistics', True):
        return False
    stamp = getattr(model, _STAMP, None)
    version = weights_version(model)
    if stamp is None or version in (stamp, getattr(model, _WARNED, None)):
        return False
    if not batch_norms(model):
        return False
    setattr(model, _WARNED, version)  # once until the weights change again
    warnings.warn(
        "This model is evaluated with BatchNorm running statistics (SepNorm's "
        "graph token) older than its weights, which score worse than the "
        "weights do; after training, before evaluating, call "
        "graphormer_sepnorm.nn.recalibrate_batch_norm(model, train_loader, "
        "num_batches=20) (or set model.warn_stale_statistics = False to "
        "evaluate with the running statistics on purpose)",
        stacklevel=stacklevel + 1)
    return True
