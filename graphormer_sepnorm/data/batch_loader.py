r"""The batches of one training process: :class:`GraphBatchLoader`, a
resumable, rank-aware batch loader over a host DataLoader or a
:class:`~graphormer_sepnorm.data.graph_store.DeviceGraphStore`.

Each epoch's order comes from :obj:`seed + epoch` alone (no global random
state), so a run resumed from a mid-epoch checkpoint continues with exactly
the batches the interrupted run would have seen: Lightning saves the
loader's :meth:`~GraphBatchLoader.state_dict` (epoch and batches consumed)
in the checkpoint and restores it before iterating. With :obj:`world_size`
processes, every *global* batch of :obj:`batch_size` graphs is split
between the ranks (rank :obj:`r` takes graphs :obj:`r, r + world_size,
...`), so data-parallel training sees the same global batches as a single
process.

Batches come with their :class:`~graphormer_sepnorm.transforms.BatchLayout`
(:obj:`batch.layout`), computed where they are collated: in the
DataLoader's worker processes when there are any, so that the model's
forward pass has nothing left to compute on the host.
"""
from __future__ import annotations

import math
import os
from typing import Any, Callable, Iterator, Optional, Union

import torch
from torch import Tensor
from torch_geometric.data import Batch

from ..transforms.batch_layout import add_batch_layout, layout_options_for
from .graph_store import DeviceGraphStore
from .graphormer_loader import GraphormerDataLoader

__all__ = ['GraphBatchLoader', 'epoch_batches',
           'loader_layout', 'loader_workers']

#: Most worker processes :func:`loader_workers` gives a training process.
MAX_AUTO_WORKERS = 8


def loader_workers(setting: Union[int, str], device: Any,
                   processes_per_node: int = 1) -> int:
    r"""The worker processes of a training loader for :obj:`data.num_workers`
    (a count, or :obj:`"auto"`): with :obj:`"auto"`, none on the CPU (its
    cores run the model; batches are collated between steps), and on an
    accelerator one per CPU core of this process but one (left to the
    training loop), at most :data:`MAX_AUTO_WORKERS`."""
    if setting != 'auto':
        return int(setting)
    if torch.device(device).type == 'cpu':
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') \
        else (os.cpu_count() or 1)
    return max(0, min(MAX_AUTO_WORKERS, cores // processes_per_node - 1))


def loader_layout(trainer: Any) -> Optional[dict[str, int]]:
    r"""The :func:`~graphormer_sepnorm.transforms.add_batch_layout` options
    of the batches of a Lightning :obj:`trainer`'s model
    for its device (:func:`~graphormer_sepnorm.transforms.batch_layout.
    layout_options_for`); :obj:`None` without a trainer or model (the model
    then computes the layout itself)."""
    module = getattr(trainer, 'lightning_module', None)
    model = getattr(module, 'model', None)
    if model is None or not hasattr(model, 'layout_options'):
        return None
    return layout_options_for(model, trainer.strategy.root_device)


def epoch_batches(num_graphs: int, batch_size: int, epoch: int, seed: int,
                  shuffle: bool = True, rank: int = 0, world_size: int = 1,
                  pad: bool = True) -> list[Tensor]:
    r"""The graph ids of each batch of one process for one epoch.

    Global batches of :obj:`batch_size` graphs are cut from a permutation
    drawn from :obj:`seed + epoch` (or from :obj:`0..num_graphs-1` without
    :obj:`shuffle`); rank :obj:`r` takes every :obj:`world_size`-th graph of
    each. With :obj:`pad`, a last global batch smaller than a multiple of
    :obj:`world_size` is padded with the epoch's first graphs, so every rank
    gets the same number of graphs (as :class:`DistributedSampler` does);
    without it (evaluation) nothing is repeated and ranks may get fewer.
    """
    if shuffle:
        generator = torch.Generator().manual_seed(int(seed) + int(epoch))
        order = torch.randperm(num_graphs, generator=generator)
    else:
        order = torch.arange(num_graphs)
    batches = []
    for start in range(0, num_graphs, batch_size):
        ids = order[start:start + batch_size]
        if world_size > 1:
            if pad and ids.numel() % world_size:
                missing = world_size - ids.numel() % world_size
                ids = torch.cat([ids, order[:missing]])
            ids = ids[rank::world_size]
        if ids.numel():
            batches.append(ids)
    return batches


class GraphBatchLoader:
    r"""The batches of one process, resumable mid-epoch.

    Iterating yields :class:`~torch_geometric.data.Batch` objects, from a
    :class:`torch.utils.data.DataLoader` over :obj:`dataset` or, with
    :obj:`store`, gathered on the store's device. Lightning calls
    :meth:`set_epoch` at each epoch start (through :attr:`sampler`) and
    saves :meth:`state_dict` in checkpoints.

    Args:
        dataset: A PyG dataset.
        batch_size (int): Graphs per global batch (over all processes).
        shuffle (bool): Draw a new order every epoch.
        seed (int): Base seed of the order.
        rank (int, optional): This process. (default: :obj:`0`)
        world_size (int, optional): Processes. (default: :obj:`1`)
        pad (bool, optional): Pad the last global batch so all ranks get the
            same number of graphs (training). (default: :obj:`True`)
        num_workers (int, optional): DataLoader workers. (default: :obj:`0`)
        pin_memory (bool, optional): DataLoader pinning.
            (default: :obj:`False`)
        store (DeviceGraphStore, optional): Batch on this store instead.
        epoch_fn (callable, optional): Returns the epoch when an iteration
            starts, overriding :meth:`set_epoch` (the trainer's
            :obj:`current_epoch`: after resuming from an end-of-epoch
            checkpoint, Lightning 2.6 passes :meth:`set_epoch` a value one
            ahead of it).
        layout (dict, optional): Options of
            :func:`~graphormer_sepnorm.transforms.add_batch_layout` for
            every batch (see :func:`loader_layout`); :obj:`None` leaves the
            layout to the model. (default: :obj:`None`)
    """
    def __init__(self, dataset, batch_size: int, shuffle: bool, seed: int,
                 rank: int = 0, world_size: int = 1, pad: bool = True,
                 num_workers: int = 0, pin_memory: bool = False,
                 store: Optional[DeviceGraphStore] = None,
                 epoch_fn: Optional[Callable[[], int]] = None,
                 layout: Optional[dict[str, int]] = None) -> None:
        self.dataset = dataset
        self.layout = layout
        self.epoch_fn = epoch_fn
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self.pad = pad
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.store = store
        self.epoch = 0
        self._consumed = 0
        self._skip: Optional[tuple[int, int]] = None  # (epoch, batches)
        # Lightning calls ``loader.sampler.set_epoch`` at every epoch start
        # and inspects ``batch_sampler``; neither is a torch sampler here.
        self.sampler = _EpochHook(self)
        self._loader: Optional[torch.utils.data.DataLoader] = None
        self._epoch_ids: list[list[int]] = []
        self.batch_sampler = None

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def batches(self, epoch: Optional[int] = None) -> list[Tensor]:
        return epoch_batches(len(self.dataset), self.batch_size,
                             self.epoch if epoch is None else epoch,
                             self.seed, self.shuffle, self.rank,
                             self.world_size, self.pad)

    def __len__(self) -> int:
        if self.world_size == 1 or self.pad:
            return math.ceil(len(self.dataset) / self.batch_size)
        return len(self.batches(0))

    def __iter__(self) -> Iterator[Batch]:
        # Runs at the first next(), i.e. once the epoch has started.
        if self.epoch_fn is not None:
            self.epoch = int(self.epoch_fn())
        batches = self.batches()
        skip = 0
        if self._skip is not None:
            if self._skip[0] == self.epoch:
                skip = self._skip[1]
            self._skip = None
        self._consumed = skip
        batches = batches[skip:]
        if self.store is not None:
            # Gathered on the store's device; the layout is computed from a
            # host copy (the sync-free path is the host loader's workers).
            source: Iterator = (self._with_layout(self.store.batch(ids))
                                for ids in batches)
        else:
            self._epoch_ids = [ids.tolist() for ids in batches]
            source = iter(self._data_loader())
        for batch in source:
            self._consumed += 1
            yield batch

    def _data_loader(self) -> torch.utils.data.DataLoader:
        r"""One DataLoader for every epoch, whose batches are the current
        epoch's: its workers (persistent) start once per run instead of
        once per epoch, which on a GPU would cost a pause every few dozen
        steps."""
        if self._loader is None:
            self._loader = GraphormerDataLoader(
                self.dataset, batch_sampler=_CurrentEpoch(self),
                layout=self.layout, num_workers=self.num_workers,
                persistent_workers=self.num_workers > 0,
                pin_memory=self.pin_memory,
                # A private generator: creating the iterator must not draw
                # from the global RNG (that would shift dropout on resume).
                generator=torch.Generator().manual_seed(self.seed))
        return self._loader

    def _with_layout(self, batch: Batch) -> Batch:
        if self.layout is None:
            return batch
        return add_batch_layout(batch, **self.layout)

    def state_dict(self) -> dict[str, int]:
        return {'epoch': self.epoch, 'batches_consumed': self._consumed}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self._skip = (int(state['epoch']), int(state['batches_consumed']))
        self.epoch = int(state['epoch'])


class _CurrentEpoch:
    r"""The batch sampler of :meth:`GraphBatchLoader._data_loader`: the
    graph ids of the batches of the epoch being iterated."""
    def __init__(self, loader: GraphBatchLoader) -> None:
        self.loader = loader

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.loader._epoch_ids)

    def __len__(self) -> int:
        return len(self.loader._epoch_ids)


class _EpochHook:
    def __init__(self, loader: GraphBatchLoader) -> None:
        self.loader = loader

    def set_epoch(self, epoch: int) -> None:
        self.loader.set_epoch(epoch)
