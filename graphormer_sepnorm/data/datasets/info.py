r"""Dataset identity: the built-in dataset names and the
:class:`~graphormer_sepnorm.data.graph_splits.DatasetInfo` (task, metric,
featurizer, vocabularies) of each dataset, built-in or CSV."""
from __future__ import annotations

from typing import Mapping

from ..graph_splits import DatasetInfo

__all__ = ['DATASET_NAMES', 'DatasetInfo', 'dataset_info', 'data_info']

#: Dataset names accepted by :func:`load_splits` (config key ``data.name``;
#: :obj:`"csv"`, your own molecules, is loaded by :func:`load_data_splits`).
DATASET_NAMES = ('zinc', 'zinc_subset', 'molhiv')


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
