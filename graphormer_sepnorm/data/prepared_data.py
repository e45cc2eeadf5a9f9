r"""A molecule prepared as the prediction path prepares it
(:func:`~graphormer_sepnorm.data.molecule_graphs.prepare_graph`: featurized
in canonical atom order, with its shortest paths) as a PyG
:class:`~torch_geometric.data.Data`, for the code that wants PyG graphs of
SMILES the model has never seen as a dataset: the
pretraining corpus, which featurizes while it streams, and the graph-token
report of a SMILES file."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data

__all__ = ['prepared_data']


def prepared_data(graph: Sequence[np.ndarray], **attributes: Tensor) -> Data:
    r"""The :class:`~torch_geometric.data.Data` of the arrays
    :obj:`(x, edge_index, edge_attr, spd, path_next)` of a prepared graph,
    shared with them (no copy), with :obj:`attributes` (*e.g.* :obj:`y`)
    added.

    Args:
        graph (sequence of numpy.ndarray): What :func:`~graphormer_sepnorm.
            data.molecule_graphs.prepare_graph` returns.
        **attributes (torch.Tensor): Further attributes of the graph.
    """
    x, edge_index, edge_attr, spd, path_next = graph
    return Data(x=torch.from_numpy(x), edge_index=torch.from_numpy(edge_index),
                edge_attr=torch.from_numpy(edge_attr),
                spd=torch.from_numpy(spd),
                path_next=torch.from_numpy(path_next), num_nodes=x.shape[0],
                **attributes)
