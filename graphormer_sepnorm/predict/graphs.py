r"""Molecules as model inputs for prediction: featurized straight into NumPy
arrays (no :class:`~torch_geometric.data.Data` per molecule) and batched
into the :class:`~torch_geometric.data.Batch` the model reads."""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np
import torch

from ..data.featurize import _zinc_graph_arrays
from ..transforms.shortest_paths import shortest_paths

__all__ = ['Graph', 'prepare_graph', 'collate']

#: A featurized molecule ready for batching: :obj:`x [n, F]`,
#: :obj:`edge_index [2, E]`, :obj:`edge_attr [E]` or :obj:`[E, F]`, and
#: :obj:`spd` and :obj:`path_next`, flat int16 :obj:`[n * n]`.
Graph = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def prepare_graph(smiles: str, featurizer: str, max_nodes: int,
                  featurize: Optional[Callable] = None) -> Graph:
    r"""Featurizes :obj:`smiles` and adds its shortest paths, with the same
    functions as :class:`~graphormer_sepnorm.transforms.AddShortestPaths`
    (so the model sees exactly the graphs it was trained on).

    Args:
        smiles (str): The molecule.
        featurizer (str): :obj:`"zinc"` (read straight into arrays) or the
            name of another featurizer.
        max_nodes (int): Largest molecule accepted.
        featurize (callable, optional): The featurizer returning a
            :class:`~torch_geometric.data.Data`, for featurizers other than
            :obj:`"zinc"`.

    Raises:
        FeaturizationError: If the molecule cannot be featurized.
    """
    if featurizer == 'zinc':
        x, edge_index, edge_attr = _zinc_graph_arrays(smiles, max_nodes)
        x = x.reshape(-1, 1)
    else:
        data = featurize(smiles, max_nodes=max_nodes)
        x = data.x.numpy()
        edge_index = data.edge_index.numpy()
        edge_attr = data.edge_attr.numpy()
    spd, path_next = shortest_paths(edge_index, x.shape[0])
    return x, edge_index, edge_attr, spd.reshape(-1), path_next.reshape(-1)


def collate(graphs: Sequence[Graph]):
    r"""Batches prepared graphs into the
    :class:`~torch_geometric.data.Batch` that
    :meth:`Batch.from_data_list` builds from the same graphs after
    :class:`~graphormer_sepnorm.transforms.AddShortestPaths` (attributes
    :obj:`x`, :obj:`edge_index`, :obj:`edge_attr`, :obj:`spd`,
    :obj:`path_next`, :obj:`batch`, :obj:`ptr`), without building
    :class:`~torch_geometric.data.Data` objects."""
    from torch_geometric.data import Batch

    sizes = np.fromiter((g[0].shape[0] for g in graphs), dtype=np.int64,
                        count=len(graphs))
    ptr = np.zeros(len(graphs) + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    edge_index = np.concatenate(
        [g[1] + offset for g, offset in zip(graphs, ptr[:-1])], axis=1)
    return Batch(
        x=torch.from_numpy(np.concatenate([g[0] for g in graphs])),
        edge_index=torch.from_numpy(edge_index),
        edge_attr=torch.from_numpy(np.concatenate([g[2] for g in graphs])),
        spd=torch.from_numpy(np.concatenate([g[3] for g in graphs])),
        path_next=torch.from_numpy(np.concatenate([g[4] for g in graphs])),
        batch=torch.from_numpy(np.repeat(np.arange(len(graphs)), sizes)),
        ptr=torch.from_numpy(ptr))
