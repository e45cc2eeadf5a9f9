r"""SMILES as model inputs, the path that prediction, the pretraining corpus
and the graph-token report share: featurized straight into NumPy arrays
(:func:`prepare_graph`) and batched into the attributes the model reads
(:func:`collate`), without :class:`~torch_geometric.data.Data` objects and
without importing PyG (which takes longer than all the rest of a
one-molecule prediction). :func:`~graphormer_sepnorm.data.prepared_data.
prepared_data` makes a :class:`~torch_geometric.data.Data` of the arrays
where PyG is wanted."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Optional, Sequence, Union

import numpy as np
import torch

from .featurize.ogb import ogb_graph_arrays
from .featurize.zinc import zinc_graph_arrays
from ..transforms.batch_layout import BatchLayout, add_batch_layout
from ..transforms.shortest_paths import shortest_paths

__all__ = ['Graph', 'GraphBatch', 'prepare_graph', 'collate']

#: A featurized molecule ready for batching: :obj:`x [n, F]`,
#: :obj:`edge_index [2, E]`, :obj:`edge_attr [E]` or :obj:`[E, F]`, and
#: :obj:`spd` and :obj:`path_next`, flat int16 :obj:`[n * n]`; for a model
#: with molecule features, a sixth array: the molecule's feature vector,
#: float32 :obj:`[graph_feature_channels]`
#: (:class:`~graphormer_sepnorm.data.molecule_features.MoleculeFeaturizer`).
Graph = tuple[np.ndarray, ...]


def prepare_graph(smiles: str, featurizer: str, max_nodes: int) -> Graph:
    r"""Featurizes :obj:`smiles` and adds its shortest paths, with the same
    functions as :func:`~graphormer_sepnorm.data.featurize.get_featurizer`
    and :class:`~graphormer_sepnorm.transforms.AddShortestPaths` (so the
    model sees exactly the graphs it was trained on).

    Args:
        smiles (str): The molecule.
        featurizer (str): :obj:`"zinc"` or :obj:`"ogb"`.
        max_nodes (int): Largest molecule accepted.

    Raises:
        FeaturizationError: If the molecule cannot be featurized.
    """
    if featurizer == 'zinc':
        x, edge_index, edge_attr = zinc_graph_arrays(smiles, max_nodes)
        x = x.reshape(-1, 1)
    else:
        x, edge_index, edge_attr = ogb_graph_arrays(smiles, max_nodes)
    spd, path_next = shortest_paths(edge_index, x.shape[0])
    return x, edge_index, edge_attr, spd.reshape(-1), path_next.reshape(-1)


@dataclass
class GraphBatch:
    r"""A batch of graphs with the attributes, shapes and dtypes of the
    :class:`~torch_geometric.data.Batch` that :meth:`Batch.from_data_list`
    builds from the same graphs after
    :class:`~graphormer_sepnorm.transforms.AddShortestPaths` (all that
    :class:`~graphormer_sepnorm.GraphormerSepNorm` reads), with the
    :class:`~graphormer_sepnorm.transforms.BatchLayout` the model reads
    and, for a model with molecule features, :obj:`graph_features`
    :obj:`[num_graphs, channels]`."""
    x: torch.Tensor
    edge_index: torch.Tensor
    edge_attr: torch.Tensor
    spd: torch.Tensor
    path_next: torch.Tensor
    batch: torch.Tensor
    ptr: torch.Tensor
    layout: Optional[BatchLayout] = None
    graph_features: Optional[torch.Tensor] = None

    @property
    def num_graphs(self) -> int:
        r"""The number of graphs."""
        return self.ptr.numel() - 1

    @property
    def num_nodes(self) -> int:
        r"""The number of nodes of all graphs."""
        return self.x.size(0)

    def to(self, device: Union[str, torch.device]) -> 'GraphBatch':
        r"""The batch on :obj:`device`."""
        return GraphBatch(**{f.name: (None if getattr(self, f.name) is None
                                      else getattr(self, f.name).to(device))
                             for f in fields(self)})


def collate(graphs: Sequence[Graph],
            layout: Optional[dict[str, int]] = None) -> GraphBatch:
    r"""Batches prepared graphs (see :class:`GraphBatch`), with the layout
    that :func:`~graphormer_sepnorm.transforms.add_batch_layout` computes
    with the options :obj:`layout` (e.g. a model's
    :meth:`~graphormer_sepnorm.GraphormerSepNorm.layout_options`; none
    with :obj:`None`)."""
    sizes = np.fromiter((g[0].shape[0] for g in graphs), dtype=np.int64,
                        count=len(graphs))
    ptr = np.zeros(len(graphs) + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    edge_index = np.concatenate(
        [g[1] + offset for g, offset in zip(graphs, ptr[:-1])], axis=1)
    batch = GraphBatch(
        x=torch.from_numpy(np.concatenate([g[0] for g in graphs])),
        edge_index=torch.from_numpy(edge_index),
        edge_attr=torch.from_numpy(np.concatenate([g[2] for g in graphs])),
        spd=torch.from_numpy(np.concatenate([g[3] for g in graphs])),
        path_next=torch.from_numpy(np.concatenate([g[4] for g in graphs])),
        batch=torch.from_numpy(np.repeat(np.arange(len(graphs)), sizes)),
        ptr=torch.from_numpy(ptr),
        graph_features=(torch.from_numpy(np.stack([g[5] for g in graphs]))
                        if len(graphs[0]) > 5 else None))
    return batch if layout is None else add_batch_layout(batch, **layout)
