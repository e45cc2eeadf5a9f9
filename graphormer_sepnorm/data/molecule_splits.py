r"""The benchmark splits as SMILES with their targets, for baselines that
read SMILES (chemprop) instead of our PyG graphs.

* ZINC-subset: ``<source>/smiles/{train,val,test}.csv`` (columns
  ``smiles,y``); row ``k`` of a file is graph ``k`` of the PyG split (see
  ``../shared/data/README.md``).
* MolHIV: OGB's ``<source>/mapping/mol.csv.gz`` (``HIV_active,smiles``) with
  the scaffold split ``<source>/split/scaffold/{train,valid,test}.csv.gz``;
  molecule ``i`` is graph ``i`` of :obj:`ogbg-molhiv`.

Small-data variants keep the validation and test splits and draw the
training molecules as whole Bemis-Murcko scaffold groups
(:func:`~graphormer_sepnorm.data.splits.scaffold_subsample`, seed 0), so
that every model family trains on the same subsample; they are listed under
their own benchmark name, :func:`subsample_benchmark`.

SMILES that RDKit rejects are dropped and listed, so that one bad molecule
does not stop a run: recent RDKit versions reject 7 MolHIV SMILES (Al, B and
Ge complexes; 3 in train, 2 in val, 2 in test), which OGB featurized with an
older RDKit. Both models must then be scored on the kept molecules;
:attr:`MoleculeSplit.ids` says which.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np

from .splits import murcko_scaffold, scaffold_subsample
from .text_files import open_text

__all__ = ['BASELINE_DATASETS', 'SPLITS', 'MoleculeSplit', 'rdkit_rejects',
           'load_molecule_splits', 'write_splits_csv', 'subsample_benchmark',
           'subsample_train']

PathLike = Union[str, Path]

#: Datasets :func:`load_molecule_splits` reads (names as in ``data.name``).
BASELINE_DATASETS = ('zinc_subset', 'molhiv')
#: Split names, in order (OGB's ``valid`` is called ``val`` here).
SPLITS = ('train', 'val', 'test')


@dataclass
class MoleculeSplit:
    r"""The kept molecules of one split, in file order.

    Attributes:
        smiles (list of str): SMILES that RDKit parses.
        targets (numpy.ndarray): Float targets, :obj:`[len(smiles)]`
            (ZINC: penalized logP; MolHIV: 0/1 activity).
        ids (numpy.ndarray): Index of each kept molecule in its dataset:
            its row in the split CSV (ZINC) or its OGB graph index (MolHIV).
        dropped_ids (list of int): Indices (as :attr:`ids`) of the molecules
            RDKit rejects.
    """
    smiles: list[str]
    targets: np.ndarray
    ids: np.ndarray
    dropped_ids: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.smiles)

    def subset(self, positions: np.ndarray) -> 'MoleculeSplit':
        r"""The molecules at :obj:`positions` (indices into this split),
        with the same dropped molecules."""
        return MoleculeSplit([self.smiles[k] for k in positions],
                             self.targets[positions], self.ids[positions],
                             list(self.dropped_ids))


def subsample_benchmark(dataset: str, train_molecules: int) -> str:
    r"""The benchmark name of :obj:`dataset` with :obj:`train_molecules`
    training molecules, e.g. :obj:`"molhiv_train2000"` (the results table's
    row group)."""
    return f'{dataset}_train{train_molecules}'


def subsample_train(split: MoleculeSplit, train_molecules: int,
                    seed: int = 0) -> MoleculeSplit:
    r"""At most :obj:`train_molecules` molecules of :obj:`split`, drawn as
    whole scaffold groups (see the module documentation), in file order."""
    from rdkit import Chem
    scaffolds = [murcko_scaffold(Chem.MolFromSmiles(s))
                 for s in split.smiles]
    return split.subset(scaffold_subsample(scaffolds, train_molecules, seed))


def rdkit_rejects(smiles: Sequence[str]) -> np.ndarray:
    r"""Which of :obj:`smiles` RDKit cannot build a molecule from, with the
    parser settings chemprop uses (``MolFromSmiles``, explicit hydrogens
    removed), i.e. where chemprop would stop. RDKit's parse errors are not
    printed.

    Returns:
        numpy.ndarray: Boolean, :obj:`[len(smiles)]`.
    """
    from rdkit import Chem
    from rdkit.rdBase import BlockLogs
    params = Chem.SmilesParserParams()
    params.removeHs = True
    with BlockLogs():
        return np.array([Chem.MolFromSmiles(s, params) is None
                         for s in smiles], dtype=bool)


def _keep_parsable(smiles: list[str], targets: np.ndarray,
                   ids: np.ndarray) -> MoleculeSplit:
    rejected = rdkit_rejects(smiles)
    keep = ~rejected
    return MoleculeSplit(
        smiles=[s for s, k in zip(smiles, keep) if k],
        targets=targets[keep], ids=ids[keep],
        dropped_ids=[int(i) for i in ids[rejected]])


def _require(path: Path, example: str) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; pass the dataset "
                                f"folder as the source (e.g. {example})")
    return path


def _read_csv(path: Path) -> list[dict]:
    with open_text(path) as f:
        return list(csv.DictReader(f))


def _zinc_split(source: Path, split: str) -> MoleculeSplit:
    path = _require(source / 'smiles' / f'{split}.csv',
                    '../shared/data/ZINC-proxy')
    rows = _read_csv(path)
    if rows and not {'smiles', 'y'} <= rows[0].keys():
        raise ValueError(f"{path} needs the columns smiles,y; it has "
                         f"{','.join(rows[0].keys())}")
    return _keep_parsable([r['smiles'] for r in rows],
                          np.array([float(r['y']) for r in rows]),
                          np.arange(len(rows)))


def _molhiv_splits(source: Path) -> dict[str, MoleculeSplit]:
    path = _require(source / 'mapping' / 'mol.csv.gz',
                    '../shared/data/ogbg_molhiv')
    rows = _read_csv(path)
    if rows and not {'smiles', 'HIV_active'} <= rows[0].keys():
        raise ValueError(f"{path} needs the columns HIV_active,smiles; it "
                         f"has {','.join(rows[0].keys())}")
    smiles = [r['smiles'] for r in rows]
    targets = np.array([float(r['HIV_active']) for r in rows])
    splits = {}
    for split, ogb_name in zip(SPLITS, ('train', 'valid', 'test')):
        index_path = _require(
            source / 'split' / 'scaffold' / f'{ogb_name}.csv.gz',
            '../shared/data/ogbg_molhiv')
        with open_text(index_path) as f:
            ids = np.array([int(line) for line in f if line.strip()],
                           dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= len(smiles)):
            raise ValueError(f"{index_path} indexes molecules outside "
                             f"0..{len(smiles) - 1} of {path}")
        splits[split] = _keep_parsable([smiles[i] for i in ids],
                                       targets[ids], ids)
    return splits


def load_molecule_splits(dataset: str, source: PathLike,
                         train_molecules: Optional[int] = None
                         ) -> dict[str, MoleculeSplit]:
    r"""The train, val and test molecules of :obj:`dataset`, without the
    SMILES RDKit rejects (listed in each split's
    :attr:`~MoleculeSplit.dropped_ids`).

    Args:
        dataset (str): :obj:`"zinc_subset"` or :obj:`"molhiv"`.
        source (str or Path): The dataset folder:
            ``../shared/data/ZINC-proxy`` (which holds ``smiles/``) or
            ``../shared/data/ogbg_molhiv`` (OGB's layout).
        train_molecules (int, optional): Keep only this many training
            molecules, drawn by scaffold (:func:`subsample_train`, seed 0);
            validation and test stay whole. (default: :obj:`None`, all)

    Raises:
        FileNotFoundError: A file of the layout is missing (the message
            names it).
        ValueError: Unknown dataset, or a file without the expected
            columns.
    """
    source = Path(source)
    if dataset == 'zinc_subset':
        splits = {split: _zinc_split(source, split) for split in SPLITS}
    elif dataset == 'molhiv':
        splits = _molhiv_splits(source)
    else:
        raise ValueError(f"Unknown dataset {dataset!r}; choose one of "
                         f"{', '.join(BASELINE_DATASETS)}")
    if train_molecules is not None:
        splits['train'] = subsample_train(splits['train'], train_molecules)
    return splits


def write_splits_csv(dataset: str, source: PathLike, path: PathLike,
                     train_molecules: Optional[int] = None) -> Path:
    r"""Writes the benchmark splits of :obj:`dataset` as one CSV that
    ``scripts/train.py`` reads with :obj:`data.name: csv`: columns
    :obj:`smiles`, :obj:`target` (ZINC: penalized logP; MolHIV: 0/1
    activity), :obj:`split` (``train``, ``valid`` or ``test``, for
    :obj:`data.split: column`) and :obj:`id` (the molecule's index as in
    :attr:`MoleculeSplit.ids`), train rows first, each split in file order;
    the molecules RDKit rejects are left out, as for chemprop. With
    :obj:`train_molecules`, the training split is the scaffold subsample of
    :func:`load_molecule_splits`. Returns the path (its folder is
    created)."""
    path = Path(path)
    splits = load_molecule_splits(dataset, source, train_molecules)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['smiles', 'target', 'split', 'id'])
        for name, csv_name in zip(SPLITS, ('train', 'valid', 'test')):
            part = splits[name]
            for smiles, target, i in zip(part.smiles, part.targets,
                                         part.ids):
                writer.writerow([smiles, repr(float(target)), csv_name,
                                 int(i)])
    return path
