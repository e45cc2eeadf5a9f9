r"""What loading a dataset gives the trainer: its train, validation and
test splits (:class:`GraphSplits`) and what it needs to know about the
dataset (:class:`DatasetInfo`).

Both the built-in datasets (:mod:`~graphormer_sepnorm.data.datasets`) and
your own CSV (:mod:`~graphormer_sepnorm.data.csv_splits`) build these, so
they live below both (the ``datasets`` package re-exports them).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

__all__ = ['DatasetInfo', 'GraphSplits', 'limit_splits']


@dataclass(frozen=True)
class DatasetInfo:
    r"""What the trainer needs to know about a dataset.

    Attributes:
        name (str): :obj:`"zinc"`, :obj:`"zinc_subset"`, :obj:`"molhiv"` or
            :obj:`"csv"`.
        title (str): Human-readable name (stored in the model card).
        task (str): :obj:`"regression"` or :obj:`"binary"`.
        featurizer (str): SMILES featurizer that reproduces its graphs.
        metric (str): The default model-selection metric, :obj:`"mae"`
            (lower is better), :obj:`"std_mae"` (several regression
            targets; lower is better) or :obj:`"rocauc"`.
        atom_vocab_sizes (list of int): Values per column of :obj:`x`.
        bond_vocab_sizes (list of int): Values per column of
            :obj:`edge_attr`.
        target_names (tuple of str): The names of the targets (the CSV
            columns), empty for the built-in single-target datasets.
    """
    name: str
    title: str
    task: str
    featurizer: str
    metric: str
    atom_vocab_sizes: tuple
    bond_vocab_sizes: tuple
    target_names: tuple = ()

    @property
    def higher_is_better(self) -> bool:
        return self.metric == 'rocauc'

    @property
    def num_targets(self) -> int:
        return max(len(self.target_names), 1)


@dataclass
class GraphSplits:
    r"""The train, validation and test splits of a dataset (PyG in-memory
    datasets, possibly index views) and its :class:`DatasetInfo`."""
    train: object
    val: object
    test: object
    info: DatasetInfo

    def __getitem__(self, split: str):
        return {'train': self.train, 'val': self.val, 'test': self.test}[split]


def limit_splits(splits: Sequence, *limits: Optional[int]) -> list:
    r"""Each split cut to its first :obj:`limit` graphs (:obj:`None`: all)."""
    return [split[:limit] if limit is not None and limit < len(split)
            else split for split, limit in zip(splits, limits)]
