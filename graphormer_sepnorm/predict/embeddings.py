r"""Embedding files: the graph-token embedding of each input molecule (see
:meth:`Predictor.embed <graphormer_sepnorm.predict.Predictor.embed>`), one
row per input molecule in input order, written chunk by chunk.

* ``.npy``: float32 :obj:`[molecules, width]` (:func:`numpy.load` reads it,
  memory-mapped with :obj:`mmap_mode="r"`);
* ``.csv`` or ``.csv.gz``: a :obj:`smiles` column, then one column per
  dimension (:attr:`Predictor.embedding_columns
  <graphormer_sepnorm.predict.Predictor.embedding_columns>`), values as the
  shortest decimals that read back as the same float32.

A molecule that cannot be predicted gets a row of NaN (``nan`` in CSV), so
that row :obj:`i` is always input molecule :obj:`i`, and the data row
:obj:`i` of the prediction file of the same run.

The file is written under a hidden name beside it and renamed once whole: a
run that stops early leaves no embedding file rather than a short one. A
process killed outright (SIGKILL) cannot remove its hidden file: the next
run writing the same file removes it when it checks the path, at its start.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Optional, Sequence, Union

import numpy as np

from .prediction import PredictionError
from .writers import CsvWriter, check_writable

__all__ = ['EmbeddingWriter', 'check_embeddings_path', 'EMBEDDING_ENDINGS']

PathLike = Union[str, Path]

#: The endings of embedding files (:obj:`.npy` or CSV).
EMBEDDING_ENDINGS = ('.npy', '.csv', '.csv.gz')
_DTYPE = np.dtype('<f4')


def check_embeddings_path(path: PathLike) -> None:
    r"""Checks, before any work, that :obj:`path` can be written as an
    embedding file: a :obj:`.npy`, :obj:`.csv` or :obj:`.csv.gz` name in a
    writable folder (created if needed); then removes the hidden file a
    killed run writing :obj:`path` left (see the module).

    Raises:
        PredictionError: Naming the problem.
    """
    path = Path(path)
    if not str(path).lower().endswith(EMBEDDING_ENDINGS):
        raise PredictionError(
            f"Embeddings file {path}: name it .npy (a float32 array) or .csv "
            f"(or .csv.gz)")
    check_writable(path, 'embeddings file', 'embeddings.npy')
    _partial_path(path).unlink(missing_ok=True)


def _partial_path(path: Path) -> Path:
    # Hidden, with the same ending (CsvWriter tells gzip by the name).
    return path.with_name('.' + path.name)


class EmbeddingWriter:
    r"""Appends the embeddings of consecutive molecules to an embedding file
    (see the module); :meth:`finish` puts the file in place.

    Args:
        path (str or Path): The file, :obj:`.npy`, :obj:`.csv` or
            :obj:`.csv.gz`.
        columns (list[str]): The name of each dimension (the CSV header
            after :obj:`smiles`; for :obj:`.npy`, their number is the
            width).

    Attributes:
        rows (int): Rows written so far.
    """
    def __init__(self, path: PathLike, columns: Sequence[str]) -> None:
        check_embeddings_path(path)
        self.path = Path(path)
        self.width = len(columns)
        self.rows = 0
        self.npy = self.path.name.lower().endswith('.npy')
        self._partial = _partial_path(self.path)
        self._csv: Optional[CsvWriter] = None
        self._file: Optional[IO[bytes]] = None
        if self.npy:
            try:
                self._file = open(self._partial, 'wb')
                self._header_length = self._write_header()
            except OSError as error:
                self.close()
                raise PredictionError(f"Cannot write {self.path} ({error})"
                                      ) from None
        else:
            self._csv = CsvWriter(self._partial, ['smiles', *columns])

    def write(self, smiles: Sequence[str], embeddings: np.ndarray) -> None:
        r"""Appends one row per molecule: :obj:`embeddings` :obj:`[len(smiles),
        width]` (NaN rows for molecules that could not be predicted)."""
        embeddings = np.asarray(embeddings, dtype=_DTYPE)
        if embeddings.shape != (len(smiles), self.width):
            raise ValueError(f"embeddings of shape {embeddings.shape} for "
                             f"{len(smiles)} molecules of width {self.width}")
        if self._csv is not None:
            # NumPy writes float32 as its shortest round-trip decimal.
            text = embeddings.astype(str)
            self._csv.write_rows([[s, *row] for s, row in
                                  zip(smiles, text.tolist())])
        else:
            try:
                self._file.write(embeddings.tobytes())
                self._file.flush()
            except OSError as error:
                raise PredictionError(f"Cannot write {self.path} ({error})"
                                      ) from None
        self.rows += len(smiles)

    def finish(self) -> None:
        r"""Completes the file and renames it to :obj:`path`."""
        try:
            if self._file is not None:
                # NumPy pads the header so that the shape can grow in place
                # (numpy.lib.format.GROWTH_AXIS_MAX_DIGITS): the header
                # for the final row count has the length of the first one.
                self._file.seek(0)
                if self._write_header() != self._header_length:
                    raise PredictionError(
                        f"Cannot write {self.path}: {self.rows} rows do not "
                        f"fit its .npy header; write .csv instead")
                self._file.close()
            if self._csv is not None:
                self._csv.close()
            os.replace(self._partial, self.path)
        except OSError as error:
            raise PredictionError(f"Cannot write {self.path} ({error})"
                                  ) from None
        finally:
            self.close()

    def close(self) -> None:
        r"""Closes the file; unless :meth:`finish` put it in place, deletes
        what was written."""
        if self._file is not None:
            self._file.close()
        if self._csv is not None:
            self._csv.close()
        self._file = self._csv = None
        self._partial.unlink(missing_ok=True)

    def _write_header(self) -> int:
        r"""Writes the .npy header for the rows so far; returns its
        length."""
        np.lib.format.write_array_header_1_0(self._file, {
            'descr': np.lib.format.dtype_to_descr(_DTYPE),
            'fortran_order': False, 'shape': (self.rows, self.width)})
        return self._file.tell()
