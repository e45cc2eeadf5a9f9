r"""Molecule features on the training splits: every graph gets
:obj:`graph_features` :obj:`[1, channels]` (so a PyG batch stacks them into
:obj:`[num_graphs, channels]`), computed by the
:class:`~.molecule_features.MoleculeFeaturizer` of the :obj:`data` section
from the graph's SMILES:

* a CSV (:obj:`data.name: csv`): its SMILES column, and its
  :obj:`data.feature_columns`;
* MolHIV: OGB's ``mapping/mol.csv.gz`` (row :obj:`i`: graph :obj:`i`),
  under the dataset folder of :obj:`data.root` or :obj:`data.raw_source`;
* ZINC (subset or full): ``smiles/{train,val,test}.csv`` of
  :obj:`data.raw_source` (``../shared/data/ZINC-proxy``; row :obj:`k`:
  graph :obj:`k` of the split) or of ``<data.root>/ZINC``.

The unstandardized features are cached under
``<data.root>/molecule_features/`` (named by a digest of the settings, the
RDKit version and the molecules), so a second run starts in seconds. The
standardization is fitted on the training split (after the rejected
molecules are left out) unless a fitted featurizer is given (evaluating a
saved model). Rejected molecules (see :mod:`.molecule_features`) are left
out of their split with a warning; a CSV run lists them in
``skipped_rows.csv``.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import torch

from .errors import DataError
from .featurize.smiles import FeaturizationError
from .graph_splits import GraphSplits
from .molecule_features import MoleculeFeaturizer, molecule_featurizer

__all__ = ['add_graph_features', 'split_molecules', 'raw_features']

_SPLITS = ('train', 'val', 'test')


def _base_size(split) -> int:
    return int(split.slices['x'].numel()) - 1


def _read_smiles_csv(path: Path, column: str) -> list[str]:
    import pandas as pd
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    if column not in table.columns:
        raise DataError(f"{path} has no column {column!r}; molecule "
                        f"features need each graph's SMILES")
    return table[column].tolist()


def _first_file(candidates: Sequence[Path], what: str) -> Path:
    for path in candidates:
        if path.is_file():
            return path
    raise DataError(
        f"Molecule features need the SMILES of every graph of {what}, in "
        f"{' or '.join(map(str, candidates))}; none exists. Set "
        f"data.raw_source to the dataset folder holding them (e.g. "
        f"../shared/data/ogbg_molhiv or ../shared/data/ZINC-proxy), or "
        f"train without data.molecule_features")


def split_molecules(splits: GraphSplits, data: Mapping[str, Any]
                    ) -> dict[str, list[tuple[str, Optional[list]]]]:
    r"""Each split's molecules in graph order: :obj:`(smiles, columns)`,
    :obj:`columns` the values of :obj:`data.feature_columns` (CSV) or
    :obj:`None`."""
    from .datasets import dataset_dir
    name = data['name']
    source = Path(data['raw_source']) if data.get('raw_source') else None
    out = {}
    for split_name in _SPLITS:
        split = splits[split_name]
        ids = np.asarray(split.indices(), dtype=np.int64)
        if name == 'csv':
            rows = split.table.loc[split.lines[ids]]
            smiles = rows[split.smiles_column].tolist()
            columns = data.get('feature_columns') or []
            values = (rows[columns].values.tolist() if columns
                      else [None] * len(smiles))
            out[split_name] = list(zip(smiles, values))
            continue
        if name == 'molhiv':
            folder = dataset_dir(name, data['root'])
            candidates = [folder / 'mapping' / 'mol.csv.gz']
            if source is not None:
                candidates += [source / 'mapping' / 'mol.csv.gz',
                               source / 'ogbg_molhiv' / 'mapping' /
                               'mol.csv.gz']
            all_smiles = _read_smiles_csv(_first_file(candidates, 'MolHIV'),
                                          'smiles')
        else:
            file = f'{split_name}.csv'
            candidates = [dataset_dir(name, data['root']) / 'smiles' / file]
            if source is not None:
                candidates.insert(0, source / 'smiles' / file)
            path = _first_file(candidates, f'ZINC {split_name}')
            all_smiles = _read_smiles_csv(path, 'smiles')
        if len(all_smiles) != _base_size(split):
            raise DataError(
                f"The SMILES file of {name} {split_name} has "
                f"{len(all_smiles)} rows but the dataset has "
                f"{_base_size(split)} graphs; they come from different "
                f"copies: set data.raw_source to the folder the graphs were "
                f"built from")
        out[split_name] = [(all_smiles[i], None) for i in ids]
    return out


def _digest(featurizer: MoleculeFeaturizer,
            molecules: Sequence[tuple[str, Optional[list]]]) -> str:
    from rdkit import __version__ as rdkit_version
    hasher = hashlib.sha256(json.dumps(
        [1, featurizer.settings(), rdkit_version]).encode())
    for smiles, columns in molecules:
        hasher.update(json.dumps([smiles, columns]).encode())
    return hasher.hexdigest()[:20]


def raw_features(featurizer: MoleculeFeaturizer,
                 molecules: Sequence[tuple[str, Optional[list]]],
                 cache_dir: Optional[Path] = None
                 ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    r"""The :meth:`~MoleculeFeaturizer.raw` vectors of :obj:`molecules`:
    all channels as float32 :obj:`[n, channels]` (the counts exactly), the
    scaled channels as float64 :obj:`[n, len(scaled)]`, and each
    molecule's rejection reason (:obj:`""`: none; its rows are zero),
    read from or written to :obj:`cache_dir`."""
    path = (None if cache_dir is None else
            Path(cache_dir) / f'{_digest(featurizer, molecules)}.npz')
    if path is not None and path.is_file():
        with np.load(path) as cached:
            return (cached['features'], cached['scaled'],
                    cached['errors'].tolist())
    features = np.zeros((len(molecules), featurizer.channels), np.float32)
    scaled = np.zeros((len(molecules), len(featurizer.scaled)), np.float64)
    errors = [''] * len(molecules)
    for i, (smiles, columns) in enumerate(molecules):
        try:
            raw = featurizer.raw(smiles, columns)
        except FeaturizationError as error:
            errors[i] = str(error)
            continue
        features[i] = raw
        scaled[i] = raw[featurizer.scaled]
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix('.part.npz')
        np.savez_compressed(partial, features=features, scaled=scaled,
                            errors=np.array(errors, dtype=str))
        os.replace(partial, path)
    return features, scaled, errors


def add_graph_features(splits: GraphSplits, data: Mapping[str, Any],
                       featurizer: Optional[MoleculeFeaturizer] = None
                       ) -> tuple[GraphSplits, Optional[MoleculeFeaturizer],
                                  dict[str, int]]:
    r"""The splits with :obj:`graph_features` on every graph, the molecules
    whose features cannot be computed left out.

    Args:
        splits (GraphSplits): From
            :func:`~graphormer_sepnorm.data.datasets.load_data_splits`.
        data (dict): The validated :obj:`data` section.
        featurizer (MoleculeFeaturizer, optional): A fitted featurizer (a
            saved model's); :obj:`None`: the section's, fitted here on the
            training split. (default: :obj:`None`)

    Returns:
        The splits, the fitted featurizer (:obj:`None` and the splits
        unchanged without molecule features) and the number of molecules
        left out per split.
    """
    if featurizer is None:
        featurizer = molecule_featurizer(data)
        if featurizer is None:
            return splits, None, {}
    molecules = split_molecules(splits, data)
    cache = Path(data['root']) / 'molecule_features'
    computed = {name: raw_features(featurizer, molecules[name], cache)
                for name in _SPLITS}
    keep = {name: np.flatnonzero(np.array(computed[name][2]) == '')
            for name in _SPLITS}
    if featurizer.scaler is None and len(featurizer.scaled):
        featurizer.fit(computed['train'][1][keep['train']])
    rejected = {name: len(molecules[name]) - len(keep[name])
                for name in _SPLITS}
    views = {}
    for name in _SPLITS:
        split = splits[name]
        features, scaled, _ = computed[name]
        values = torch.from_numpy(featurizer.transform(features, scaled))
        _attach(split, np.asarray(split.indices(), dtype=np.int64), values)
        views[name] = (split if rejected[name] == 0 else
                       split[torch.from_numpy(keep[name])])
        views[name]._data_list = None  # graphs read before lack them
    if any(rejected.values()):
        _report_rejected(splits, data, molecules, computed, views)
    return (GraphSplits(views['train'], views['val'], views['test'],
                        splits.info), featurizer, rejected)


def _attach(split, ids: np.ndarray, values: torch.Tensor) -> None:
    r"""Writes :obj:`values` (one row per graph of :obj:`split`) into the
    dataset that :obj:`split` views, as a per-graph attribute; every view
    of that dataset shares it."""
    store, slices = split._data, split.slices
    size = _base_size(split)
    table = getattr(store, 'graph_features', None)
    if table is None or table.shape != (size, values.shape[1]):
        table = torch.zeros(size, values.shape[1])
        store.graph_features = table
        slices['graph_features'] = torch.arange(size + 1)
    table[torch.from_numpy(ids)] = values


def _report_rejected(splits: GraphSplits, data: Mapping[str, Any],
                     molecules: dict, computed: dict, views: dict) -> None:
    rows = [(name, k, molecules[name][k][0], computed[name][2][k])
            for name in _SPLITS
            for k in np.flatnonzero(np.array(computed[name][2]) != '')]
    counts = ', '.join(f"{sum(r[0] == name for r in rows)} {name}"
                       for name in _SPLITS)
    if data['name'] == 'csv':
        import pandas as pd
        train = splits['train']
        lines = [int(splits[name].lines[splits[name].indices()[k]])
                 for name, k, _, _ in rows]
        extra = pd.DataFrame({'line': [str(line) for line in lines],
                              'smiles': [r[2] for r in rows],
                              'reason': [r[3] for r in rows]})
        skipped = pd.concat([train.skipped, extra], ignore_index=True)
        for view in views.values():
            view.skipped = skipped
    warnings.warn(
        f"Molecule features: left out {len(rows)} molecules whose features "
        f"cannot be computed ({counts}; e.g. {rows[0][3]})"
        + ("; the run directory lists them in skipped_rows.csv"
           if data['name'] == 'csv' else ''), UserWarning, stacklevel=3)
