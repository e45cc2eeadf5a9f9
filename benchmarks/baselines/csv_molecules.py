r"""The molecules of a CSV training config, split exactly as our run of that
config splits them, for chemprop: the same rows (those our featurizer turns
into a graph), the same scaffold or random split, the same labels (several
tasks, :obj:`NaN` where missing)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from graphormer_sepnorm.data.csv_splits import (identifier_columns,
                                                load_csv_splits)
from graphormer_sepnorm.data.molecule_splits import SPLITS, MoleculeSplit
from graphormer_sepnorm.training.config import ConfigError, load_config

__all__ = ['CSVMolecules', 'load_csv_molecules']


@dataclass
class CSVMolecules:
    r"""A CSV config's splits for the baseline.

    Attributes:
        benchmark (str): The CSV's name without its suffixes (e.g.
            :obj:`"clintox"`), the run's row group.
        task (str): :obj:`"binary"` or :obj:`"regression"` (``data.task``).
        target_names (list of str): ``data.target_columns``.
        splits (dict): :class:`~graphormer_sepnorm.data.molecule_splits.
            MoleculeSplit` per split name, targets :obj:`[molecules, tasks]`,
            ids the molecule's index in the dataset (its row in the run's
            ``split.csv``), as in our run's ``test_predictions.csv``.
        skipped_rows (int): CSV rows that give no graph (in no split).
        data (dict): The config's validated ``data`` section.
    """
    benchmark: str
    task: str
    target_names: list[str]
    splits: dict[str, MoleculeSplit]
    skipped_rows: int
    data: dict


def load_csv_molecules(config: str, split_seed: Optional[int] = None,
                       root: Optional[str] = None) -> CSVMolecules:
    r"""The splits of the CSV training config :obj:`config`.

    Args:
        config (str): A training config whose ``data.name`` is ``csv``.
        split_seed (int, optional): ``data.split_seed`` (default:
            :obj:`None`, the config's).
        root (str, optional): ``data.root``, where the processed CSV is
            cached (default: :obj:`None`, the config's).

    Raises:
        ConfigError: The config is invalid or not a CSV config.
    """
    overrides = [f'data.split_seed={split_seed}'] if split_seed is not None \
        else []
    if root is not None:
        overrides.append(f'data.root={root}')
    data = load_config(config, overrides)['data']
    if data['name'] != 'csv':
        raise ConfigError(f"{config}: data.name is {data['name']!r}; the "
                          f"baseline's --config needs a CSV config "
                          f"(data.name: csv), or use --dataset")
    views = load_csv_splits(data)
    splits = {}
    for name in SPLITS:
        view = views[name]
        columns = identifier_columns(view)
        labels = torch.cat([graph.y for graph in view]).numpy()
        splits[name] = MoleculeSplit(
            list(columns[data['smiles_column']]), labels.astype(np.float64),
            np.asarray(columns['id'], dtype=np.int64))
    benchmark = Path(data['path']).name.split('.')[0]
    return CSVMolecules(benchmark, data['task'], list(data['target_columns']),
                        splits, len(views.train.skipped), data)
