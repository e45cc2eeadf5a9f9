r"""The pretraining corpus as a dataset that featurizes on the fly: SMILES in
memory (one byte string, no Python object per molecule), graphs made when a
batch asks for them, so 1.6M molecules never exist as graphs at once."""
from __future__ import annotations

import hashlib
import warnings
from pathlib import Path
from typing import Optional, Union

import numpy as np
import torch
from rdkit import Chem
from torch_geometric.data import Data

from ..data.errors import DataError
from ..data.featurize import FeaturizationError
from ..data.prepared_data import prepared_data
from ..data.molecule_graphs import prepare_graph
from .descriptors import DescriptorScaler, descriptor_values

__all__ = ['SmilesCorpus', 'read_smiles_file']

#: The leading bytes of compressed files, which a SMILES file never starts
#: with.
_COMPRESSED = {b'\x1f\x8b': 'gzip', b'PK\x03\x04': 'zip', b'BZh': 'bzip2',
               b'\xfd7zXZ\x00': 'xz', b'(\xb5/\xfd': 'zstd'}
_FIX = ('rebuild the corpus with python scripts/make_pretraining_corpus.py, '
        'or set pretrain.corpus to a folder of plain-text SMILES files')


def read_smiles_file(path: Union[str, Path]) -> bytes:
    r"""The bytes of the SMILES file :obj:`path`, checked to be UTF-8 text
    with at least one non-empty line.

    Raises:
        DataError: :obj:`path` is a folder, compressed, not UTF-8 (the
            message names the line) or holds no line.
    """
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path} is a folder, not a SMILES file; {_FIX}")
    text = path.read_bytes()
    for magic, kind in _COMPRESSED.items():
        if text.startswith(magic):
            raise DataError(f"{path} holds {kind}-compressed bytes, not "
                            f"SMILES text; decompress it, or {_FIX}")
    try:
        text.decode('utf-8')
    except UnicodeDecodeError as error:
        line = text.count(b'\n', 0, error.start) + 1
        raise DataError(f"{path} line {line} is not UTF-8 text (byte "
                        f"0x{text[error.start]:02x}); {_FIX}") from None
    if not text.strip():
        raise DataError(f"{path} holds no molecule (it is empty); {_FIX}")
    return text


class SmilesCorpus(torch.utils.data.Dataset):
    r"""Molecules of a SMILES file (one per line) as graphs with their
    descriptor targets.

    Item :obj:`i` is the graph of line :obj:`i`, made by the prediction
    path's featurization (:func:`~graphormer_sepnorm.data.molecule_graphs.
    prepare_graph`: canonical atom order, shortest paths), with :obj:`y`
    :obj:`[1, num_descriptors]`, its standardized RDKit descriptors
    (:mod:`~graphormer_sepnorm.pretraining.descriptors`; only with a
    :obj:`scaler`), and
    :obj:`corpus_line` :obj:`[1]`, its line (which seeds its atom mask;
    not named ``*_index``, which PyG's batching would offset by the node
    count). A molecule that
    cannot be featurized (none in a prepared corpus) is replaced by the next
    one, with a warning, so that a batch keeps its size.

    Args:
        path (str or Path): The SMILES file (canonical SMILES, one per line,
            no header), as :mod:`~graphormer_sepnorm.pretraining.corpus`
            writes them.
        featurizer (str): :obj:`"ogb"` or :obj:`"zinc"`.
        scaler (DescriptorScaler, optional): Standardizes the descriptors
            into :obj:`y`; :obj:`None`: graphs without descriptors (while the
            scaler is being fitted on :meth:`descriptor_sample`, or when
            their loss weight is 0, which saves RDKit's descriptor time).
        max_nodes (int, optional): Largest molecule. (default: :obj:`512`)
        limit (int, optional): Use the first :obj:`limit` molecules only.
            (default: :obj:`None`)
    """
    def __init__(self, path: Union[str, Path], featurizer: str,
                 scaler: Optional[DescriptorScaler], max_nodes: int = 512,
                 limit: Union[int, None] = None) -> None:
        self.path = Path(path)
        # One bytes buffer and the offsets of its lines: forked DataLoader
        # workers share it (millions of str objects would be copied as
        # their reference counts change).
        text = read_smiles_file(self.path)
        ends = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == 10)
        if len(text) and text[-1:] != b'\n':
            ends = np.append(ends, len(text))
        starts = np.concatenate([[0], ends[:-1] + 1])
        keep = ends > starts  # no empty lines
        self._text = text
        self._starts, self._ends = starts[keep], ends[keep]
        if limit is not None:
            self._starts, self._ends = (self._starts[:limit],
                                        self._ends[:limit])
        self.featurizer = featurizer
        self.scaler = scaler
        self.max_nodes = max_nodes

    def __len__(self) -> int:
        return len(self._starts)

    def sha256(self) -> str:
        r"""The SHA-256 of the SMILES file's bytes (what a resumed run
        checks its corpus by)."""
        return hashlib.sha256(self._text).hexdigest()

    def smiles(self, index: int) -> str:
        r"""The SMILES of line :obj:`index`."""
        return self._text[self._starts[index]:self._ends[index]].decode()

    def __getitem__(self, index: int) -> Data:
        for offset in range(len(self)):
            position = (int(index) + offset) % len(self)
            try:
                return self.line_graph(position)
            except FeaturizationError as error:
                warnings.warn(self.replaced_warning(position, error),
                              stacklevel=2)
        raise self.nothing_featurizable()

    def line_graph(self, position: int) -> Data:
        r"""The graph of line :obj:`position` (0-based), with no
        replacement: what :meth:`__getitem__` returns for a line that can be
        featurized.

        Raises:
            FeaturizationError: If the line cannot be featurized.
        """
        smiles = self.smiles(position)
        graph = prepare_graph(smiles, self.featurizer, self.max_nodes)
        if self.scaler is None:
            data = prepared_data(graph)
        else:
            targets = self.scaler.transform(
                descriptor_values(Chem.MolFromSmiles(smiles)))
            data = prepared_data(graph,
                                 y=torch.from_numpy(targets).view(1, -1))
        data.corpus_line = torch.tensor([position])
        return data

    def replaced_warning(self, position: int,
                         error: Union[str, Exception]) -> RuntimeWarning:
        r"""The warning that line :obj:`position` (0-based) could not be
        featurized (:obj:`error`) and is replaced by the next molecule."""
        return RuntimeWarning(f"{self.path} line {position + 1}: {error}; "
                              f"the next molecule is used instead")

    def nothing_featurizable(self) -> FeaturizationError:
        r"""The error that no line can be featurized."""
        return FeaturizationError(f"no molecule of {self.path} can be "
                                  f"featurized")

    def _no_molecule(self, lines: int) -> DataError:
        return DataError(
            f"{self.path}: none of its first {lines} lines is a SMILES that "
            f"RDKit parses (line 1: {self.smiles(0)[:60]!r}); {_FIX}")

    def check_parsable(self) -> None:
        r"""Raises :class:`DataError` unless at least one line parses (read
        up to the first that does)."""
        from rdkit import rdBase
        with rdBase.BlockLogs():
            if any(Chem.MolFromSmiles(self.smiles(i)) is not None
                   for i in range(len(self))):
                return
        raise self._no_molecule(len(self))

    def descriptor_sample(self, count: int) -> np.ndarray:
        r"""Raw descriptors of the first :obj:`count` molecules that parse
        (for fitting a :class:`DescriptorScaler`); raises
        :class:`DataError` if none does."""
        from rdkit import rdBase
        rows = []
        with rdBase.BlockLogs():
            for index in range(min(count, len(self))):
                mol = Chem.MolFromSmiles(self.smiles(index))
                if mol is not None:
                    rows.append(descriptor_values(mol))
        if not rows:
            raise self._no_molecule(min(count, len(self)))
        return np.stack(rows)
