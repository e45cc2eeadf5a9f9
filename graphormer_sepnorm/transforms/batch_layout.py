r"""The structure of a batch that Graphormer's forward pass reads, prepared
by the data pipeline: :func:`batch_layout` computes it on the host from the
graphs alone (sizes, shortest paths, edges), and :func:`add_batch_layout`
attaches it to a batch as :obj:`batch.layout`.

Everything here depends only on the graphs, never on the weights, so it
runs where the batch is built (in the loader's worker processes), and the
model's forward only embeds, gathers, multiplies and adds: no host
synchronization, no shape that depends on a value read from the device,
and one graph for :func:`torch.compile`.
"""
from __future__ import annotations

import sys
from typing import Any, NamedTuple, Optional, Union

import numpy as np
import torch
from torch import Tensor

from .path_walk import walk_paths

__all__ = ['BatchLayout', 'batch_layout', 'add_batch_layout',
           'layout_options_for', 'token_layout']


class BatchLayout(NamedTuple):
    r"""Where every token and node pair of a batch goes in the packed
    layout of :class:`~graphormer_sepnorm.nn.PackedTokens`, and the
    multi-hop walk of every pair's shortest path.

    Tokens: graphs sorted by size (stable) into buckets of (nearly) equal
    numbers of graphs; each bucket is :obj:`[graphs, length]` tokens, the
    graph token first, padded to the bucket's longest graph; buckets are
    concatenated. With one bucket the layout is the padded batch
    :obj:`[batch_size, 1 + N]` flattened, graphs in their order. Node pairs
    follow the buckets: a :obj:`[graphs, length - 1, length - 1]` block per
    bucket, all blocks flattened.

    A :obj:`NamedTuple` of tensors, so that :meth:`Batch.to
    <torch_geometric.data.Batch.to>`, :meth:`pin_memory` and Lightning move
    it with the batch. Sizes are the shapes of the tensors (the bucket of
    :obj:`key_masks[k]` is :obj:`key_masks[k].shape`), never values to read
    back.

    Attributes:
        graph_rows (Tensor): :obj:`[batch_size]` packed row of each graph's
            graph token.
        node_rows (Tensor): :obj:`[num_nodes]` packed row of each node's
            token, nodes in batch order.
        node_graph (Tensor): :obj:`[num_nodes]` graph of each node.
        node_position (Tensor): :obj:`[num_nodes]` place of each node in its
            graph.
        key_masks (tuple of Tensor): Per bucket, :obj:`[graphs, length]`,
            true for the graph token and real nodes, false for padding.
        pair_distance (Tensor): :obj:`[num_pairs]` shortest-path distance
            of every packed node pair, :obj:`-1` where unreachable or
            padding.
        pair_edge (Tensor): :obj:`[num_pairs]` the edge :obj:`(i, j)` of
            each pair (its column of :obj:`edge_index`), :obj:`num_edges`
            where there is none.
        hop_pairs (Tensor): :obj:`[num_triples]` the pair of each (pair,
            hop, edge) triple of the walk (see
            :func:`~graphormer_sepnorm.transforms.path_walk.walk_paths`).
        hop_rows (Tensor): :obj:`[num_triples]` its row of the stacked
            per-hop edge tables, :obj:`edge + hop * (num_edges + 1)`.
        in_degree (Tensor): :obj:`[num_nodes]` in-degree of each node.
        out_degree (Tensor): :obj:`[num_nodes]` out-degree of each node.
        multi_hop_max_dist (int): Hops walked per pair (:obj:`0`: no walk,
            for the single-edge encoding).
    """
    graph_rows: Tensor
    node_rows: Tensor
    node_graph: Tensor
    node_position: Tensor
    key_masks: tuple[Tensor, ...]
    pair_distance: Tensor
    pair_edge: Tensor
    hop_pairs: Tensor
    hop_rows: Tensor
    in_degree: Tensor
    out_degree: Tensor
    multi_hop_max_dist: int

    @property
    def buckets(self) -> list[tuple[int, int]]:
        r""":obj:`(graphs, length)` of each bucket."""
        return [tuple(mask.shape) for mask in self.key_masks]

    def to(self, device: Union[str, torch.device],
           non_blocking: bool = False) -> 'BatchLayout':
        r"""The layout on :obj:`device`."""
        def move(value: Any) -> Any:
            if isinstance(value, Tensor):
                return value.to(device, non_blocking=non_blocking)
            if isinstance(value, tuple):
                return tuple(move(v) for v in value)
            return value
        return BatchLayout(*(move(value) for value in self))


def batch_layout(data: Any, num_buckets: int = 1,
                 multi_hop_max_dist: int = 20) -> BatchLayout:
    r"""Computes the :class:`BatchLayout` of a batch on the host.

    Args:
        data: A :class:`~torch_geometric.data.Batch` (or one graph) of
            graphs preprocessed by
            :class:`~graphormer_sepnorm.transforms.AddShortestPaths`, or any
            object with the same :obj:`x`, :obj:`edge_index`, :obj:`spd`,
            :obj:`path_next`, :obj:`batch` and :obj:`ptr`.
        num_buckets (int, optional): Size buckets of the packed tokens
            (:obj:`1`: the padded batch). More buckets pad less, which the
            CPU gains from; on a GPU one bucket takes fewer kernel launches.
            (default: :obj:`1`)
        multi_hop_max_dist (int, optional): Hops of each shortest path the
            multi-hop edge encoding reads; :obj:`0` for none (the
            single-edge encoding). It must equal the model's.
            (default: :obj:`20`)
    """
    spd, path_next = _shortest_path_arrays(data)
    edge_index = data.edge_index.detach().cpu().numpy().astype(np.int64)
    ptr = getattr(data, 'ptr', None)
    ptr = (np.array([0, int(data.num_nodes)], dtype=np.int64) if ptr is None
           else ptr.detach().cpu().numpy().astype(np.int64))
    sizes = np.diff(ptr)
    num_graphs = sizes.shape[0]
    num_nodes = int(ptr[-1])
    if spd.shape[0] != int((sizes * sizes).sum()):
        raise ValueError(
            "'spd'/'path_next' do not hold num_nodes**2 entries per graph; "
            "the nodes were changed after AddShortestPaths ran. Apply "
            "AddShortestPaths last (after any transform that adds or drops "
            "nodes)")

    (graph_row, node_rows, node_graph, node_position, key_masks, pair_offset,
     stride, counts, lengths) = token_layout(sizes, num_buckets)
    pair_start = np.concatenate([[0], np.cumsum(counts * (lengths - 1)**2)])

    # Every graph's flat [n, n] pairs go to its block at its stride.
    pair_graph = np.repeat(np.arange(num_graphs), sizes * sizes)
    first_pair = np.concatenate([[0], np.cumsum(sizes * sizes)])[:-1]
    local = np.arange(spd.shape[0]) - first_pair[pair_graph]
    graph_size = sizes[pair_graph]
    position = (pair_offset[pair_graph] +
                local // graph_size * stride[pair_graph] +
                local % graph_size)
    num_pairs = int(pair_start[-1])
    distance = np.full(num_pairs, -1, dtype=np.int64)
    distance[position] = spd
    next_node = np.full(num_pairs, -1, dtype=np.int64)
    next_node[position] = path_next

    num_edges = edge_index.shape[1]
    src, dst = edge_index
    edge_graph = node_graph[src]
    offset = ptr[:-1][edge_graph]
    pair_edge = np.full(num_pairs, num_edges, dtype=np.int64)
    pair_edge[pair_offset[edge_graph] + (src - offset) * stride[edge_graph] +
              dst - offset] = np.arange(num_edges)

    if multi_hop_max_dist > 0:
        hop_pairs, hop_rows = walk_paths(distance, next_node, pair_edge,
                                         counts.astype(np.int64),
                                         lengths - 1, int(multi_hop_max_dist),
                                         num_edges + 1)
    else:
        hop_pairs = hop_rows = np.zeros(0, dtype=np.int64)
    return BatchLayout(
        graph_rows=torch.from_numpy(graph_row),
        node_rows=torch.from_numpy(node_rows),
        node_graph=torch.from_numpy(node_graph),
        node_position=torch.from_numpy(node_position),
        key_masks=tuple(torch.from_numpy(mask) for mask in key_masks),
        pair_distance=torch.from_numpy(distance),
        pair_edge=torch.from_numpy(pair_edge),
        hop_pairs=torch.from_numpy(hop_pairs),
        hop_rows=torch.from_numpy(hop_rows),
        in_degree=torch.from_numpy(np.bincount(dst, minlength=num_nodes)),
        out_degree=torch.from_numpy(np.bincount(src, minlength=num_nodes)),
        multi_hop_max_dist=int(multi_hop_max_dist))


def token_layout(sizes: np.ndarray, num_buckets: int) -> tuple:
    r"""The token layout of graphs of :obj:`sizes` nodes in
    :obj:`num_buckets` size buckets (see :class:`BatchLayout`): per graph its
    graph-token row, its pair block's offset and row stride; per node its
    row, graph and place; per bucket its real-token mask, graph count and
    length, as NumPy arrays."""
    num_graphs = sizes.shape[0]
    num_buckets = max(1, min(int(num_buckets), num_graphs))
    # Buckets of graphs sorted by size (stable); within a bucket each graph
    # is padded to the bucket's largest graph.
    order = (np.arange(num_graphs) if num_buckets == 1 else
             np.argsort(sizes, kind='stable'))
    bounds = [round(i * num_graphs / num_buckets)
              for i in range(num_buckets + 1)]
    bounds = np.array([b for i, b in enumerate(bounds)
                       if i == 0 or b > bounds[i - 1]], dtype=np.int64)
    counts = np.diff(bounds)
    lengths = np.array([1 + sizes[order[start:stop]].max(initial=0)
                        for start, stop in zip(bounds[:-1], bounds[1:])],
                       dtype=np.int64)
    bucket = np.repeat(np.arange(len(counts)), counts)
    place = np.arange(num_graphs) - np.repeat(bounds[:-1], counts)
    token_start = np.concatenate([[0], np.cumsum(counts * lengths)])
    pair_start = np.concatenate([[0], np.cumsum(counts * (lengths - 1)**2)])
    graph_row = np.empty(num_graphs, dtype=np.int64)
    pair_offset = np.empty(num_graphs, dtype=np.int64)
    stride = np.empty(num_graphs, dtype=np.int64)
    graph_row[order] = token_start[bucket] + place * lengths[bucket]
    pair_offset[order] = (pair_start[bucket] +
                          place * (lengths[bucket] - 1)**2)
    stride[order] = lengths[bucket] - 1

    first_node = np.concatenate([[0], np.cumsum(sizes)])[:-1]
    node_graph = np.repeat(np.arange(num_graphs), sizes)
    node_position = np.arange(int(sizes.sum())) - first_node[node_graph]
    node_rows = graph_row[node_graph] + 1 + node_position
    real = np.zeros(int(token_start[-1]), dtype=bool)
    real[graph_row] = True
    real[node_rows] = True
    key_masks = [block.reshape(int(count), int(length)) for block, count,
                 length in zip(np.split(real, token_start[1:-1]), counts,
                               lengths)]
    return (graph_row, node_rows, node_graph, node_position, key_masks,
            pair_offset, stride, counts, lengths)


def add_batch_layout(data: Any, num_buckets: int = 1,
                     multi_hop_max_dist: int = 20,
                     device: Optional[Union[str, torch.device]] = None) -> Any:
    r"""Attaches :func:`batch_layout` to :obj:`data` as
    :obj:`data.layout` (on :obj:`device`, by default the batch's) and
    returns :obj:`data`. The arguments are those of :func:`batch_layout`;
    :meth:`GraphormerSepNorm.layout_options
    <graphormer_sepnorm.GraphormerSepNorm.layout_options>` gives a model's.

    A batch's layout packs the tokens of all its graphs together, so it is
    computed per batch, never per graph: one PyG graph (a :obj:`Data` that
    is not a :obj:`Batch`, as a dataset :obj:`transform` receives) is
    refused with a message naming
    :class:`~graphormer_sepnorm.GraphormerDataLoader`, which lays every
    batch out as it is collated.
    """
    if _is_single_graph(data):
        raise ValueError(
            "add_batch_layout was given one graph, not a batch: the layout "
            "is per batch (it packs the tokens of all the batch's graphs), "
            "so it cannot be a dataset transform. Batch with "
            "graphormer_sepnorm.GraphormerDataLoader(dataset, batch_size, "
            "num_workers=..., layout=model.layout_options()), which lays "
            "every batch out as it is collated (in its workers)")
    layout = batch_layout(data, num_buckets, multi_hop_max_dist)
    target = data.edge_index.device if device is None else device
    data.layout = layout.to(target)
    return data


def _is_single_graph(data: Any) -> bool:
    r"""Whether :obj:`data` is one PyG graph rather than a batch (without
    importing PyG: a PyG graph means PyG is loaded)."""
    pyg = sys.modules.get('torch_geometric.data')
    return (pyg is not None and isinstance(data, pyg.Data) and
            not isinstance(data, pyg.Batch))


def layout_options_for(model: Any,
                       device: Union[str, torch.device]) -> dict[str, int]:
    r""":meth:`model.layout_options()
    <graphormer_sepnorm.GraphormerSepNorm.layout_options>` for batches that
    run on :obj:`device`: with one size bucket on an accelerator, where one
    padded attention call costs less than the kernel launches of several
    buckets (the model's buckets are a CPU saving)."""
    on_cpu = torch.device(device).type == 'cpu'
    return model.layout_options(None if on_cpu else 1)


def _shortest_path_arrays(data: Any) -> tuple[np.ndarray, np.ndarray]:
    spd = getattr(data, 'spd', None)
    path_next = getattr(data, 'path_next', None)
    if spd is None or path_next is None:
        raise ValueError(
            "The graphs have no 'spd'/'path_next': build the dataset with "
            "pre_transform=graphormer_sepnorm.transforms.AddShortestPaths()")
    if spd.numel() != path_next.numel():
        raise ValueError(
            "'spd' and 'path_next' differ in size; the graphs were changed "
            "after AddShortestPaths ran. Apply AddShortestPaths last")
    return (spd.detach().cpu().numpy().astype(np.int64),
            path_next.detach().cpu().numpy().astype(np.int64))
