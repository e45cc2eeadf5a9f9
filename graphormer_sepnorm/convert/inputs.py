r"""The reference model's inputs built from our graphs (their shortest paths),
for equivalence checks: :func:`reference_inputs`."""
import math
from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from .layout import (_ATOM_SHIFT, _COLUMN_ROWS, _REFERENCE_UNREACHABLE,
                     _SINGLE_EDGE_SHIFT)


def reference_inputs(graphs: Sequence[Any], spatial_pos_max: Optional[int]
                     = None, max_hops: Optional[int] = None,
                     dtype: torch.dtype = torch.float32) -> dict[str, Tensor]:
    r"""The reference model's batched inputs built from graphs preprocessed by
    :class:`~graphormer_sepnorm.transforms.AddShortestPaths` (their
    :obj:`spd` and :obj:`path_next`, so the multi-hop edge input follows the
    same shortest paths as this package): what :obj:`preprocess_item`
    followed by :class:`GraphormerDataCollator` give, but with our paths.

    Args:
        graphs: :class:`~torch_geometric.data.Data` objects with :obj:`x`,
            :obj:`edge_index`, :obj:`edge_attr`, :obj:`spd` and
            :obj:`path_next`.
        spatial_pos_max (int, optional): As the collator's; :obj:`None` masks
            nothing. (default: :obj:`None`)
        max_hops (int, optional): Hops of :obj:`input_edges` kept (the
            reference only reads :obj:`multi_hop_max_dist`); all if
            :obj:`None`. (default: :obj:`None`)
        dtype (torch.dtype, optional): Of :obj:`attn_bias`.
    """
    batch_size = len(graphs)
    sizes = [int(g.num_nodes) for g in graphs]
    n = max(sizes)
    edge_cols = _edge_attr(graphs[0]).shape[1]
    node_cols = graphs[0].x.view(sizes[0], -1).shape[1]
    longest = max(int(g.spd.max()) if g.spd.numel() else 0 for g in graphs)
    hops = max(1, longest if max_hops is None else min(longest, max_hops))
    input_nodes = np.zeros((batch_size, n, node_cols), np.int64)
    degree = np.zeros((batch_size, n), np.int64)
    spatial_pos = np.zeros((batch_size, n, n), np.int64)
    attn_bias = np.zeros((batch_size, n + 1, n + 1), np.float64)
    attn_edge_type = np.zeros((batch_size, n, n, edge_cols), np.int64)
    input_edges = np.zeros((batch_size, n, n, hops, edge_cols), np.int64)
    for b, (graph, size) in enumerate(zip(graphs, sizes)):
        x = graph.x.view(size, -1).numpy()
        src, dst = graph.edge_index.numpy()
        column_offset = _COLUMN_ROWS * np.arange(edge_cols)
        edge_ids = _edge_attr(graph) + column_offset
        input_nodes[b, :size] = (x + _COLUMN_ROWS * np.arange(node_cols) +
                                 _ATOM_SHIFT)
        degree[b, :size] = np.bincount(src, minlength=size) + 1
        spd = graph.spd.view(size, size).numpy().astype(np.int64)
        nxt = graph.path_next.view(size, size).numpy().astype(np.int64)
        reachable = spd >= 0
        spatial = np.where(reachable, spd, _REFERENCE_UNREACHABLE) + 1
        spatial_pos[b, :size, :size] = spatial
        if spatial_pos_max is not None:
            attn_bias[b, 1:size + 1, 1:size + 1][
                spatial >= spatial_pos_max] = -math.inf
        dense = np.zeros((size, size, edge_cols), np.int64)
        dense[src, dst] = edge_ids + _SINGLE_EDGE_SHIFT
        attn_edge_type[b, :size, :size] = dense
        current = np.broadcast_to(np.arange(size)[:, None], (size, size))
        target = np.broadcast_to(np.arange(size)[None, :], (size, size))
        for hop in range(hops):
            active = reachable & (spd > hop)
            step = np.where(active, nxt[current, target], current)
            on_path = dense[current, step] + 1  # +1: v + 512c + 3.
            input_edges[b, :size, :size, hop] = np.where(
                active[..., None], on_path, 0)
            current = step
    as_tensor = torch.from_numpy
    return dict(input_nodes=as_tensor(input_nodes),
                input_edges=as_tensor(input_edges),
                attn_bias=as_tensor(attn_bias).to(dtype),
                in_degree=as_tensor(degree), out_degree=as_tensor(degree),
                spatial_pos=as_tensor(spatial_pos),
                attn_edge_type=as_tensor(attn_edge_type))


def _edge_attr(graph: Any) -> np.ndarray:
    edge_attr = getattr(graph, 'edge_attr', None)
    num_edges = graph.edge_index.size(1)
    if edge_attr is None:
        return np.zeros((num_edges, 1), np.int64)
    if edge_attr.dim() == 1:
        edge_attr = edge_attr.view(-1, 1)
    return edge_attr.numpy().astype(np.int64)
