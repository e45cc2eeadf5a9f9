r"""Dataset identity: the built-in dataset names and the
:class:`DatasetInfo` (task, metric, featurizer, vocabularies) of each
dataset."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

__all__ = ['DATASET_NAMES', 'DatasetInfo', 'dataset_info', 'data_info']

#: Dataset names accepted by :func:`load_splits` (config key ``data.name``;
#: :obj:`"csv"`, your own molecules, is loaded by :func:`load_data_splits`).
DATASET_NAMES = ('zinc', 'zinc_subset', 'molhiv')


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
            (lower is better) or :obj:`"rocauc"`.
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


def dataset_info(name: str) -> DatasetInfo:
    r"""The :class:`DatasetInfo` of :obj:`name`."""
    from ..featurize import featurizer_vocab_sizes
    if name in ('zinc', 'zinc_subset'):
        return DatasetInfo(name, 'ZINC-subset' if name == 'zinc_subset' else
                           'ZINC', 'regression', 'zinc', 'mae',
                           *featurizer_vocab_sizes('zinc'))
    if name == 'molhiv':
        return DatasetInfo(name, 'ogbg-molhiv', 'binary', 'ogb', 'rocauc',
                           *featurizer_vocab_sizes('ogb'))
    raise ValueError(f"Unknown dataset {name!r}; choose one of "
                     f"{', '.join(DATASET_NAMES)}")


def data_info(data: Mapping) -> DatasetInfo:
    r"""The :class:`DatasetInfo` of a validated :obj:`data` configuration
    section (a built-in dataset, or your own CSV)."""
    if data['name'] == 'csv':
        from ..csv_config import csv_info
        return csv_info(data)
    return dataset_info(data['name'])
