r"""Preprocessing caches tied to the raw files they were built from.

PyG and OGB reuse a dataset's ``processed/`` folder whenever its files
exist, whatever raw files are beside it now: replace the raw files (another
copy of ZINC, another :obj:`data.raw_source`) and the old graphs would be
trained on silently. Here the processed folder is named after a fingerprint
of the raw files it is built from (``processed-<12 hex digits>``), so other
raw files get their own cache and a cache is never read for raw files it was
not built from.
"""
from __future__ import annotations

import hashlib
from functools import cache, cached_property
from pathlib import Path
from typing import Sequence, Union

from torch_geometric.datasets import ZINC

__all__ = ['raw_fingerprint', 'FingerprintedZINC', 'FingerprintedOGB']


def raw_fingerprint(paths: Sequence[Union[str, Path]]) -> str:
    r"""The first 12 hex digits of a SHA-256 over the names, sizes and
    contents of :obj:`paths`, in the order given."""
    digest = hashlib.sha256()
    for path in map(Path, paths):
        digest.update(f'{path.name}\0{path.stat().st_size}\0'.encode())
        with open(path, 'rb') as f:
            for chunk in iter(lambda: f.read(1 << 20), b''):
                digest.update(chunk)
    return digest.hexdigest()[:12]


class _FingerprintedProcessedDir:
    r"""Appends ``-<fingerprint of the raw files>`` to the dataset's
    processed folder. PyG asks for the folder only after any download, so
    the raw files exist by then."""
    @property
    def fingerprint_files(self) -> list[str]:
        return list(self.raw_paths)

    @cached_property
    def raw_fingerprint(self) -> str:
        return raw_fingerprint(self.fingerprint_files)

    @property
    def processed_dir(self) -> str:
        return f'{super().processed_dir}-{self.raw_fingerprint}'


class FingerprintedZINC(_FingerprintedProcessedDir, ZINC):
    r""":class:`torch_geometric.datasets.ZINC` with its processed folder
    (``<root>/subset|full/processed-<fingerprint>``) named after its six raw
    files; same arguments."""


@cache
def _fingerprinted_ogb() -> type:
    from ogb.graphproppred import PygGraphPropPredDataset

    class FingerprintedOGB(_FingerprintedProcessedDir,
                           PygGraphPropPredDataset):
        r""":class:`ogb.graphproppred.PygGraphPropPredDataset` with its
        processed folder (``<root>/<name>/processed-<fingerprint>``) named
        after every raw file its processing reads (OGB lists only the
        features as raw files); same arguments."""
        @property
        def fingerprint_files(self) -> list[str]:
            extra = ['graph-label.csv.gz', 'num-node-list.csv.gz',
                     'num-edge-list.csv.gz']
            return list(self.raw_paths) + [
                str(Path(self.raw_dir) / name) for name in extra]

    FingerprintedOGB.__module__ = __name__
    return FingerprintedOGB


def __getattr__(name: str):  # ogb takes over a second to import
    if name == 'FingerprintedOGB':
        return _fingerprinted_ogb()
    raise AttributeError(name)
