r"""The train, validation and test splits of a CSV run, the records
written into its run directory (the split used, :data:`SPLIT_FILE`, and the
rows skipped, :data:`~.csv_dataset.SKIPPED_FILE`), and the columns that
tie its predictions back to the CSV (:func:`identifier_columns`)."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional, Union

import numpy as np
import torch

from .csv_config import csv_info
from .csv_dataset import SKIPPED_FILE, MoleculeCSVDataset
from .csv_table import SPLIT_NAMES, CSVDataError, check_columns
from .graph_splits import GraphSplits, limit_splits

__all__ = ['load_csv_splits', 'write_run_records', 'identifier_columns',
           'SPLIT_FILE']

PathLike = Union[str, Path]

#: The file of a CSV run's directory that holds the split used.
SPLIT_FILE = 'split.csv'


def load_csv_splits(data: Mapping) -> GraphSplits:
    r"""The :class:`~graphormer_sepnorm.data.graph_splits.GraphSplits` of a
    CSV :obj:`data` section: the dataset (processed on first use under
    ``<data.root>/csv``, preprocessed by
    :class:`~graphormer_sepnorm.transforms.AddShortestPaths`) split by
    :obj:`data.split`, each split an index view of it.

    Raises:
        CSVDataError: Bad input (see :class:`MoleculeCSVDataset`), or a
            split without molecules.
    """
    from ..transforms import AddShortestPaths
    split_column = data['split_column'] if data['split'] == 'column' else None
    dataset = MoleculeCSVDataset(
        Path(data['root']) / 'csv', data['path'], data['smiles_column'],
        data['target_columns'], data['task'], data['featurizer'],
        data['max_nodes'], split_column,
        pre_transform=AddShortestPaths(max_nodes=data['max_nodes']))
    parts = dataset.split_indices(data['split'], data['split_sizes'],
                                  data['split_seed'])
    for name, indices in zip(SPLIT_NAMES, parts):
        if len(indices) == 0:
            raise CSVDataError(
                f"{dataset.path}: the {name} split is empty ({len(dataset)} "
                f"usable molecules, data.split={data['split']}" +
                (f", data.split_sizes={list(data['split_sizes'])}"
                 if data['split'] != 'column' else '') +
                "); use more molecules or larger split sizes" +
                (f", or put rows with {name} in column {split_column!r}"
                 if split_column else ''))
    views = [dataset[torch.from_numpy(indices)] for indices in parts]
    return GraphSplits(*limit_splits(views, data['limit_train'],
                                     data['limit_val'], data['limit_test']),
                       info=csv_info(data))


def write_run_records(splits, run_dir: PathLike) -> list[Path]:
    r"""For CSV splits, writes :data:`SPLIT_FILE` (the rows used, with
    their split) and, if rows were skipped, :data:`SKIPPED_FILE` (line,
    SMILES, reason) into :obj:`run_dir`; returns the files written (none
    for other datasets)."""
    dataset = splits.train
    if not isinstance(dataset, MoleculeCSVDataset):
        return []
    run_dir = Path(run_dir)
    written = [dataset.write_split_csv(run_dir / SPLIT_FILE, {
        name: np.asarray(splits[split].indices(), dtype=np.int64)
        for name, split in zip(SPLIT_NAMES, ('train', 'val', 'test'))
    })]
    if len(dataset.skipped):
        dataset.skipped.to_csv(run_dir / SKIPPED_FILE, index=False)
        written.append(run_dir / SKIPPED_FILE)
    return written


def identifier_columns(split, id_column: Optional[str] = None
                       ) -> Optional[dict[str, list]]:
    r"""The columns that identify the molecules of a split of a CSV
    dataset in a predictions file, in the split's order, so that the file
    joins with the CSV: :obj:`id_column` (:obj:`data.id_column`) as in the
    CSV, or else :obj:`id`, the molecule's index in the dataset (its row in
    :data:`SPLIT_FILE`, not counting the header), then the SMILES column as
    in the CSV. :obj:`None` for the splits of the other datasets.

    Raises:
        CSVDataError: :obj:`id_column` is not a column of the CSV.
    """
    if not isinstance(split, MoleculeCSVDataset):
        return None
    indices = np.asarray(split.indices(), dtype=np.int64)
    rows = split.table.loc[split.lines[indices]]
    if id_column is None:
        columns = {'id': indices.tolist()}
    else:
        check_columns(split.path, list(rows.columns),
                      {'data.id_column': [id_column]})
        columns = {id_column: rows[id_column].tolist()}
    columns[split.smiles_column] = rows[split.smiles_column].tolist()
    return columns
