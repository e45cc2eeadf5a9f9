r"""Text files that may be gzipped, told by the name as pandas tells it: a
name ending in ``.gz``, in any case, is gzip.

Every reader of the project's text inputs (training CSVs, prediction
inputs and outputs, the baselines' SMILES splits) opens them here, so that
a file one of them reads, the others read the same way.
"""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import IO, Optional, Union

__all__ = ['is_gzipped', 'open_text', 'read_smiles_lines']


def is_gzipped(path: Union[str, Path]) -> bool:
    r"""Whether :obj:`path` names a gzip file (ends in ``.gz``, any case)."""
    return str(path).lower().endswith('.gz')


def open_text(path: Union[str, Path], encoding: str = 'utf-8-sig') -> IO[str]:
    r"""Opens :obj:`path` for reading as text, decompressing it if
    :func:`is_gzipped`, with ``newline=''`` as the :mod:`csv` module wants.

    Args:
        path (str or Path): The file.
        encoding (str, optional): Its text encoding; the default also drops
            a byte-order mark that spreadsheet programs write.
            (default: :obj:`'utf-8-sig'`)
    """
    if is_gzipped(path):
        return gzip.open(path, 'rt', encoding=encoding, newline='')
    return open(path, encoding=encoding, newline='')


def read_smiles_lines(path: Union[str, Path], limit: Optional[int] = None
                      ) -> list[str]:
    r"""The SMILES of a text file with one SMILES per line (*e.g.*
    ``zinc250k/jtvae_test.txt``; gzipped if :func:`is_gzipped`), blank
    lines skipped, the first :obj:`limit` only if given."""
    with open_text(path) as f:
        smiles = [line.strip() for line in f if line.strip()]
    return smiles[:limit] if limit is not None else smiles
