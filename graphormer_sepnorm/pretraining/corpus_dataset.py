r"""The pretraining corpus as a dataset that featurizes on the fly: SMILES in
memory (one byte string, no Python object per molecule), graphs made when a
batch asks for them, so 1.6M molecules never exist as graphs at once."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Optional, Union

import numpy as np
import torch
from rdkit import Chem
from torch_geometric.data import Data

from ..data.featurize import FeaturizationError
from ..data.prepared_data import prepared_data
from ..predict.graphs import prepare_graph
from .descriptors import DescriptorScaler, descriptor_values

__all__ = ['SmilesCorpus']


class SmilesCorpus(torch.utils.data.Dataset):
    r"""Molecules of a SMILES file (one per line) as graphs with their
    descriptor targets.

    Item :obj:`i` is the graph of line :obj:`i`, made by the prediction
    path's featurization (:func:`~graphormer_sepnorm.predict.graphs.
    prepare_graph`: canonical atom order, shortest paths), with :obj:`y`
    :obj:`[1, num_descriptors]`, its standardized RDKit descriptors
    (:mod:`~graphormer_sepnorm.pretraining.descriptors`), and
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
            (set it before reading items; :obj:`None` while it is being
            fitted on :meth:`descriptor_sample`).
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
        text = self.path.read_bytes()
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

    def smiles(self, index: int) -> str:
        r"""The SMILES of line :obj:`index`."""
        return self._text[self._starts[index]:self._ends[index]].decode()

    def __getitem__(self, index: int) -> Data:
        for offset in range(len(self)):
            position = (int(index) + offset) % len(self)
            try:
                graph = self._graph(self.smiles(position))
                graph.corpus_line = torch.tensor([position])
                return graph
            except FeaturizationError as error:
                warnings.warn(f"{self.path} line {position + 1}: {error}; "
                              f"the next molecule is used instead",
                              RuntimeWarning, stacklevel=2)
        raise FeaturizationError(f"no molecule of {self.path} can be "
                                 f"featurized")

    def _graph(self, smiles: str) -> Data:
        graph = prepare_graph(smiles, self.featurizer, self.max_nodes)
        targets = self.scaler.transform(
            descriptor_values(Chem.MolFromSmiles(smiles)))
        return prepared_data(graph, y=torch.from_numpy(targets).view(1, -1))

    def descriptor_sample(self, count: int) -> np.ndarray:
        r"""Raw descriptors of the first :obj:`count` molecules that parse
        (for fitting a :class:`DescriptorScaler`)."""
        rows = []
        for index in range(min(count, len(self))):
            mol = Chem.MolFromSmiles(self.smiles(index))
            if mol is not None:
                rows.append(descriptor_values(mol))
        return np.stack(rows)
