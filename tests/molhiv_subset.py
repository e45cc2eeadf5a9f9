r"""A small copy of :obj:`ogbg-molhiv` in OGB's on-disk layout, for smoke
tests and CI."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Sequence

from graphormer_sepnorm.data.datasets.raw_files import (PathLike,
                                                         check_raw_source)

__all__ = ['write_molhiv_subset']


def write_molhiv_subset(source: PathLike, dest: PathLike,
                        sizes: Sequence[int] = (200, 100, 100),
                        min_positives: int = 5) -> Path:
    r"""Writes a small copy of :obj:`ogbg-molhiv` in OGB's on-disk layout
    (for smoke tests and CI: processing all 41,127 molecules takes about a
    minute on two cores).

    From each scaffold split (train, valid, test) it keeps the first
    :obj:`sizes[i]` molecules, swapping in the split's first positives so
    that at least :obj:`min_positives` are present (ROC-AUC needs both
    classes). Molecules keep their relative order; the split files index the
    copy.

    Args:
        source (str or Path): An ``ogbg_molhiv`` folder (or its parent).
        dest (str or Path): Data root to write ``<dest>/ogbg_molhiv`` into.
        sizes (tuple of int): Molecules per split.
        min_positives (int): Positives per split, at least.
    The SMILES of the kept molecules go to ``mapping/mol.csv.gz``, as in
    OGB's layout, when :obj:`source` has that file.

    Returns:
        The written ``ogbg_molhiv`` folder.
    """
    import numpy as np
    import pandas as pd

    folder = check_raw_source('molhiv', source)
    out = Path(dest) / 'ogbg_molhiv'

    def read(name: str) -> np.ndarray:
        return pd.read_csv(folder / name, compression='gzip', header=None,
                           dtype=np.int64).values

    labels = read('raw/graph-label.csv.gz')[:, 0]
    chosen = []
    for split, size in zip(('train', 'valid', 'test'), sizes):
        index = read(f'split/scaffold/{split}.csv.gz')[:, 0]
        positives = index[labels[index] == 1][:min_positives]
        rest = [i for i in index[:size] if i not in set(positives)]
        keep = np.sort(np.concatenate(
            [positives,
             rest[:max(size - len(positives), 0)]]).astype(np.int64))
        chosen.append(keep)
    molecules = np.concatenate(chosen)
    order = np.argsort(molecules, kind='stable')
    molecules = molecules[order]
    new_id = np.empty(len(molecules), dtype=np.int64)
    new_id[order] = np.arange(len(molecules))

    num_nodes = read('raw/num-node-list.csv.gz')[:, 0]
    num_edges = read('raw/num-edge-list.csv.gz')[:, 0]
    node_ptr = np.concatenate([[0], np.cumsum(num_nodes)])
    edge_ptr = np.concatenate([[0], np.cumsum(num_edges)])

    def rows(table: np.ndarray, ptr: np.ndarray) -> np.ndarray:
        return np.concatenate([table[ptr[m]:ptr[m + 1]] for m in molecules])

    def write(name: str, table: np.ndarray) -> None:
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(table).to_csv(path, header=False, index=False,
                                   compression='gzip')

    write('raw/node-feat.csv.gz', rows(read('raw/node-feat.csv.gz'), node_ptr))
    write('raw/edge.csv.gz', rows(read('raw/edge.csv.gz'), edge_ptr))
    write('raw/edge-feat.csv.gz', rows(read('raw/edge-feat.csv.gz'), edge_ptr))
    write('raw/num-node-list.csv.gz', num_nodes[molecules].reshape(-1, 1))
    write('raw/num-edge-list.csv.gz', num_edges[molecules].reshape(-1, 1))
    write('raw/graph-label.csv.gz', labels[molecules].reshape(-1, 1))
    start = 0
    for split, keep in zip(('train', 'valid', 'test'), chosen):
        ids = np.sort(new_id[start:start + len(keep)])
        start += len(keep)
        write(f'split/scaffold/{split}.csv.gz', ids.reshape(-1, 1))
    mapping = folder / 'mapping' / 'mol.csv.gz'
    if mapping.is_file():  # the SMILES, for tests that featurize them
        smiles = pd.read_csv(mapping, compression='gzip')
        (out / 'mapping').mkdir(parents=True, exist_ok=True)
        smiles.iloc[molecules].to_csv(out / 'mapping' / 'mol.csv.gz',
                                      index=False, compression='gzip')
    shutil.copyfile(folder / 'RELEASE_v1.txt', out / 'RELEASE_v1.txt')
    return out
