r"""The training datasets: ZINC (full and 12k subset) through
:class:`torch_geometric.datasets.ZINC` and OGB :obj:`ogbg-molhiv` through
:class:`ogb.graphproppred.PygGraphPropPredDataset`, both preprocessed once by
:class:`~graphormer_sepnorm.transforms.AddShortestPaths` as a PyG
:obj:`pre_transform` (cached on disk, so later runs start in seconds).

Offline use: :func:`prepare_raw` copies the raw files from a read-only
folder (:obj:`data.raw_source`, *e.g.* ``../shared/data/ZINC-proxy`` or
``../shared/data/ogbg_molhiv``) into the writable root when they are missing
there, so neither PyG nor OGB tries to download. Raw files already in the
root must equal those of :obj:`data.raw_source` (:func:`check_raw_files`),
and each preprocessing cache is named after the raw files it was built from
(:mod:`~graphormer_sepnorm.data.processed_cache`), so raw files from two
sources are never mixed and a cache is never reused for other raw files.

ogb 1.3.6 loads its processed file with a bare :func:`torch.load`, which
fails under torch >= 2.6 (:obj:`weights_only=True` by default). Instead of
patching :func:`torch.load`, :func:`ogb_safe_load` allow-lists the four PyG
classes the file holds, only while the dataset is being constructed.
"""
from __future__ import annotations

import contextlib
import filecmp
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Optional, Sequence, Union
from urllib.error import URLError

import torch
from torch import Tensor

from .errors import DataError

__all__ = [
    'DATASET_NAMES', 'DatasetInfo', 'dataset_info', 'data_info',
    'dataset_dir', 'DownloadError', 'RawFilesMismatchError',
    'check_raw_source', 'check_raw_files', 'prepare_raw', 'ogb_safe_load', 'GraphSplits',
    'load_splits', 'load_data_splits', 'limit_splits', 'graph_targets',
    'target_statistics'
]

#: Dataset names accepted by :func:`load_splits` (config key ``data.name``;
#: :obj:`"csv"`, your own molecules, is loaded by :func:`load_data_splits`).
DATASET_NAMES = ('zinc', 'zinc_subset', 'molhiv')

PathLike = Union[str, Path]

ZINC_RAW_FILES = ('train.pickle', 'val.pickle', 'test.pickle', 'train.index',
                  'val.index', 'test.index')
MOLHIV_REQUIRED_FILES = (
    'RELEASE_v1.txt',
    'raw/edge.csv.gz',
    'raw/node-feat.csv.gz',
    'raw/edge-feat.csv.gz',
    'raw/graph-label.csv.gz',
    'raw/num-node-list.csv.gz',
    'raw/num-edge-list.csv.gz',
    'split/scaffold/train.csv.gz',
    'split/scaffold/valid.csv.gz',
    'split/scaffold/test.csv.gz',
)
MOLHIV_OPTIONAL_FILES = ('mapping/mol.csv.gz', 'mapping/README.md')


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
    from .featurize import featurizer_vocab_sizes
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
        from .csv_config import csv_info
        return csv_info(data)
    return dataset_info(data['name'])


def dataset_dir(name: str, root: PathLike) -> Path:
    r"""Where the dataset lives under :obj:`root`: ``<root>/ZINC`` (PyG's
    raw/ and subset|full/processed/) or ``<root>/ogbg_molhiv`` (OGB's
    layout)."""
    root = Path(root)
    return root / ('ogbg_molhiv' if name == 'molhiv' else 'ZINC')


def _source_layout(name: str, source: Path) -> tuple[Path, Sequence[str]]:
    r"""The folder to copy from and the files it must hold. Accepts the
    dataset folder itself or a folder holding it."""
    if name == 'molhiv':
        if not (source / 'RELEASE_v1.txt').exists() and (
                source / 'ogbg_molhiv').is_dir():
            source = source / 'ogbg_molhiv'
        return source, MOLHIV_REQUIRED_FILES
    for candidate in (source / 'raw', source, source / 'ZINC' / 'raw'):
        if (candidate / ZINC_RAW_FILES[0]).exists():
            return candidate, ZINC_RAW_FILES
    return source / 'raw', ZINC_RAW_FILES


def check_raw_source(name: str, source: PathLike) -> Path:
    r"""Checks that :obj:`source` holds the raw files of :obj:`name` and
    returns the folder to copy from; raises :class:`FileNotFoundError`
    naming the missing path otherwise."""
    source = Path(source)
    if not source.is_dir():
        raise FileNotFoundError(
            f"raw data folder {source} does not exist; point data.raw_source "
            f"at a folder with the raw files (e.g. ../shared/data/ZINC-proxy "
            f"for ZINC, ../shared/data/ogbg_molhiv for MolHIV) or set it to "
            f"null to download")
    folder, files = _source_layout(name, source)
    missing = [f for f in files if not (folder / f).is_file()]
    if missing:
        what = ('PyG ZINC raw files' if name != 'molhiv' else
                "OGB ogbg_molhiv files")
        raise FileNotFoundError(
            f"{folder} lacks the {what} {', '.join(missing)}; point "
            f"data.raw_source at a folder laid out like "
            f"{'ZINC-proxy/ (raw/*.pickle, raw/*.index)' if name != 'molhiv' else 'ogbg_molhiv/ (RELEASE_v1.txt, raw/, split/scaffold/)'}")
    return folder


class DownloadError(DataError):
    r"""The dataset is not under the data root and could not be downloaded
    (e.g. no internet); the message says to set :obj:`data.raw_source`."""


class RawFilesMismatchError(ValueError):
    r"""The raw files under the data root do not belong together: they
    differ from :obj:`data.raw_source`'s, or index graphs the pickles lack.
    """


def _raw_file_pairs(name: str, target: Path,
                    raw_source: PathLike) -> list[tuple[Path, Path]]:
    r"""(file in :obj:`raw_source`, its place under :obj:`target`) for
    every raw file copied from :obj:`raw_source`."""
    folder = check_raw_source(name, raw_source)
    if name == 'molhiv':
        files = list(MOLHIV_REQUIRED_FILES) + [
            f for f in MOLHIV_OPTIONAL_FILES if (folder / f).is_file()
        ]
        return [(folder / f, target / f) for f in files]
    return [(folder / f, target / 'raw' / f) for f in ZINC_RAW_FILES]


def check_raw_files(name: str, root: PathLike,
                    raw_source: Optional[PathLike] = None) -> None:
    r"""Checks that every raw file already under :obj:`root` equals its
    counterpart in :obj:`raw_source` (byte for byte), so that files from two
    sources are never mixed (for example the real ZINC index files of a copy
    of ``../shared/data`` beside stand-in pickles); raises
    :class:`RawFilesMismatchError` naming the folder to remove otherwise.
    Nothing to check without :obj:`raw_source`."""
    if raw_source is None:
        return
    target = dataset_dir(name, root)
    differing = [
        str(dst.relative_to(target))
        for src, dst in _raw_file_pairs(name, target, raw_source)
        if dst.exists() and not filecmp.cmp(src, dst, shallow=False)
    ]
    if differing:
        folder = target if name == 'molhiv' else target / 'raw'
        raise RawFilesMismatchError(
            f"{target} holds raw files that differ from those in "
            f"data.raw_source {raw_source} ({', '.join(differing)}); remove "
            f"{folder} or choose another data.root to use this "
            f"data.raw_source, or set data.raw_source to the folder these "
            f"files came from (null to use them as they are)")


def prepare_raw(name: str, root: PathLike,
                raw_source: Optional[PathLike] = None) -> Path:
    r"""Creates the dataset folder under :obj:`root` and, with
    :obj:`raw_source`, copies every raw file it lacks from there (files
    already present must equal the source's, see :func:`check_raw_files`).
    Without :obj:`raw_source`, MolHIV's folder is left to ogb, which
    creates it when it downloads. Returns the dataset folder."""
    target = dataset_dir(name, root)
    if raw_source is not None:
        check_raw_files(name, root, raw_source)
        for src, dst in _raw_file_pairs(name, target, raw_source):
            if not dst.exists():
                dst.parent.mkdir(parents=True, exist_ok=True)
                tmp = dst.with_name(dst.name + '.part')
                shutil.copyfile(src, tmp)  # contents only, not read-only mode
                tmp.replace(dst)
    elif name == 'molhiv':
        if target.is_dir() and not (target / 'RELEASE_v1.txt').exists():
            # ogb would stop and ask on stdin whether to delete the folder.
            raise FileNotFoundError(
                f"{target} exists but has no RELEASE_v1.txt, so ogb would "
                f"ask whether to delete it; remove the folder or set "
                f"data.raw_source")
        # ogb downloads into the parent and creates the folder itself (an
        # empty one would make it ask the question above).
        target.parent.mkdir(parents=True, exist_ok=True)
        return target
    target.mkdir(parents=True, exist_ok=True)
    return target


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


@dataclass
class GraphSplits:
    r"""The train, validation and test splits of a dataset (PyG in-memory
    datasets, possibly index views) and its :class:`DatasetInfo`."""
    train: object
    val: object
    test: object
    info: DatasetInfo

    def __getitem__(self, split: str):
        return {'train': self.train, 'val': self.val, 'test': self.test}[split]


def _shortest_paths(max_nodes: int):
    from ..transforms import AddShortestPaths
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
        from .processed_cache import FingerprintedOGB
        with ogb_safe_load():
            dataset = FingerprintedOGB('ogbg-molhiv', root=str(target.parent),
                                       pre_transform=pre_transform)
        index = dataset.get_idx_split()
        splits = [dataset[index[s]] for s in ('train', 'valid', 'test')]
    else:
        from .processed_cache import FingerprintedZINC
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
        from .csv_splits import load_csv_splits
        return load_csv_splits(data)
    return load_splits(data['name'], data['root'], data['max_nodes'],
                       data['raw_source'], data['limit_train'],
                       data['limit_val'], data['limit_test'])


def limit_splits(splits: Sequence, *limits: Optional[int]) -> list:
    r"""Each split cut to its first :obj:`limit` graphs (:obj:`None`: all)."""
    return [split[:limit] if limit is not None and limit < len(split)
            else split for split, limit in zip(splits, limits)]


def graph_targets(dataset) -> Tensor:
    r"""The targets :obj:`y` of every graph of an in-memory dataset (or an
    index view of one), stacked as :obj:`[num_graphs, ...]`, read from the
    collated storage without building each graph."""
    data = dataset._data
    slices = dataset.slices['y']
    num_total = slices.numel() - 1
    sizes = slices[1:] - slices[:-1]
    indices = dataset.indices()
    if isinstance(indices, range):
        indices = torch.arange(indices.start, indices.stop, indices.step)
    indices = torch.as_tensor(indices, dtype=torch.long)
    if bool((sizes == 1).all()):
        return data.y.view(num_total, *data.y.shape[1:])[indices]
    return torch.stack([dataset[int(i)].y for i in range(len(dataset))])


def target_statistics(dataset) -> tuple[list[float], list[float]]:
    r"""Mean and standard deviation of each target of :obj:`dataset` (the
    training split) over its labeled graphs, as used to standardize
    regression targets (a target with fewer than two distinct values gets
    standard deviation 1; one without labels mean 0)."""
    y = graph_targets(dataset).double()
    y = y.view(y.size(0), -1)
    means, stds = [], []
    for column in y.unbind(1):
        column = column[torch.isfinite(column)]
        means.append(float(column.mean()) if column.numel() else 0.0)
        std = float(column.std()) if column.numel() > 1 else 0.0
        stds.append(std if std > 0 else 1.0)
    return means, stds


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
            [positives, rest[:max(size - len(positives), 0)]]).astype(np.int64))
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
    shutil.copyfile(folder / 'RELEASE_v1.txt', out / 'RELEASE_v1.txt')
    return out
