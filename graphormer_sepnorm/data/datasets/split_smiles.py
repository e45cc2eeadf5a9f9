r"""The SMILES of a built-in dataset's molecules, by the ids a training
run writes in :obj:`test_predictions.csv` (:func:`split_molecules`), so
that the molecules of a benchmark run can be drawn.

Where they are known:

* MolHIV: the id is OGB's graph index, the row of
  ``ogbg_molhiv/mapping/mol.csv.gz`` (columns ``HIV_active,smiles,mol_id``),
  which OGB's download and ``../shared/data/ogbg_molhiv`` both hold;
* ZINC (``zinc``, ``zinc_subset``): the id is the position in the split,
  the row of ``smiles/<split>.csv`` (columns ``smiles,y``) that
  ``../shared/data/ZINC-proxy`` holds beside its raw files. PyG's download
  has no SMILES.

Each molecule comes with its label, so that a caller can check that the
file describes the same molecules as its predictions.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple, Optional, Sequence

from ..text_files import open_text
from .raw_files import PathLike

__all__ = ['SplitMolecules', 'split_molecules', 'smiles_files']

#: Per dataset name: the SMILES file under a dataset folder (``{split}``
#: is the split's name), its SMILES column and its label column.
_LAYOUTS = {
    'molhiv': ('mapping/mol.csv.gz', 'smiles', 'HIV_active'),
    'zinc': ('smiles/{split}.csv', 'smiles', 'y'),
    'zinc_subset': ('smiles/{split}.csv', 'smiles', 'y'),
}
#: The dataset folder's name inside a folder that holds it.
_FOLDERS = {'molhiv': 'ogbg_molhiv', 'zinc': 'ZINC-proxy',
            'zinc_subset': 'ZINC-proxy'}


class SplitMolecules(NamedTuple):
    r"""The molecules of a split by id: :obj:`smiles[id]`, :obj:`labels[id]`
    (NaN where empty), read from :obj:`path`."""
    path: Path
    smiles: list[str]
    labels: list[float]


def smiles_files(name: str, split: str,
                 folders: Sequence[PathLike]) -> list[Path]:
    r"""The files :func:`split_molecules` looks for, in order: for each
    folder, its SMILES file as a dataset folder, then as the folder that
    holds the dataset folder. Empty for a dataset without known SMILES.

    Args:
        name (str): The dataset name (:obj:`data.name`).
        split (str): :obj:`"train"`, :obj:`"val"` or :obj:`"test"`.
        folders (list of str or Path): Dataset folders, or folders holding
            one (:obj:`data.raw_source`, the dataset folder under
            :obj:`data.root`).
    """
    if name not in _LAYOUTS:
        return []
    relative = _LAYOUTS[name][0].format(split=split)
    return [path for folder in folders
            for path in (Path(folder) / relative,
                         Path(folder) / _FOLDERS[name] / relative)]


def split_molecules(name: str, split: str, folders: Sequence[PathLike]
                    ) -> Optional[SplitMolecules]:
    r"""The SMILES and labels of the molecules of :obj:`split` of the
    built-in dataset :obj:`name`, indexed by the id
    :func:`~graphormer_sepnorm.training.evaluate.predict_split` gives them,
    from the first of :func:`smiles_files` that exists; :obj:`None` if
    none does.

    Args:
        name (str): The dataset name (:obj:`data.name`).
        split (str): :obj:`"train"`, :obj:`"val"` or :obj:`"test"` (MolHIV's
            file holds every split; its ids are OGB's graph indices).
        folders (list of str or Path): Where to look (see
            :func:`smiles_files`).
    """
    path = next((p for p in smiles_files(name, split, folders)
                 if p.is_file()), None)
    if path is None:
        return None
    _, smiles_column, label_column = _LAYOUTS[name]
    with open_text(path) as f:
        rows = list(csv.DictReader(f))
    return SplitMolecules(path, [row[smiles_column] for row in rows],
                          [float(row[label_column] or 'nan')
                           for row in rows])
