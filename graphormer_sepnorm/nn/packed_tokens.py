from typing import Callable, Optional

import numpy as np
import torch
from torch import Tensor

from ..transforms.batch_layout import BatchLayout, token_layout


class PackedTokens:
    r"""The token sequences of a batch of graphs, packed for the encoder as
    the batch's :class:`~graphormer_sepnorm.transforms.BatchLayout` says:
    graphs sorted by size into buckets, each bucket padded only to its own
    longest sequence, and all buckets concatenated into one
    :obj:`[num_tokens, channels]` tensor.

    A padded batch pads every graph to the largest one, and on ZINC (9 to 38
    atoms) a third of its tokens and over half of its attention pairs are
    padding. Packed, the per-token layers (norms, projections, feed-forward
    networks) run on far fewer rows, and attention runs bucket by bucket on
    zero-copy views of the packed tensor. Each graph attends only within
    itself, so every real token gets the same result as in a padded batch.
    With one bucket the layout *is* the padded batch :obj:`[batch_size,
    1 + N]` flattened, graphs in their original order (what a GPU runs
    best: one attention call).

    Every size here is a tensor's shape, known on the host, and every index
    comes prepared with the batch: building, packing and unpacking read
    nothing back from the device. The bias of each bucket,
    :obj:`[graphs, heads, length, length]`, goes into :attr:`biases` (see
    :class:`~graphormer_sepnorm.nn.GraphAttentionBias`) for every layer's
    :meth:`attend`.

    Args:
        layout (BatchLayout): The batch's layout (its token part is read).

    Attributes:
        graph_index (torch.Tensor): Packed row of each graph's graph token,
            graphs in their original order.
        node_index (torch.Tensor): Packed row of each node's token, nodes in
            batch order.
        real_mask (torch.Tensor): Per packed row, true for a graph or node
            token and false for padding.
        key_masks (tuple of torch.Tensor): :obj:`real_mask` of each bucket,
            :obj:`[graphs, length]`.
    """
    def __init__(self, layout: BatchLayout) -> None:
        self.layout = layout
        self.graph_index = layout.graph_rows
        self.node_index = layout.node_rows
        self.key_masks = tuple(layout.key_masks)
        self.real_mask = (self.key_masks[0].view(-1)
                          if len(self.key_masks) == 1 else
                          torch.cat([mask.view(-1) for mask in self.key_masks]))
        self.num_graphs = self.graph_index.numel()
        self.biases: Optional[list[Tensor]] = None

    @classmethod
    def from_node_mask(cls, node_mask: Tensor,
                       num_buckets: int = 1) -> 'PackedTokens':
        r"""The layout of a padded batch given by its real-node mask
        :obj:`[batch_size, N]` (real nodes first in every row, as
        :func:`~torch_geometric.utils.to_dense_batch` makes them), in
        :obj:`num_buckets` size buckets. It reads the sizes back from the
        mask's device: for the padded interfaces of the layers, not for the
        model's forward pass."""
        sizes = node_mask.sum(dim=1).cpu().numpy().astype(np.int64)
        (graph_row, node_rows, node_graph, node_position, key_masks, *_) = \
            token_layout(sizes, num_buckets)
        device = node_mask.device

        def tensor(array: np.ndarray) -> Tensor:
            return torch.from_numpy(array).to(device)

        empty = torch.zeros(0, dtype=torch.long, device=device)
        return cls(BatchLayout(
            graph_rows=tensor(graph_row), node_rows=tensor(node_rows),
            node_graph=tensor(node_graph),
            node_position=tensor(node_position),
            key_masks=tuple(tensor(mask) for mask in key_masks),
            pair_distance=empty, pair_edge=empty, hop_pairs=empty,
            hop_rows=empty, in_degree=empty, out_degree=empty,
            multi_hop_max_dist=0))

    @property
    def buckets(self) -> list[tuple[int, int]]:
        r""":obj:`(graphs, length)` per bucket."""
        return [(mask.size(0), mask.size(1)) for mask in self.key_masks]

    @property
    def num_tokens(self) -> int:
        r"""Rows of the packed layout, padding within buckets included."""
        return self.real_mask.numel()

    @property
    def max_nodes(self) -> int:
        r"""Nodes of the largest graph (:obj:`0` without graphs)."""
        largest = 0
        for _, length in self.buckets:
            largest = max(largest, length - 1)
        return largest

    @property
    def pair_blocks(self) -> list[tuple[int, int]]:
        r""":obj:`(graphs, nodes)` of each bucket's block of node pairs
        :obj:`[graphs, nodes, nodes]`."""
        return [(count, length - 1) for count, length in self.buckets]

    @property
    def num_pairs(self) -> int:
        r"""Entries of the packed node pairs, padding included."""
        return sum(count * nodes**2 for count, nodes in self.pair_blocks)

    def pack(self, nodes: Tensor, graph_token: Tensor) -> Tensor:
        r"""The packed :obj:`[num_tokens, *]` tensor of the node tokens
        :obj:`[num_nodes, *]` (batch order) and a graph token :obj:`[*]`
        shared by every graph, zeros at padding."""
        packed = nodes.new_zeros(self.num_tokens, *nodes.shape[1:])
        packed = packed.index_copy(0, self.node_index, nodes)
        graph_tokens = graph_token.to(nodes.dtype).expand(
            self.num_graphs, *nodes.shape[1:])
        return packed.index_copy(0, self.graph_index, graph_tokens)

    def unpack(self, packed: Tensor) -> tuple[Tensor, Tensor]:
        r"""The padded :obj:`[batch_size, 1 + N, *]` tensor of a packed one
        (graphs in their original order, graph token first, zeros at every
        padding token) and the real-node mask :obj:`[batch_size, N]`."""
        layout = self.layout
        length = 1 + self.max_nodes
        node_slots = layout.node_graph * length + 1 + layout.node_position
        graph_slots = torch.arange(self.num_graphs,
                                   device=packed.device) * length
        padded = packed.new_zeros(self.num_graphs * length,
                                  *packed.shape[1:])
        padded = padded.index_copy(0, graph_slots, packed[self.graph_index])
        padded = padded.index_copy(0, node_slots, packed[self.node_index])
        node_mask = torch.zeros(self.num_graphs * length, dtype=torch.bool,
                                device=packed.device)
        node_mask = node_mask.index_fill(0, node_slots, True)
        return (padded.view(self.num_graphs, length, *packed.shape[1:]),
                node_mask.view(self.num_graphs, length)[:, 1:])

    def attend(self, attend: Callable[[Tensor, Tensor], Tensor],
               x: Tensor) -> Tensor:
        r"""Runs :obj:`attend(x_bucket, bias_bucket)` on every bucket, with
        :obj:`x_bucket` a :obj:`[graphs, length, channels]` view of the
        packed :obj:`x`, and packs the results again."""
        if self.biases is None:
            raise ValueError("These PackedTokens have no attention bias; "
                             "set their biases (GraphAttentionBias) first")
        buckets = self.buckets
        parts = x.split([count * length for count, length in buckets])
        out = [
            attend(part.view(count, length, -1),
                   bias).reshape(count * length, -1)
            for part, (count, length), bias in zip(parts, buckets,
                                                   self.biases)
        ]
        return out[0] if len(out) == 1 else torch.cat(out)

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(graphs={self.num_graphs}, '
                f'tokens={self.num_tokens}, buckets={self.buckets})')
