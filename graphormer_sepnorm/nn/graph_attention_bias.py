from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Optional, Sequence

import numba
import numpy as np
import torch
from torch import Tensor
from torch.nn import Embedding, Module, Parameter

from .categorical_embedding import CategoricalEmbedding
from .packed_tokens import PackedTokens

if TYPE_CHECKING:  # pragma: no cover
    from torch_geometric.data import Data

EdgeEncoding = Literal['multi_hop', 'single']


class GraphAttentionBias(Module):
    r"""The per-head attention bias of Graphormer, from the `"Do Transformers
    Really Perform Bad for Graph Representation?"
    <https://arxiv.org/abs/2106.05234>`_ paper, computed once per forward pass
    and shared by all layers.

    For the padded token sequence :obj:`[graph token, node 1, ..., node N]`
    the bias :math:`b_{ij}` of every head is the sum of

    * the **spatial encoding**, a learned scalar per shortest-path distance
      :math:`\phi(v_i, v_j)` (distances above :obj:`max_distance` share its
      entry; unreachable pairs have an entry of their own);
    * the **edge encoding**: with :obj:`"multi_hop"`, the mean over the first
      :obj:`multi_hop_max_dist` hops of one shortest path of
      :math:`x_{e_n}^\top w_n^E`, each hop :math:`n` with its own learned
      :obj:`[heads, heads]` matrix applied to the edge's per-head embedding;
      with :obj:`"single"`, the embedding of the edge :math:`(i, j)` when
      there is one;
    * for every pair involving the graph token, a learned per-head **virtual
      distance** instead of the two terms above.

    Keys that are padding get :obj:`-inf`, and so do node pairs farther apart
    than :obj:`max_attention_distance` when that is set.

    The input is a :class:`~torch_geometric.data.Batch` built from graphs that
    went through :class:`~graphormer_sepnorm.transforms.AddShortestPaths`.
    :meth:`forward` returns the bias of the padded batch; :meth:`bucketed`
    the bias of each size bucket of
    :class:`~graphormer_sepnorm.nn.PackedTokens`, as the model uses it.

    Args:
        num_heads (int): Number of attention heads.
        edge_vocab_sizes (Sequence[int], optional): Number of values of each
            column of :obj:`edge_attr`; :obj:`None` if the graphs have no edge
            features (every edge then shares one embedding).
            (default: :obj:`None`)
        edge_encoding (str, optional): :obj:`"multi_hop"` or :obj:`"single"`.
            (default: :obj:`"multi_hop"`)
        multi_hop_max_dist (int, optional): Hops of each shortest path that
            enter the multi-hop edge encoding. (default: :obj:`20`)
        max_distance (int, optional): Largest distance with its own spatial
            encoding. (default: :obj:`64`)
        max_attention_distance (int, optional): If set, node pairs farther
            apart than this, or unreachable, do not attend to each other (the
            reference collator's :obj:`spatial_pos_max - 2`).
            (default: :obj:`None`)
    """
    def __init__(
        self,
        num_heads: int,
        edge_vocab_sizes: Optional[Sequence[int]] = None,
        edge_encoding: EdgeEncoding = 'multi_hop',
        multi_hop_max_dist: int = 20,
        max_distance: int = 64,
        max_attention_distance: Optional[int] = None,
    ) -> None:
        super().__init__()
        if edge_encoding not in ('multi_hop', 'single'):
            raise ValueError(f"edge_encoding must be 'multi_hop' or 'single', "
                             f"got {edge_encoding!r}")
        if multi_hop_max_dist < 1:
            raise ValueError(f"multi_hop_max_dist must be at least 1, got "
                             f"{multi_hop_max_dist}")
        self.num_heads = num_heads
        self.edge_encoding = edge_encoding
        self.multi_hop_max_dist = multi_hop_max_dist
        self.max_distance = max_distance
        self.max_attention_distance = max_attention_distance
        self.edge_embedding = CategoricalEmbedding(
            list(edge_vocab_sizes or [1]), num_heads, reduce='mean',
            name='edge_attr')
        # Distances 0..max_distance, then one entry for "unreachable".
        self.spatial_embedding = Embedding(max_distance + 2, num_heads)
        self.virtual_distance = Parameter(torch.empty(num_heads))
        if edge_encoding == 'multi_hop':
            self.hop_weight = Parameter(
                torch.empty(multi_hop_max_dist, num_heads, num_heads))
        else:
            self.register_parameter('hop_weight', None)
        self.reset_parameters()

    @property
    def unreachable_index(self) -> int:
        r"""Row of :obj:`spatial_embedding` used for unreachable pairs."""
        return self.max_distance + 1

    def reset_parameters(self) -> None:
        r"""Graphormer's initialization: normal with standard deviation 0.02."""
        self.edge_embedding.reset_parameters()
        torch.nn.init.normal_(self.spatial_embedding.weight, std=0.02)
        torch.nn.init.normal_(self.virtual_distance, std=0.02)
        if self.hop_weight is not None:
            torch.nn.init.normal_(self.hop_weight, std=0.02)

    def forward(self, data: Data, node_mask: Tensor) -> Tensor:
        r"""Returns the bias :obj:`[batch_size, heads, 1 + N, 1 + N]` of the
        padded batch.

        Args:
            data (torch_geometric.data.Batch): The batch.
            node_mask (torch.Tensor): :obj:`[batch_size, N]` real-node mask
                from :func:`~torch_geometric.utils.to_dense_batch`.
        """
        return self.bucketed(data, PackedTokens(node_mask))[0]

    def bucketed(self, data: Data, tokens: PackedTokens) -> list[Tensor]:
        r"""Returns the bias of every bucket of packed tokens,
        :obj:`[graphs, heads, length, length]` each (see
        :class:`~graphormer_sepnorm.nn.PackedTokens`): only the pairs of
        each bucket's own length are ever computed.

        Args:
            data (torch_geometric.data.Batch): The batch.
            tokens (PackedTokens): The layout of its tokens.
        """
        spd, path_next = dense_shortest_paths(data, tokens)  # [num_pairs]
        spatial_index = torch.where(
            spd >= 0, spd.clamp(max=self.max_distance), self.unreachable_index)
        node_bias = self.spatial_embedding(spatial_index)  # [num_pairs, H]

        edge_ids = dense_edge_ids(data, tokens)
        edge_emb = self.edge_embedding(_edge_attr_2d(data))
        # A zero row for "no edge", at index num_edges.
        edge_emb = torch.cat([edge_emb, edge_emb.new_zeros(1, self.num_heads)])
        if self.edge_encoding == 'multi_hop':
            node_bias = node_bias + self._multi_hop(spd, path_next, edge_ids,
                                                    edge_emb, tokens)
        else:
            node_bias = node_bias + edge_emb[edge_ids]

        # Pairs that may not attend get -inf added, not filled in: the
        # backward pass then needs no copy of the gradient (which is zero
        # there anyway, as the softmax gives those pairs no weight).
        if self.max_attention_distance is not None:
            too_far = (spd < 0) | (spd > self.max_attention_distance)
            node_bias = node_bias + _blocked(too_far, node_bias).unsqueeze(-1)

        biases = []
        blocks = tokens.pair_blocks
        pairs = node_bias.split([count * n * n for count, n in blocks])
        keys = tokens.real_mask.split([count * (n + 1)
                                       for count, n in blocks])
        virtual = self.virtual_distance.view(1, -1, 1, 1)
        for block, key_mask, (count, n) in zip(pairs, keys, blocks):
            block = block.view(count, n, n, -1).permute(0, 3, 1, 2)
            first_row = virtual.expand(count, -1, 1, n + 1)
            first_col = virtual.expand(count, -1, n, 1)
            bias = torch.cat(
                [first_row, torch.cat([first_col, block], dim=-1)], dim=-2)
            key_mask = key_mask.view(count, 1, 1, n + 1)
            biases.append(bias + _blocked(~key_mask, bias))
        return biases

    def _multi_hop(self, spd: Tensor, path_next: Tensor, edge_ids: Tensor,
                   edge_emb: Tensor, tokens: PackedTokens) -> Tensor:
        hops = spd.clamp(min=0)  # Unreachable and padded pairs: no hops.
        max_hops = min(self.multi_hop_max_dist, int(hops.max()))
        if max_hops == 0:
            return edge_emb.new_zeros(spd.numel(), self.num_heads)
        num_rows = edge_emb.size(0)
        # Apply each hop's matrix to the (few) edges once, then add up the
        # rows of every (pair, hop, edge) triple per pair.
        per_hop_tables = torch.einsum('eh,khg->keg', edge_emb,
                                      self.hop_weight[:max_hops]).reshape(
                                          -1, self.num_heads)
        if spd.device.type == 'cpu' and not (torch.is_grad_enabled() and
                                             per_hop_tables.requires_grad):
            # Without gradients (prediction, validation): one compiled pass
            # adds the rows as it walks, without listing the triples.
            summed = _walk_and_sum_compiled(hops, path_next, edge_ids,
                                            tokens.pair_blocks, max_hops,
                                            num_rows, per_hop_tables)
        else:
            walk = _walk_paths_compiled if spd.device.type == 'cpu' else \
                _walk_paths
            pairs, rows = walk(hops, path_next, edge_ids, tokens.pair_blocks,
                               max_hops, num_rows)
            # Backward: one gather and one small index_add into the tables.
            values = per_hop_tables.index_select(0, rows)
            summed = values.new_zeros(spd.numel(), self.num_heads)
            summed = summed.index_add(0, pairs, values)
        return summed / hops.clamp(1, max_hops).unsqueeze(-1).to(summed.dtype)

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(heads={self.num_heads}, '
                f'edge_encoding={self.edge_encoding!r}, '
                f'multi_hop_max_dist={self.multi_hop_max_dist}, '
                f'max_distance={self.max_distance})')


def _walk_paths(hops: Tensor, path_next: Tensor, edge_ids: Tensor,
                blocks: list[tuple[int, int]], max_hops: int,
                num_rows: int) -> tuple[Tensor, Tensor]:
    r"""The (pair, hop, edge) triples of the first :obj:`max_hops` hops of
    every pair's path, as indices into the packed node pairs (blocks of
    :obj:`[graphs, nodes, nodes]`, see
    :class:`~graphormer_sepnorm.nn.PackedTokens`) and rows of the stacked
    per-hop edge tables (edge id + hop * num_rows).

    The paths are walked on the list of pairs that still have hops left, so
    only real triples are ever gathered: padding, unreachable pairs and hops
    past a pair's distance cost nothing, forward or backward.
    """
    device = hops.device
    block_nodes = torch.tensor([n for _, n in blocks], device=device)
    block_start = torch.tensor([0] + [count * n * n for count, n in blocks],
                               device=device).cumsum(0)
    pair = hops.nonzero().view(-1)
    block = torch.searchsorted(block_start[1:], pair, right=True)
    size, start = block_nodes[block], block_start[block]
    # The first pair of each pair's graph, and the pair's place in it.
    base = start + (pair - start) // (size * size) * (size * size)
    target = (pair - base) % size
    current = (pair - base) // size
    left = hops[pair]
    pairs, rows = [], []
    for hop in range(max_hops):
        step = path_next[base + current * size + target]
        pairs.append(pair)
        rows.append(edge_ids[base + current * size + step] + hop * num_rows)
        keep = left > hop + 1
        if hop + 1 == max_hops or not bool(keep.any()):
            break
        pair, base, size, target, left = (pair[keep], base[keep], size[keep],
                                          target[keep], left[keep])
        current = step[keep]
    return torch.cat(pairs), torch.cat(rows)


def _walk_paths_compiled(hops: Tensor, path_next: Tensor, edge_ids: Tensor,
                         blocks: list[tuple[int, int]], max_hops: int,
                         num_rows: int) -> tuple[Tensor, Tensor]:
    r""":func:`_walk_paths` on the CPU, compiled with Numba: the same
    triples in the same order within each pair, without the per-hop tensor
    operations that took a fifth of a ZINC forward pass."""
    pairs, rows, _ = _walk_kernel(*_kernel_inputs(hops, path_next, edge_ids,
                                                  blocks), max_hops, num_rows,
                                  np.zeros((0, 1), dtype=np.float32))
    return torch.from_numpy(pairs), torch.from_numpy(rows)


def _walk_and_sum_compiled(hops: Tensor, path_next: Tensor, edge_ids: Tensor,
                           blocks: list[tuple[int, int]], max_hops: int,
                           num_rows: int, tables: Tensor) -> Tensor:
    r"""The sum over the triples of :func:`_walk_paths` of their rows of
    :obj:`tables`, per pair (:obj:`[num_pairs, heads]`), in one compiled
    pass on the CPU (no gradient): the rows are added in the order
    :func:`_walk_paths_compiled` lists them, as :meth:`index_add` does."""
    _, _, summed = _walk_kernel(*_kernel_inputs(hops, path_next, edge_ids,
                                                blocks), max_hops, num_rows,
                                tables.detach().contiguous().numpy())
    return torch.from_numpy(summed)


def _kernel_inputs(hops: Tensor, path_next: Tensor, edge_ids: Tensor,
                   blocks: list[tuple[int, int]]) -> tuple[np.ndarray, ...]:
    return (hops.contiguous().numpy(), path_next.contiguous().numpy(),
            edge_ids.contiguous().numpy(),
            np.array([count for count, _ in blocks], dtype=np.int64),
            np.array([n for _, n in blocks], dtype=np.int64))


@numba.njit(cache=True, nogil=True)
def _walk_kernel(hops, path_next, edge_ids, block_graphs, block_nodes,
                 max_hops, num_rows, tables):  # noqa: ANN
    # With an empty `tables`, lists the triples (pairs, rows); otherwise adds
    # each triple's row of `tables` to its pair's row of `summed` instead.
    summing = tables.shape[0] > 0
    total = 0
    if not summing:
        for pair in range(hops.shape[0]):
            total += min(hops[pair], max_hops)
    pairs = np.empty(total, dtype=np.int64)
    rows = np.empty(total, dtype=np.int64)
    heads = tables.shape[1]
    summed = np.zeros((hops.shape[0] if summing else 0, heads),
                      dtype=tables.dtype)
    k = 0
    base = 0
    for block in range(block_nodes.shape[0]):
        size = block_nodes[block]
        for _ in range(block_graphs[block]):
            for local in range(size * size):
                pair = base + local
                target = local % size
                current = local // size
                for hop in range(min(hops[pair], max_hops)):
                    step = path_next[base + current * size + target]
                    row = edge_ids[base + current * size + step] + \
                        hop * num_rows
                    if summing:
                        for head in range(heads):
                            summed[pair, head] += tables[row, head]
                    else:
                        pairs[k] = pair
                        rows[k] = row
                        k += 1
                    current = step
            base += size * size
    return pairs, rows, summed


def dense_shortest_paths(data: Data,
                         tokens: PackedTokens) -> tuple[Tensor, Tensor]:
    r"""Scatters the flat per-graph :obj:`spd` and :obj:`path_next` of a batch
    into the packed node pairs of :obj:`tokens` (blocks of :obj:`[graphs,
    nodes, nodes]`; with one bucket, the padded :obj:`[batch_size, N, N]`
    flattened): long tensors of node ids local to each graph, :obj:`-1` for
    unreachable and padded pairs."""
    if getattr(data, 'spd', None) is None or getattr(data, 'path_next',
                                                     None) is None:
        raise ValueError(
            "The graphs have no 'spd'/'path_next': build the dataset with "
            "pre_transform=graphormer_sepnorm.transforms.AddShortestPaths()")
    nodes_per_graph = tokens.nodes_per_graph
    pairs_per_graph = nodes_per_graph * nodes_per_graph
    if data.spd.numel() != data.path_next.numel() or (
            data.spd.numel() != int(pairs_per_graph.sum())):
        raise ValueError(
            "'spd'/'path_next' do not hold num_nodes**2 entries per graph; "
            "the nodes were changed after AddShortestPaths ran. Apply "
            "AddShortestPaths last (after any transform that adds or drops "
            "nodes)")
    device = nodes_per_graph.device
    graph = torch.repeat_interleave(
        torch.arange(tokens.num_graphs, device=device), pairs_per_graph,
        output_size=data.spd.numel())
    first_pair = torch.cumsum(pairs_per_graph, 0) - pairs_per_graph
    local = torch.arange(data.spd.numel(), device=device)
    local = local - first_pair[graph]
    size = nodes_per_graph[graph]
    row, col = local // size, local % size
    position = (tokens.pair_offset[graph] + row * tokens.pair_stride[graph] +
                col)
    spd = torch.full((tokens.num_pairs, ), -1, device=device)
    path_next = spd.clone()
    spd[position] = data.spd.long()
    path_next[position] = data.path_next.long()
    return spd, path_next


def dense_edge_ids(data: Data, tokens: PackedTokens) -> Tensor:
    r"""Map from the packed node pairs of :obj:`tokens` to the index of their
    edge in :obj:`data.edge_index` (:obj:`num_edges` where there is none)."""
    num_edges = data.edge_index.size(1)
    edge_ids = data.edge_index.new_full((tokens.num_pairs, ), num_edges)
    src, dst = data.edge_index
    graph = _node_batch(data)[src]
    nodes_per_graph = tokens.nodes_per_graph
    offset = (torch.cumsum(nodes_per_graph, 0) - nodes_per_graph)[graph]
    position = (tokens.pair_offset[graph] +
                (src - offset) * tokens.pair_stride[graph] + dst - offset)
    edge_ids[position] = torch.arange(num_edges, device=src.device)
    return edge_ids


def _blocked(mask: Tensor, like: Tensor) -> Tensor:
    r""":obj:`-inf` where :obj:`mask` is true, :obj:`0` elsewhere, in the
    dtype of :obj:`like`."""
    return like.new_zeros(mask.shape).masked_fill_(mask, float('-inf'))


def _node_batch(data: Data) -> Tensor:
    batch = getattr(data, 'batch', None)
    if batch is None:
        return torch.zeros(data.num_nodes, dtype=torch.long,
                           device=data.edge_index.device)
    return batch


def _edge_attr_2d(data: Data) -> Tensor:
    edge_attr = getattr(data, 'edge_attr', None)
    if edge_attr is None:
        return data.edge_index.new_zeros(data.edge_index.size(1), 1)
    return edge_attr.view(-1, 1) if edge_attr.dim() == 1 else edge_attr
