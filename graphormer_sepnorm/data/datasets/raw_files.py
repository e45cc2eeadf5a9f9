r"""Raw files: where each dataset lives under the data root, checking a
:obj:`data.raw_source` folder, and copying its raw files into the root
without ever mixing files from two sources."""
from __future__ import annotations

import filecmp
import shutil
from pathlib import Path
from typing import Optional, Sequence, Union

from ..errors import DataError

__all__ = ['dataset_dir', 'DownloadError', 'RawFilesMismatchError',
           'check_raw_source', 'check_raw_files', 'prepare_raw']

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
        layout = ('ZINC-proxy/ (raw/*.pickle, raw/*.index)' if name != 'molhiv'
                  else 'ogbg_molhiv/ (RELEASE_v1.txt, raw/, split/scaffold/)')
        raise FileNotFoundError(
            f"{folder} lacks the {what} {', '.join(missing)}; point "
            f"data.raw_source at a folder laid out like {layout}")
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
