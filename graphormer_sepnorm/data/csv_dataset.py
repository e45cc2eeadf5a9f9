r"""Your own molecules: a CSV file of SMILES and one or more targets as a
PyG :class:`~torch_geometric.data.InMemoryDataset` (config
:obj:`data.name: csv`; its splits for training come from
:mod:`.csv_splits`).

The CSV is featurized once (:mod:`~graphormer_sepnorm.data.featurize`,
``ogb`` or ``zinc``), preprocessed by the :obj:`pre_transform` (for
training, :class:`~graphormer_sepnorm.transforms.AddShortestPaths`) and
cached under ``<root>/<file stem>_<digest>/``. The digest covers the file's
bytes, the SMILES and target columns, the featurizer, :obj:`max_nodes` and
the :obj:`pre_transform`, so editing a label or changing the featurizer
builds a new cache, and an unchanged file loads in seconds.

Every load reads the CSV again and checks it (:mod:`.csv_table`): missing
columns, non-numeric or infinite targets, empty target columns and binary
labels other than 0/1 raise :class:`~.csv_table.CSVDataError`. Rows that
cannot become a graph (unparsable or empty SMILES, atoms outside the
featurizer's vocabulary, more than :obj:`max_nodes` atoms) and rows without
any label are skipped: the others are used, and :attr:`skipped` lists each
skipped row's line, SMILES and reason. Molecules that appear more than once
(same canonical SMILES) with different labels are all kept, as chemprop
does, with a :class:`CSVDataWarning`.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence, Union

import numpy as np
import torch
from torch_geometric.data import InMemoryDataset

from .csv_table import (CSVDataError, parse_split_column, parse_targets,
                        read_table)
from .splits import murcko_scaffold, random_split, scaffold_split

__all__ = ['MoleculeCSVDataset', 'CSVDataWarning', 'csv_columns',
           'SKIPPED_FILE']

PathLike = Union[str, Path]

#: The file of a CSV run's directory that lists the skipped rows.
SKIPPED_FILE = 'skipped_rows.csv'

# Bumped when the processed layout changes, so old caches are not reused.
_CACHE_FORMAT = 1


class CSVDataWarning(UserWarning):
    r"""Rows of a training CSV that were skipped, or duplicates with
    conflicting labels."""


class MoleculeCSVDataset(InMemoryDataset):
    r"""The molecules of a CSV file with a SMILES column and target columns.

    Each graph holds the featurizer's :obj:`x`, :obj:`edge_index` and
    :obj:`edge_attr`, whatever the :obj:`pre_transform` adds, and :obj:`y`
    of shape :obj:`[1, num_targets]` (float, :obj:`NaN` for a missing
    label). :attr:`lines` gives each graph's line in the CSV,
    :attr:`scaffolds` its Bemis-Murcko scaffold and :attr:`canonical_smiles`
    its canonical SMILES.

    Args:
        root (str or Path): Folder of the processed caches.
        path (str or Path): The CSV file (``.csv`` or ``.csv.gz``).
        smiles_column (str, optional): The SMILES column.
            (default: :obj:`"smiles"`)
        target_columns (list of str, optional): The target columns.
            (default: :obj:`("y",)`)
        task (str, optional): :obj:`"regression"` or :obj:`"binary"` (0/1
            labels). (default: :obj:`"regression"`)
        featurizer (str, optional): :obj:`"ogb"` or :obj:`"zinc"`.
            (default: :obj:`"ogb"`)
        max_nodes (int, optional): Molecules with more heavy atoms are
            skipped. (default: :obj:`512`)
        split_column (str, optional): A column holding each row's split
            (checked to exist). (default: :obj:`None`)
        transform (callable, optional): PyG :obj:`transform`.
            (default: :obj:`None`)
        pre_transform (callable, optional): PyG :obj:`pre_transform`, *e.g.*
            :class:`~graphormer_sepnorm.transforms.AddShortestPaths`.
            (default: :obj:`None`)
        log (bool, optional): Show PyG's messages and a progress bar while
            processing. (default: :obj:`True`)
        force_reload (bool, optional): Process again even if cached.
            (default: :obj:`False`)
    """
    def __init__(self, root: PathLike, path: PathLike,
                 smiles_column: str = 'smiles',
                 target_columns: Sequence[str] = ('y', ),
                 task: str = 'regression', featurizer: str = 'ogb',
                 max_nodes: int = 512, split_column: Optional[str] = None,
                 transform: Optional[Callable] = None,
                 pre_transform: Optional[Callable] = None, log: bool = True,
                 force_reload: bool = False) -> None:
        from .featurize import get_featurizer
        get_featurizer(featurizer)  # an unknown name fails here
        self.path = Path(path)
        self.smiles_column = smiles_column
        self.target_columns = list(target_columns)
        self.task = task
        self.featurizer = featurizer
        self.max_nodes = max_nodes
        self.split_column = split_column
        self.table = read_table(self.path, csv_columns(
            smiles_column, self.target_columns, split_column))
        self.targets = parse_targets(self.table, self.path,
                                     self.target_columns, task)
        self.digest = self._digest(pre_transform)
        super().__init__(str(root), transform, pre_transform, log=log,
                         force_reload=force_reload)
        self.load(self.processed_paths[0])
        import pandas as pd
        molecules = pd.read_csv(self.processed_paths[1], dtype={
            'line': np.int64, 'canonical_smiles': str, 'scaffold': str
        }, keep_default_na=False)
        self.lines = molecules['line'].to_numpy()
        self.canonical_smiles = molecules['canonical_smiles'].tolist()
        self.scaffolds = molecules['scaffold'].tolist()
        self.skipped = pd.read_csv(self.processed_paths[2], dtype=str,
                                   keep_default_na=False)
        self._warn_about_rows()

    def _digest(self, pre_transform: Optional[Callable]) -> str:
        hasher = hashlib.sha256()
        with open(self.path, 'rb') as f:
            for block in iter(lambda: f.read(1 << 20), b''):
                hasher.update(block)
        hasher.update(json.dumps([
            _CACHE_FORMAT, self.smiles_column, self.target_columns,
            self.featurizer, self.max_nodes, repr(pre_transform)
        ]).encode())
        return hasher.hexdigest()[:16]

    @property
    def raw_dir(self) -> str:
        return str(self.path.parent)

    @property
    def raw_file_names(self) -> list[str]:
        return [self.path.name]

    @property
    def processed_dir(self) -> str:
        stem = self.path.name.split('.')[0] or 'data'
        return os.path.join(self.root, f'{stem}_{self.digest}')

    @property
    def processed_file_names(self) -> list[str]:
        return ['data.pt', 'molecules.csv', 'skipped_rows.csv']

    @property
    def num_targets(self) -> int:
        return len(self.target_columns)

    def download(self) -> None:  # pragma: no cover - checked in __init__
        raise CSVDataError(f"{self.path} does not exist")

    def process(self) -> None:
        import pandas as pd
        from rdkit import Chem, rdBase
        from tqdm.auto import tqdm

        from .featurize import FeaturizationError, get_featurizer

        featurize = get_featurizer(self.featurizer)
        graphs, molecules, skipped = [], [], []
        smiles_cells = self.table[self.smiles_column].tolist()
        for position in tqdm(range(len(smiles_cells)), unit='mol',
                             desc=f'Featurizing {self.path.name}',
                             disable=None if self.log else True):
            line = int(self.table.index[position])
            smiles = smiles_cells[position]
            labels = self.targets[position]
            if np.isnan(labels).all():
                skipped.append((line, smiles, 'no target value: every '
                                'target column of this row is empty'))
                continue
            try:
                graph = featurize(smiles, max_nodes=self.max_nodes)
                if self.pre_transform is not None:
                    graph = self.pre_transform(graph)
            except FeaturizationError as error:
                skipped.append((line, smiles, str(error)))
                continue
            except Exception as error:  # one molecule never stops the rest
                skipped.append((line, smiles, f"could not be featurized "
                                f"({type(error).__name__}: {error})"))
                continue
            with rdBase.BlockLogs():
                mol = Chem.MolFromSmiles(smiles.strip())
            graph.y = torch.tensor(labels, dtype=torch.float).view(1, -1)
            graphs.append(graph)
            molecules.append((line, Chem.MolToSmiles(mol),
                              murcko_scaffold(mol)))
        if not graphs:
            reason = skipped[0][2] if skipped else 'the file has no rows'
            raise CSVDataError(
                f"{self.path}: none of its {len(smiles_cells)} rows can be "
                f"used (first problem: {reason}); check "
                f"data.smiles_column, data.featurizer and the SMILES")
        pd.DataFrame(molecules, columns=['line', 'canonical_smiles',
                                         'scaffold']).to_csv(
            self.processed_paths[1], index=False)
        pd.DataFrame(skipped, columns=['line', 'smiles', 'reason']).to_csv(
            self.processed_paths[2], index=False)
        # Written last and renamed into place: a run killed while processing
        # leaves no complete-looking cache behind.
        partial = self.processed_paths[0] + '.part'
        self.save(graphs, partial)
        os.replace(partial, self.processed_paths[0])

    def _warn_about_rows(self) -> None:
        total = len(self.lines) + len(self.skipped)
        if len(self.skipped):
            first = self.skipped.iloc[0]
            warnings.warn(
                f"{self.path}: skipped {len(self.skipped)} of {total} rows "
                f"that cannot be used (e.g. line {first['line']}: "
                f"{first['reason']}); training uses the other "
                f"{len(self.lines)}. The run directory lists them in "
                f"{SKIPPED_FILE}", CSVDataWarning, stacklevel=3)
        conflicts = self.conflicting_duplicates()
        if conflicts:
            example = conflicts[0]
            warnings.warn(
                f"{self.path}: {len(conflicts)} molecules appear on several "
                f"lines with different labels (e.g. lines "
                f"{', '.join(map(str, example))}: "
                f"{self.table.at[example[0], self.smiles_column]}); all their "
                f"rows are kept, as chemprop does. Remove or average the "
                f"duplicates if they are errors", CSVDataWarning,
                stacklevel=3)

    def conflicting_duplicates(self) -> list[list[int]]:
        r"""The lines of each molecule (same canonical SMILES) that appears
        more than once with different values of some target."""
        import pandas as pd
        y = self._data.y.double().numpy()
        frame = pd.DataFrame(y, columns=range(y.shape[1]))
        frame['molecule'] = self.canonical_smiles
        frame['line'] = self.lines
        repeated = frame[frame.duplicated('molecule', keep=False)]
        if repeated.empty:
            return []
        groups = repeated.groupby('molecule', sort=False)
        distinct = groups[list(range(y.shape[1]))].nunique()
        conflicting = distinct.index[(distinct > 1).any(axis=1)]
        lines = groups['line'].apply(list)
        return [sorted(lines[m]) for m in conflicting]

    def split_indices(self, split: str = 'scaffold',
                      sizes: Sequence[float] = (0.8, 0.1, 0.1),
                      seed: int = 0) -> list[np.ndarray]:
        r"""The graph indices of the train, validation and test splits.

        Args:
            split (str, optional): :obj:`"scaffold"` (balanced Bemis-Murcko
                scaffold split, see :mod:`~graphormer_sepnorm.data.splits`),
                :obj:`"random"` or :obj:`"column"` (the values of
                :obj:`split_column`). (default: :obj:`"scaffold"`)
            sizes (list of float, optional): Fractions of the three splits
                (not used by :obj:`"column"`).
                (default: :obj:`(0.8, 0.1, 0.1)`)
            seed (int, optional): Seed of the split. (default: :obj:`0`)
        """
        if split == 'scaffold':
            return scaffold_split(self.scaffolds, sizes, seed)
        if split == 'random':
            return random_split(len(self.lines), sizes, seed)
        if split == 'column':
            if self.split_column is None:
                raise CSVDataError("data.split=column needs "
                                   "data.split_column, the column holding "
                                   "train/valid/test")
            ids = parse_split_column(self.table, self.path,
                                     self.split_column)
            ids = ids[self.table.index.get_indexer(self.lines)]
            return [np.flatnonzero(ids == k) for k in range(3)]
        raise ValueError(f"Unknown split {split!r}; choose scaffold, random "
                         f"or column")

    def write_split_csv(self, path: PathLike,
                        parts: Mapping[str, np.ndarray]) -> Path:
        r"""Writes the rows of the graphs in :obj:`parts` (split name to
        graph indices), as they are in the CSV, with a :obj:`split` column,
        in file order; training on it with :obj:`data.split: column` and
        :obj:`data.split_column: split` reproduces the split."""
        path = Path(path)
        split = {}
        for name, indices in parts.items():
            for line in self.lines[np.asarray(indices, dtype=np.int64)]:
                split[int(line)] = name
        rows = self.table.loc[sorted(split)].copy()
        rows['split'] = [split[line] for line in rows.index]
        rows.to_csv(path, index=False)
        return path


def csv_columns(smiles_column: str, target_columns: Sequence[str],
                split_column: Optional[str] = None,
                id_column: Optional[str] = None) -> dict[str, list[str]]:
    r"""The columns a CSV must hold, by the config key naming them."""
    columns = {'data.smiles_column': [smiles_column],
               'data.target_columns': list(target_columns)}
    if split_column is not None:
        columns['data.split_column'] = [split_column]
    if id_column is not None:
        columns['data.id_column'] = [id_column]
    return columns
