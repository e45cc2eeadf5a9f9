r"""Loading the train, validation and test splits of a dataset
(preprocessed once by
:class:`~graphormer_sepnorm.transforms.AddShortestPaths`), with the scoped
:func:`torch.load` allow-list that OGB's processed file needs."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator, Mapping, Optional
from urllib.error import URLError

import torch

from ..graph_splits import GraphSplits, limit_splits
from .info import dataset_info
from .raw_files import (DownloadError, PathLike, RawFilesMismatchError,
                        prepare_raw)

__all__ = ['ogb_safe_load', 'GraphSplits', 'load_splits', 'load_data_splits',
           'limit_splits']


@contextlib.contextmanager
def ogb_safe_load() -> Iterator[None]:
    r"""Lets :func:`torch.load` (with :obj:`weights_only=True`, the default
    since torch 2.6) read an OGB processed file, which pickles a PyG
    :class:`~torch_geometric.data.Data`: the PyG classes it holds are
    allow-listed only inside this block; :func:`torch.load` itself and the
    global allow-list are left as they were."""
    from torch_geometric.data import Data
    from torch_geometric.data.data import DataEdgeAttr, DataTensorAttr
    from torch_geometric.data.storage import GlobalStorage
    # torch's safe_globals() removes its entries on exit even when they were
    # allow-listed before (PyG allow-lists Data itself): add only the
    # missing ones, so exactly those are removed again.
    present = set(torch.serialization.get_safe_globals())
    missing = [cls for cls in (Data, DataEdgeAttr, DataTensorAttr,
                               GlobalStorage) if cls not in present]
    with torch.serialization.safe_globals(missing):
        yield


def _shortest_paths(max_nodes: int):
    from ...transforms import AddShortestPaths
    return AddShortestPaths(max_nodes=max_nodes)


def load_splits(name: str, root: PathLike, max_nodes: int = 512,
                raw_source: Optional[PathLike] = None,
                limit_train: Optional[int] = None,
                limit_val: Optional[int] = None,
                limit_test: Optional[int] = None) -> GraphSplits:
    r"""Loads (preprocessing on first use) the three splits of :obj:`name`.

    Args:
        name (str): One of :data:`DATASET_NAMES`.
        root (str or Path): Writable data root.
        max_nodes (int, optional): Passed to :class:`AddShortestPaths`.
        raw_source (str or Path, optional): Folder the raw files are copied
            from when the root lacks them (see :func:`prepare_raw`).
        limit_train, limit_val, limit_test (int, optional): Keep only the
            first N graphs of a split.
    """
    info = dataset_info(name)
    target = prepare_raw(name, root, raw_source)
    try:
        splits = _load_split_datasets(name, target, max_nodes)
    except URLError as error:  # PyG and ogb download with urllib
        example = ('../shared/data/ogbg_molhiv' if name == 'molhiv' else
                   '../shared/data/ZINC-proxy')
        raise DownloadError(
            f"{info.title} is not under {target} and downloading it failed "
            f"({error.reason}); without internet, set data.raw_source to a "
            f"folder holding its raw files (e.g. {example})") from None
    return GraphSplits(*limit_splits(splits, limit_train, limit_val,
                                     limit_test), info=info)


def _load_split_datasets(name: str, target: Path, max_nodes: int) -> list:
    r"""The train, val and test datasets of :obj:`name` in :obj:`target`
    (downloaded there first when its raw files are missing)."""
    pre_transform = _shortest_paths(max_nodes)
    if name == 'molhiv':
        from ..processed_cache import FingerprintedOGB
        with ogb_safe_load():
            dataset = FingerprintedOGB('ogbg-molhiv', root=str(target.parent),
                                       pre_transform=pre_transform)
        index = dataset.get_idx_split()
        splits = [dataset[index[s]] for s in ('train', 'valid', 'test')]
    else:
        from ..processed_cache import FingerprintedZINC
        try:
            splits = [
                FingerprintedZINC(str(target), subset=name == 'zinc_subset',
                                  split=s, pre_transform=pre_transform)
                for s in ('train', 'val', 'test')
            ]
        except IndexError as error:  # PyG's ZINC.process: mols[idx]
            raise RawFilesMismatchError(
                f"the *.index files in {target / 'raw'} point past the end "
                f"of the graph lists in its *.pickle files ({error}), so "
                f"they come from different copies of ZINC; remove "
                f"{target / 'raw'} and set data.raw_source to one complete "
                f"copy (e.g. ../shared/data/ZINC-proxy)") from None
    return splits


def load_data_splits(data: Mapping) -> GraphSplits:
    r"""The splits named by a validated :obj:`data` configuration section:
    :func:`load_splits` for the built-in datasets,
    :func:`~graphormer_sepnorm.data.csv_splits.load_csv_splits` for
    :obj:`name: csv`."""
    if data['name'] == 'csv':
        from ..csv_splits import load_csv_splits
        return load_csv_splits(data)
    return load_splits(data['name'], data['root'], data['max_nodes'],
                       data['raw_source'], data['limit_train'],
                       data['limit_val'], data['limit_test'])
