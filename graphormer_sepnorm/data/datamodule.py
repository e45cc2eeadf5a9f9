r"""The Lightning data module of training: loads the configured splits and
batches them with :class:`~graphormer_sepnorm.data.batch_loader.GraphBatchLoader`
(on the host, or on the device from a
:class:`~graphormer_sepnorm.data.graph_store.DeviceGraphStore`).
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Optional, Union

import torch

from .batch_loader import GraphBatchLoader, loader_layout, loader_workers
from .csv_dataset import CSVDataWarning
from .csv_splits import write_run_records
from .datasets import (GraphSplits, data_info, load_data_splits, prepare_raw,
                       target_statistics)
from .errors import DataError
from .file_lock import folder_lock
from .graph_features import add_graph_features
from .graph_store import DeviceGraphStore

__all__ = ['GraphDataModule']


def _processes_per_node(module) -> int:
    trainer = getattr(module, 'trainer', None)
    return max(1, getattr(trainer, 'num_devices', 1) or 1)


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

    :meth:`prepare_data` (one process per node, one node at a time on a
    shared :obj:`data.root`: see :func:`~graphormer_sepnorm.data.file_lock.
    folder_lock`) copies raw files and runs the cached preprocessing; :meth:`setup` loads the cache in every process,
    checks that the training split fills a batch and computes the
    training-target statistics and the molecule features
    (:func:`~graphormer_sepnorm.data.graph_features.add_graph_features`,
    fitted on the training split: :attr:`molecule_featurizer`). For a CSV dataset, the global-rank-zero
    process also writes the split used (and the rows skipped) into
    :obj:`run_dir` (see
    :func:`~graphormer_sepnorm.data.csv_splits.write_run_records`).

    Args:
        data_config (dict): The :obj:`data` section.
        seed (int): Seed of the batch order.
        eval_test (bool, optional): Evaluate the test split beside the
            validation split at every validation (default: :obj:`True`;
            training passes it :obj:`train.test_at=every_validation`);
            :obj:`False` when test is scored once after training, or never
            (tuning trials).
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
        self.molecule_featurizer = None
        self.features_rejected: dict[str, int] = {}
        num_targets = data_info(self.cfg).num_targets
        self.target_mean = [0.0] * num_targets
        self.target_std = [1.0] * num_targets
        self._stores: dict[str, DeviceGraphStore] = {}

    def prepare_data(self) -> None:
        # Once per node: nodes sharing data.root take turns (folder_lock).
        with folder_lock(self.cfg['root']):
            if self.cfg['name'] != 'csv':
                prepare_raw(self.cfg['name'], self.cfg['root'],
                            self.cfg['raw_source'])
            with warnings.catch_warnings():
                # setup() loads the splits again and warns about the CSV's
                # rows
                warnings.simplefilter('ignore', CSVDataWarning)
                # The molecule features are cached here too (under the lock).
                warnings.simplefilter('ignore', UserWarning)
                add_graph_features(load_data_splits(self.cfg), self.cfg)

    def setup(self, stage: Optional[str] = None) -> None:
        if self.splits is not None:
            return
        # Molecule features (data.molecule_features): standardized with the
        # training split's statistics, which the model card keeps.
        self.splits, self.molecule_featurizer, self.features_rejected = \
            add_graph_features(load_data_splits(self.cfg), self.cfg)
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
    def train_dataset(self):
        r"""The training split (after :meth:`setup`)."""
        assert self.splits is not None, "call setup() first"
        return self.splits['train']

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
            num_workers=loader_workers(self.cfg.get('num_workers', 0), device,
                                       _processes_per_node(self)),
            pin_memory=bool(self.cfg.get('pin_memory')
                            and device.type == 'cuda'),
            store=self._store(split),
            epoch_fn=self._current_epoch if train else None,
            layout=loader_layout(getattr(self, 'trainer', None)))

    def _current_epoch(self) -> int:
        trainer = getattr(self, 'trainer', None)
        return trainer.current_epoch if trainer is not None else 0

    def train_dataloader(self) -> GraphBatchLoader:
        return self._loader('train', train=True)

    def val_dataloader(self) -> list[GraphBatchLoader]:
        # With eval_test, test beside every validation: its metric is read
        # at the epoch of the best validation metric (OGB convention).
        # Otherwise validation never touches test: it is scored once after
        # training, or never (tuning trials).
        loaders = [self._loader('val', False)]
        if self.eval_test:
            loaders.append(self._loader('test', False))
        return loaders

    def test_dataloader(self) -> GraphBatchLoader:
        return self._loader('test', train=False)
