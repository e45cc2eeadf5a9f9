r"""The Lightning data module of pretraining: the corpus's training and
validation SMILES files as :class:`~graphormer_sepnorm.pretraining.
corpus_dataset.SmilesCorpus` datasets, featurized on the fly (in
:obj:`data.num_workers` worker processes) and batched by the resumable,
rank-aware :class:`~graphormer_sepnorm.data.batch_loader.GraphBatchLoader`.
With :obj:`pretrain.in_memory`, the training molecules are featurized once,
in :obj:`pretrain.featurize_processes` processes, into a
:class:`~graphormer_sepnorm.pretraining.featurized_corpus.FeaturizedCorpus`
(same items, read from memory); the validation molecules (10,000 in a
built corpus, :obj:`data.limit_val` of them), read once every
:obj:`pretrain.val_every_n_steps` steps, stay featurized on the fly.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

from lightning.pytorch import LightningDataModule
from torch.utils.data import Dataset

from ..data.batch_loader import (GraphBatchLoader, loader_layout,
                                 loader_workers)
from ..data.datamodule import _distributed, _processes_per_node
from ..data.errors import DataError
from ..predict.workers import available_cores
from .corpus_dataset import SmilesCorpus
from .descriptors import DescriptorScaler
from .featurized_corpus import FeaturizedCorpus

__all__ = ['CorpusDataModule', 'corpus_dir']


def corpus_dir(config: dict) -> Path:
    r"""The corpus folder of a validated pretraining configuration:
    :obj:`pretrain.corpus`, or :obj:`<data.root>/pretraining/moses`."""
    configured = config['pretrain']['corpus']
    if configured:
        return Path(configured)
    return Path(config['data']['root']) / 'pretraining' / 'moses'


class CorpusDataModule(LightningDataModule):
    r"""Batches of the pretraining corpus.

    :meth:`setup` opens :obj:`train.smi` and :obj:`val.smi` of the corpus
    folder (written by ``scripts/make_pretraining_corpus.py``) and fits the
    descriptor scaler on the first :obj:`pretrain.scaler_molecules`
    training molecules (the file is shuffled once when written, so they are
    a random sample, and every process and every resume fits the same
    scaler). With :obj:`pretrain.descriptor_loss_weight` 0 no descriptor
    is computed: no scaler, and graphs without :obj:`y`. The files'
    SHA-256 (:attr:`corpus_sha256`) lets a resumed run check that its
    corpus is the one it started on. With :obj:`pretrain.in_memory`,
    :meth:`train_dataloader` first featurizes the training molecules into
    a :class:`~graphormer_sepnorm.pretraining.featurized_corpus.
    FeaturizedCorpus`, in :obj:`pretrain.featurize_processes` processes
    (null: this process's share of the node's cores); its items, and so
    the batches of a seed, are the on-the-fly ones.

    Args:
        config (dict): A validated pretraining configuration.
    """
    def __init__(self, config: dict) -> None:
        super().__init__()
        self.config = config
        self.data = config['data']
        self.pretrain = config['pretrain']
        self.folder = corpus_dir(config)
        self.train_set: Optional[Union[SmilesCorpus,
                                       FeaturizedCorpus]] = None
        self.val_set: Optional[SmilesCorpus] = None
        self.scaler: Optional[DescriptorScaler] = None
        self.corpus_sha256: Optional[dict[str, str]] = None

    def setup(self, stage: Optional[str] = None) -> None:
        if self.train_set is not None:
            return
        paths = {split: self.folder / f'{split}.smi'
                 for split in ('train', 'val')}
        missing = [str(p) for p in paths.values() if not p.exists()]
        if missing:
            raise DataError(
                f"The pretraining corpus is missing {', '.join(missing)}; "
                f"build it with python scripts/make_pretraining_corpus.py "
                f"--data-root {self.data['root']} (or set pretrain.corpus to "
                f"the folder holding train.smi and val.smi)")
        self.train_set = SmilesCorpus(paths['train'], self.data['featurizer'],
                                      None, self.data['max_nodes'],
                                      limit=self.data['limit_train'])
        # A zero descriptor weight needs no descriptor: none is computed.
        if self.pretrain['descriptor_loss_weight'] > 0:
            scaler = DescriptorScaler.fit(self.train_set.descriptor_sample(
                self.pretrain['scaler_molecules']))
        else:
            self.train_set.check_parsable()
            scaler = None
        self.train_set.scaler = self.scaler = scaler
        self.val_set = SmilesCorpus(paths['val'], self.data['featurizer'],
                                    scaler, self.data['max_nodes'],
                                    limit=self.data['limit_val'])
        self.corpus_sha256 = {'train': self.train_set.sha256(),
                              'val': self.val_set.sha256()}
        # Before any training step: a validation without a molecule would
        # fail only after val_every_n_steps steps.
        self.val_set.check_parsable()
        if len(self.train_set) < self.data['batch_size']:
            raise DataError(
                f"The pretraining corpus {paths['train']} has "
                f"{len(self.train_set)} molecules, fewer than one batch "
                f"(data.batch_size={self.data['batch_size']})")

    @property
    def train_dataset(self) -> Union[SmilesCorpus, FeaturizedCorpus]:
        r"""The training molecules (after :meth:`setup`; in memory after
        :meth:`train_dataloader` with :obj:`pretrain.in_memory`)."""
        assert self.train_set is not None, "call setup() first"
        return self.train_set

    def _loader(self, dataset: Dataset, train: bool) -> GraphBatchLoader:
        rank, world_size = _distributed()
        batch_size = self.data['batch_size']
        if train and batch_size % world_size:
            raise ValueError(
                f"data.batch_size={batch_size} is the global batch; it must "
                f"be divisible by the {world_size} processes")
        if not train:
            batch_size = ((self.data['eval_batch_size'] or batch_size)
                          * world_size)
        trainer = getattr(self, 'trainer', None)
        cuda = trainer is not None and \
            trainer.strategy.root_device.type == 'cuda'
        return GraphBatchLoader(
            dataset, batch_size, shuffle=train, seed=self.config['seed'],
            rank=rank, world_size=world_size, pad=train,
            num_workers=loader_workers(
                self.data['num_workers'],
                'cuda' if cuda else 'cpu', _processes_per_node(self)),
            pin_memory=bool(self.data['pin_memory'] and cuda),
            epoch_fn=self._current_epoch if train else None,
            layout=loader_layout(trainer))

    def _current_epoch(self) -> int:
        trainer = getattr(self, 'trainer', None)
        return trainer.current_epoch if trainer is not None else 0

    def train_dataloader(self) -> GraphBatchLoader:
        # Featurized here rather than in setup(): Lightning restores a
        # resumed run's checkpoint in between, and a checkpoint that does
        # not fit (another corpus) is then refused before minutes of
        # featurization.
        if self.pretrain['in_memory'] and isinstance(self.train_set,
                                                     SmilesCorpus):
            self.train_set = FeaturizedCorpus(
                self.train_set, self._featurize_processes(),
                progress=_distributed()[0] == 0)
        return self._loader(self.train_set, train=True)

    def _featurize_processes(self) -> int:
        configured = self.pretrain['featurize_processes']
        if configured is not None:
            return configured
        return max(1, available_cores() // _processes_per_node(self))

    def val_dataloader(self) -> GraphBatchLoader:
        return self._loader(self.val_set, train=False)
