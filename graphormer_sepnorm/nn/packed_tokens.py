from typing import Callable, Optional

import torch
from torch import Tensor


class PackedTokens:
    r"""The token sequences of a batch of graphs, packed for the encoder:
    graphs sorted by size into buckets of (nearly) equal numbers of graphs,
    each bucket padded only to its own longest sequence, and all buckets
    concatenated into one :obj:`[num_tokens, channels]` tensor.

    A padded batch pads every graph to the largest one, and on ZINC (9 to 38
    atoms) a third of its tokens and over half of its attention pairs are
    padding. Packed, the per-token layers (norms, projections, feed-forward
    networks) run on far fewer rows, and attention runs bucket by bucket on
    zero-copy views of the packed tensor. Each graph attends only within
    itself, so every real token gets the same result as in a padded batch.

    The node pairs of the attention bias follow the same buckets: bucket by
    bucket, a :obj:`[graphs, length - 1, length - 1]` block of pairs
    (:attr:`pair_offset` and :attr:`pair_stride` locate each graph's pairs),
    all blocks flattened into :obj:`num_pairs` entries. The bias of each
    bucket, :obj:`[graphs, heads, length, length]`, goes into
    :attr:`biases` (see :meth:`GraphAttentionBias.bucketed
    <graphormer_sepnorm.nn.GraphAttentionBias.bucketed>`) for every layer's
    :meth:`attend`.

    With one bucket the layout *is* the padded batch :obj:`[batch_size,
    1 + N]` flattened (and the pairs :obj:`[batch_size, N, N]`), graphs in
    their original order.

    Args:
        node_mask (torch.Tensor): Real-node mask :obj:`[batch_size, N]` of
            the padded batch (token :obj:`0` of every sequence is the graph
            token, token :obj:`1 + i` is node :obj:`i`).
        num_buckets (int, optional): Number of size buckets.
            (default: :obj:`1`)

    Attributes:
        buckets (list[tuple[int, int]]): :obj:`(graphs, length)` per bucket.
        order (torch.Tensor or None): The graphs sorted by size (:obj:`None`
            with one bucket).
        graph_index (torch.Tensor): Packed row of each graph's graph token,
            graphs in their original order.
        node_index (torch.Tensor): Packed rows of the real node tokens.
        real_mask (torch.Tensor): Per packed row, true for a graph or node
            token and false for padding.
        nodes_per_graph (torch.Tensor): Real nodes of each graph, graphs in
            their original order.
    """
    def __init__(self, node_mask: Tensor, num_buckets: int = 1) -> None:
        batch_size, num_nodes = node_mask.shape
        self.node_mask = node_mask
        self.nodes_per_graph = node_mask.sum(dim=1)
        self.num_graphs = batch_size
        self.padded_length = 1 + num_nodes
        device = node_mask.device
        num_buckets = max(1, min(num_buckets, batch_size))
        token_mask = torch.cat(
            [node_mask.new_ones(batch_size, 1), node_mask], dim=1)
        if num_buckets == 1:
            self.order: Optional[Tensor] = None
            self.buckets = [(batch_size, self.padded_length)]
            self.index: Optional[Tensor] = None
            self.graph_index = torch.arange(batch_size, device=device) * \
                self.padded_length
            self.pair_offset = torch.arange(batch_size, device=device) * \
                num_nodes**2
            self.pair_stride = torch.full_like(self.pair_offset, num_nodes)
        else:
            self.order = torch.argsort(self.nodes_per_graph, stable=True)
            sorted_sizes = self.nodes_per_graph[self.order].tolist()
            bounds = [round(i * batch_size / num_buckets)
                      for i in range(num_buckets + 1)]
            self.buckets = [(stop - start, 1 + sorted_sizes[stop - 1])
                            for start, stop in zip(bounds[:-1], bounds[1:])
                            if stop > start]
            # For every packed token, its row in the flattened padded batch.
            rows, graph_index, pair_offset, pair_stride = [], [], [], []
            start, offset, pair_start = 0, 0, 0
            for count, length in self.buckets:
                graphs = self.order[start:start + count]
                rows.append((graphs[:, None] * self.padded_length +
                             torch.arange(length, device=device)).view(-1))
                in_bucket = torch.arange(count, device=device)
                graph_index.append(offset + length * in_bucket)
                pair_offset.append(pair_start + (length - 1)**2 * in_bucket)
                pair_stride.append(torch.full_like(in_bucket, length - 1))
                start, offset = start + count, offset + count * length
                pair_start += count * (length - 1)**2
            self.index = torch.cat(rows)
            self.graph_index = self._unsort(torch.cat(graph_index))
            self.pair_offset = self._unsort(torch.cat(pair_offset))
            self.pair_stride = self._unsort(torch.cat(pair_stride))
        # Real tokens (graph token and nodes) of the packed layout.
        self.real_mask = self._pack_rows(token_mask.view(-1))
        node_tokens = self.real_mask.clone()
        node_tokens[self.graph_index] = False
        self.node_index = node_tokens.nonzero().view(-1)
        self.biases: Optional[list[Tensor]] = None

    @property
    def num_tokens(self) -> int:
        r"""Rows of the packed layout, padding within buckets included."""
        return sum(count * length for count, length in self.buckets)

    @property
    def pair_blocks(self) -> list[tuple[int, int]]:
        r""":obj:`(graphs, nodes)` of each bucket's block of node pairs
        :obj:`[graphs, nodes, nodes]`."""
        return [(count, length - 1) for count, length in self.buckets]

    @property
    def num_pairs(self) -> int:
        r"""Entries of the packed node pairs, padding included."""
        return sum(count * nodes**2 for count, nodes in self.pair_blocks)

    def pack(self, padded: Tensor) -> Tensor:
        r"""Packs a padded :obj:`[batch_size, 1 + N, *]` tensor into
        :obj:`[num_tokens, *]`."""
        return self._pack_rows(padded.flatten(0, 1))

    def unpack(self, packed: Tensor) -> Tensor:
        r"""The padded :obj:`[batch_size, 1 + N, *]` tensor of a packed one,
        graphs in their original order and zeros at every padding token."""
        real = packed[self.real_mask]
        rows = (self.real_mask.nonzero().view(-1) if self.index is None else
                self.index[self.real_mask])
        padded = packed.new_zeros(self.num_graphs * self.padded_length,
                                  *packed.shape[1:])
        padded = padded.index_copy(0, rows, real)
        return padded.view(self.num_graphs, self.padded_length,
                           *packed.shape[1:])

    def attend(self, attend: Callable[[Tensor, Tensor], Tensor],
               x: Tensor) -> Tensor:
        r"""Runs :obj:`attend(x_bucket, bias_bucket)` on every bucket, with
        :obj:`x_bucket` a :obj:`[graphs, length, channels]` view of the
        packed :obj:`x`, and packs the results again."""
        if self.biases is None:
            raise ValueError("These PackedTokens have no attention bias; "
                             "set their biases (GraphAttentionBias.bucketed)"
                             " first")
        parts = x.split([count * length for count, length in self.buckets])
        out = [
            attend(part.view(count, length, -1),
                   bias).reshape(count * length, -1)
            for part, (count, length), bias in zip(parts, self.buckets,
                                                   self.biases)
        ]
        return out[0] if len(out) == 1 else torch.cat(out)

    def _pack_rows(self, rows: Tensor) -> Tensor:
        return rows if self.index is None else rows.index_select(
            0, self.index)

    def _unsort(self, values: Tensor) -> Tensor:
        out = torch.empty_like(values)
        out[self.order] = values
        return out

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(graphs={self.num_graphs}, '
                f'tokens={self.num_tokens}, buckets={self.buckets})')
