from typing import Optional

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.data.datapipes import functional_transform
from torch_geometric.transforms import BaseTransform

from .shortest_paths import UNREACHABLE, shortest_paths

__all__ = ['AddShortestPaths', 'shortest_paths', 'UNREACHABLE']

# ``spd`` and ``path_next`` are stored as int16 to keep cached datasets small
# (MolHIV's 41k graphs hold about 33M node pairs).
_MAX_STORABLE_NODES = torch.iinfo(torch.int16).max


@functional_transform('add_shortest_paths')
class AddShortestPaths(BaseTransform):
    r"""Computes what Graphormer's spatial and multi-hop edge encodings need,
    from the `"Do Transformers Really Perform Bad for Graph Representation?"
    <https://arxiv.org/abs/2106.05234>`_ paper: the shortest-path distance
    between every ordered pair of nodes and one shortest path between them
    (functional name: :obj:`add_shortest_paths`).

    Two flat tensors of length :obj:`num_nodes ** 2` are added, in row-major
    order over node pairs :math:`(i, j)`:

    * :obj:`spd` (:obj:`torch.int16`): the number of hops from :math:`i` to
      :math:`j` (:obj:`0` on the diagonal), or :obj:`-1` if :math:`j` is not
      reachable from :math:`i`.
    * :obj:`path_next` (:obj:`torch.int16`): the node that follows :math:`i`
      on one shortest path from :math:`i` to :math:`j` (:obj:`i` itself on the
      diagonal, :obj:`-1` if unreachable). All :obj:`path_next[:, j]` come
      from the same breadth-first tree rooted at :math:`j`, so following
      :obj:`path_next` from :math:`i` walks one consistent shortest path to
      :math:`j`; the model gathers the edge features of its first
      :obj:`multi_hop_max_dist` hops on the fly.

    Storing the next hop instead of the edge features along every path keeps
    the cache at :math:`2n^2` small integers per graph whatever
    :obj:`multi_hop_max_dist` is, and the flat layout lets PyG's own
    :class:`~torch_geometric.data.Batch` concatenate graphs of different sizes
    without a custom collate function. Paths through node :obj:`0` are kept
    (the original Graphormer Cython code dropped them). The search is a
    breadth-first search per node compiled with Numba (compiled once, then
    cached on disk).

    Edges are taken as directed, as given in :obj:`edge_index`; PyG's
    molecular datasets store both directions of every bond.

    Args:
        max_nodes (int, optional): Graphs with more nodes raise a
            :class:`ValueError` that names the size and this option.
            (default: :obj:`512`)
    """
    def __init__(self, max_nodes: int = 512) -> None:
        if not 1 <= max_nodes <= _MAX_STORABLE_NODES:
            raise ValueError(f"max_nodes must be between 1 and "
                             f"{_MAX_STORABLE_NODES}, got {max_nodes}")
        self.max_nodes = max_nodes

    def forward(self, data: Data) -> Data:
        num_nodes = _checked_num_nodes(data, self.max_nodes)
        edge_index = _checked_edge_index(data, num_nodes)
        spd, path_next = shortest_paths(edge_index, num_nodes)
        data.spd = torch.from_numpy(spd).view(-1)
        data.path_next = torch.from_numpy(path_next).view(-1)
        return data

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(max_nodes={self.max_nodes})'


def _checked_num_nodes(data: Data, max_nodes: int) -> int:
    num_nodes = data.num_nodes
    if num_nodes is None:
        raise ValueError("AddShortestPaths needs 'num_nodes' or 'x' on the "
                         "graph to know its size")
    if num_nodes > max_nodes:
        raise ValueError(
            f"Graph has {num_nodes} nodes, more than max_nodes={max_nodes}. "
            f"Raise max_nodes (in AddShortestPaths and in the model) or "
            f"filter such graphs out with a pre_filter.")
    return num_nodes


def _checked_edge_index(data: Data, num_nodes: int) -> np.ndarray:
    edge_index: Optional[torch.Tensor] = data.edge_index
    if edge_index is None:
        return np.empty((2, 0), dtype=np.int64)
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must have shape [2, num_edges], got "
                         f"{list(edge_index.shape)}")
    if edge_index.dtype != torch.long:
        raise ValueError(f"edge_index must be torch.long, got "
                         f"{edge_index.dtype}; convert it with .long()")
    edge_index = edge_index.cpu().numpy()
    if edge_index.size > 0:
        low, high = int(edge_index.min()), int(edge_index.max())
        if low < 0 or high >= num_nodes:
            raise ValueError(
                f"edge_index holds node ids in [{low}, {high}] but the graph "
                f"has {num_nodes} nodes (valid ids 0..{num_nodes - 1}); fix "
                f"the edge list or num_nodes")
    return edge_index
