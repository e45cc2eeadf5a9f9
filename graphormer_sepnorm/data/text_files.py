r"""Text files that may be compressed, told by the name as pandas tells it:
a name ending in ``.gz``, in any case, is gzip (which every reader and
writer here handles); ``.bz2`` and ``.xz`` are read too (:func:`open_text`).

Every reader of the project's text inputs (training CSVs, prediction
inputs and outputs, the baselines' SMILES splits) opens them here, so that
a file one of them reads, the others read the same way.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path
from typing import IO, Callable, Optional, Union

__all__ = ['is_gzipped', 'open_text', 'read_smiles_lines']


def is_gzipped(path: Union[str, Path]) -> bool:
    r"""Whether :obj:`path` names a gzip file (ends in ``.gz``, any case)."""
    return str(path).lower().endswith('.gz')


#: Openers of the compressed files :func:`open_text` reads, by the name's
#: ending (any case), as pandas infers them.
DECOMPRESSORS: dict[str, Callable[..., IO[str]]] = {
    '.gz': gzip.open, '.bz2': bz2.open, '.xz': lzma.open}


def open_text(path: Union[str, Path], encoding: str = 'utf-8-sig') -> IO[str]:
    r"""Opens :obj:`path` for reading as text, decompressing it if its name
    ends in one of :data:`DECOMPRESSORS`' endings (gzip, bzip2, xz), with
    ``newline=''`` as the :mod:`csv` module wants.

    Args:
        path (str or Path): The file.
        encoding (str, optional): Its text encoding; the default also drops
            a byte-order mark that spreadsheet programs write.
            (default: :obj:`'utf-8-sig'`)
    """
    name = str(path).lower()
    opener = next((opener for ending, opener in DECOMPRESSORS.items()
                   if name.endswith(ending)), open)
    return opener(path, 'rt', encoding=encoding, newline='')


def read_smiles_lines(path: Union[str, Path], limit: Optional[int] = None
                      ) -> list[str]:
    r"""The SMILES of a text file with one SMILES per line (*e.g.*
    ``zinc250k/jtvae_test.txt``; gzipped if :func:`is_gzipped`), blank
    lines skipped, the first :obj:`limit` only if given."""
    with open_text(path) as f:
        smiles = [line.strip() for line in f if line.strip()]
    return smiles[:limit] if limit is not None else smiles
