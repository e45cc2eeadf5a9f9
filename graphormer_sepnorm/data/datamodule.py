r"""Batching for training: a resumable, rank-aware batch loader (host
DataLoader or on-device gathering) and the Lightning data module.

* :class:`GraphBatchLoader` draws the batches of one process. Each epoch's
  order comes from :obj:`seed + epoch` alone (no global random state), so a
  run resumed from a mid-epoch checkpoint continues with exactly the batches
  the interrupted run would have seen: Lightning saves the loader's
  :meth:`~GraphBatchLoader.state_dict` (epoch and batches consumed) in the
  checkpoint and restores it before iterating. With :obj:`world_size`
  processes, every *global* batch of :obj:`batch_size` graphs is split
  between the ranks (rank :obj:`r` takes graphs :obj:`r, r + world_size,
  ...`), so data-parallel training sees the same global batches as a single
  process.
* :class:`DeviceGraphStore` keeps a preprocessed dataset as collated tensors
  on one device (*e.g.* the GPU) and builds a
  :class:`~torch_geometric.data.Batch` for a list of graph ids by index
  arithmetic there, without Python objects per graph or host-to-device
  copies other than the ids. The batches equal those of PyG's
  :class:`~torch_geometric.loader.DataLoader`.
"""
from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence, Union

import torch
from torch import Tensor
from torch_geometric.data import Batch
from torch_geometric.loader.dataloader import Collater

from .csv_dataset import CSVDataWarning
from .csv_splits import write_run_records
from .datasets import (GraphSplits, data_info, load_data_splits, prepare_raw,
                       target_statistics)
from .errors import DataError

__all__ = ['DeviceGraphStore', 'GraphBatchLoader', 'GraphDataModule',
           'epoch_batches']


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


class DeviceGraphStore:
    r"""An in-memory graph dataset held as collated tensors on
    :obj:`device`, batched there.

    Args:
        dataset (InMemoryDataset): A PyG in-memory dataset or an index view
            of one (materialized once with :meth:`copy`).
        device (torch.device or str): Where the tensors live.
    """
    def __init__(self, dataset, device: Any = 'cpu') -> None:
        if getattr(dataset, '_indices', None) is not None:
            dataset = dataset.copy()
        self.device = torch.device(device)
        data, slices = dataset._data, dataset.slices
        example = dataset[0]
        self.num_graphs = len(dataset)
        self.keys = list(slices.keys())
        self.tensors: dict[str, Tensor] = {}
        self.slices_host: dict[str, Tensor] = {}
        self.slices: dict[str, Tensor] = {}
        self.cat_dims: dict[str, int] = {}
        self.increments: dict[str, bool] = {}
        for key in self.keys:
            value = data[key]
            self.tensors[key] = value.to(self.device)
            self.slices_host[key] = slices[key].cpu()
            self.slices[key] = slices[key].to(self.device)
            dim = example.__cat_dim__(key, example[key])
            self.cat_dims[key] = dim % max(value.dim(), 1)
            self.increments[key] = bool(
                torch.as_tensor(example.__inc__(key, example[key])).ne(0)
                .any())
        node_key = 'x' if 'x' in self.keys else None
        if node_key is None:
            raise ValueError("DeviceGraphStore needs node features 'x'")
        self.node_key = node_key
        self.has_num_nodes = 'num_nodes' in example.keys()

    def __len__(self) -> int:
        return self.num_graphs

    def _ranges(self, key: str, ids_host: Tensor, ids: Tensor
                ) -> tuple[Tensor, Tensor, int]:
        r"""Per-graph start and count on the device, and the total on the
        host (known without a device synchronization)."""
        host = self.slices_host[key]
        total = int((host[ids_host + 1] - host[ids_host]).sum())
        sl = self.slices[key]
        start = sl[ids]
        return start, sl[ids + 1] - start, total

    @staticmethod
    def _positions(start: Tensor, count: Tensor, total: int) -> Tensor:
        # Element positions of the concatenated ranges [start, start+count).
        offset = torch.cumsum(count, 0) - count  # exclusive cumsum
        base = torch.repeat_interleave(start - offset, count,
                                       output_size=total)
        return base + torch.arange(total, device=start.device)

    def batch(self, ids: Sequence[int] | Tensor) -> Batch:
        r"""The :class:`~torch_geometric.data.Batch` of the graphs
        :obj:`ids`, built on the store's device."""
        ids_host = torch.as_tensor(ids, dtype=torch.long).cpu()
        ids = ids_host.to(self.device, non_blocking=True)
        num_graphs = ids_host.numel()
        n_start, n_count, n_total = self._ranges(self.node_key, ids_host, ids)
        node_offset = torch.cumsum(n_count, 0) - n_count
        out: dict[str, Tensor] = {}
        for key in self.keys:
            start, count, total = ((n_start, n_count, n_total)
                                   if key == self.node_key else self._ranges(
                                       key, ids_host, ids))
            positions = self._positions(start, count, total)
            dim = self.cat_dims[key]
            value = self.tensors[key].index_select(dim, positions)
            if self.increments[key]:
                inc = torch.repeat_interleave(node_offset, count,
                                              output_size=total)
                shape = [1] * value.dim()
                shape[dim] = total
                value = value + inc.view(shape)
            out[key] = value
        graph_ids = torch.arange(num_graphs, device=self.device)
        out['batch'] = torch.repeat_interleave(graph_ids, n_count,
                                               output_size=n_total)
        out['ptr'] = torch.cat([torch.zeros(1, dtype=torch.long,
                                            device=self.device),
                                torch.cumsum(n_count, 0)])
        batch = Batch(**out)
        if self.has_num_nodes:
            batch.num_nodes = n_total
        batch._num_graphs = num_graphs
        return batch


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
    """
    def __init__(self, dataset, batch_size: int, shuffle: bool, seed: int,
                 rank: int = 0, world_size: int = 1, pad: bool = True,
                 num_workers: int = 0, pin_memory: bool = False,
                 store: Optional[DeviceGraphStore] = None,
                 epoch_fn: Optional[Callable[[], int]] = None) -> None:
        self.dataset = dataset
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
            source: Iterator = (self.store.batch(ids) for ids in batches)
        else:
            loader = torch.utils.data.DataLoader(
                self.dataset, batch_sampler=[ids.tolist() for ids in batches],
                collate_fn=Collater(self.dataset), num_workers=self.num_workers,
                pin_memory=self.pin_memory,
                # A private generator: creating the iterator must not draw
                # from the global RNG (that would shift dropout on resume).
                generator=torch.Generator().manual_seed(self.seed))
            source = iter(loader)
        for batch in source:
            self._consumed += 1
            yield batch

    def state_dict(self) -> dict[str, int]:
        return {'epoch': self.epoch, 'batches_consumed': self._consumed}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self._skip = (int(state['epoch']), int(state['batches_consumed']))
        self.epoch = int(state['epoch'])


class _EpochHook:
    def __init__(self, loader: GraphBatchLoader) -> None:
        self.loader = loader

    def set_epoch(self, epoch: int) -> None:
        self.loader.set_epoch(epoch)


def _distributed() -> tuple[int, int]:
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


try:  # Lightning is a dependency of training only
    from lightning.pytorch import LightningDataModule as _Base
except ImportError:  # pragma: no cover
    _Base = object


class GraphDataModule(_Base):
    r"""Loads and batches the splits named by a validated :obj:`data`
    configuration section (see :mod:`graphormer_sepnorm.training.config`).

    :meth:`prepare_data` (one process per node) copies raw files and runs
    the cached preprocessing; :meth:`setup` loads the cache in every process,
    checks that the training split fills a batch and computes the
    training-target statistics. For a CSV dataset, the global-rank-zero
    process also writes the split used (and the rows skipped) into
    :obj:`run_dir` (see
    :func:`~graphormer_sepnorm.data.csv_splits.write_run_records`).

    Args:
        data_config (dict): The :obj:`data` section.
        seed (int): Seed of the batch order.
        eval_test (bool, optional): Evaluate the test split beside the
            validation split at every validation (default: :obj:`True`);
            :obj:`False` for tuning trials, which must never read test.
        run_dir (str or Path, optional): The run directory.
    """
    def __init__(self, data_config: dict, seed: int = 0,
                 eval_test: bool = True,
                 run_dir: Optional[Union[str, Path]] = None) -> None:
        super().__init__()
        self.cfg = dict(data_config)
        self.seed = seed
        self.eval_test = eval_test
        self.run_dir = run_dir
        self.splits: Optional[GraphSplits] = None
        num_targets = data_info(self.cfg).num_targets
        self.target_mean = [0.0] * num_targets
        self.target_std = [1.0] * num_targets
        self._stores: dict[str, DeviceGraphStore] = {}

    def prepare_data(self) -> None:
        if self.cfg['name'] != 'csv':
            prepare_raw(self.cfg['name'], self.cfg['root'],
                        self.cfg['raw_source'])
        with warnings.catch_warnings():
            # setup() loads the splits again and warns about the CSV's rows
            warnings.simplefilter('ignore', CSVDataWarning)
            load_data_splits(self.cfg)

    def setup(self, stage: Optional[str] = None) -> None:
        if self.splits is not None:
            return
        self.splits = load_data_splits(self.cfg)
        batch_size = self.cfg['batch_size']
        if len(self.splits.train) < batch_size:
            raise DataError(
                f"The training split has {len(self.splits.train)} molecules, "
                f"fewer than one batch (data.batch_size={batch_size}); set "
                f"data.batch_size to at most {len(self.splits.train)}, or use "
                f"more molecules")
        if (self.splits.info.task == 'regression'
                and self.cfg.get('standardize_targets', True)):
            self.target_mean, self.target_std = target_statistics(
                self.splits.train)
        trainer = getattr(self, 'trainer', None)
        if self.run_dir is not None and (trainer is None
                                         or trainer.is_global_zero):
            write_run_records(self.splits, self.run_dir)

    @property
    def info(self):
        return data_info(self.cfg)

    def _device(self):
        trainer = getattr(self, 'trainer', None)
        if trainer is not None:
            return trainer.strategy.root_device
        return torch.device('cpu')

    def _store(self, split: str) -> Optional[DeviceGraphStore]:
        if not self.cfg.get('on_device'):
            return None
        if split not in self._stores:
            self._stores[split] = DeviceGraphStore(self.splits[split],
                                                   self._device())
        return self._stores[split]

    def _loader(self, split: str, train: bool) -> GraphBatchLoader:
        assert self.splits is not None, "call setup() first"
        rank, world_size = _distributed()
        if train:
            batch_size = self.cfg['batch_size']
            if batch_size % world_size:
                raise ValueError(
                    f"data.batch_size={batch_size} is the global batch; it "
                    f"must be divisible by the {world_size} processes")
        else:
            # Evaluation batches are per process.
            batch_size = ((self.cfg.get('eval_batch_size')
                           or self.cfg['batch_size']) * world_size)
        device = self._device()
        return GraphBatchLoader(
            self.splits[split], batch_size, shuffle=train, seed=self.seed,
            rank=rank, world_size=world_size, pad=train,
            num_workers=self.cfg.get('num_workers', 0),
            pin_memory=bool(self.cfg.get('pin_memory')
                            and device.type == 'cuda'),
            store=self._store(split),
            epoch_fn=self._current_epoch if train else None)

    def _current_epoch(self) -> int:
        trainer = getattr(self, 'trainer', None)
        return trainer.current_epoch if trainer is not None else 0

    def train_dataloader(self) -> GraphBatchLoader:
        return self._loader('train', train=True)

    def val_dataloader(self) -> list[GraphBatchLoader]:
        # Validation and test every epoch: the test metric is reported at
        # the epoch of the best validation metric (OGB convention). Tuning
        # trials leave test out, so hyperparameters never see it.
        loaders = [self._loader('val', False)]
        if self.eval_test:
            loaders.append(self._loader('test', False))
        return loaders

    def test_dataloader(self) -> GraphBatchLoader:
        return self._loader('test', train=False)
