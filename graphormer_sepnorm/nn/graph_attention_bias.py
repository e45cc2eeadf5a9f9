from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Optional, Sequence

import torch
from torch import Tensor
from torch.nn import Embedding, Module, Parameter

from ..transforms.batch_layout import BatchLayout
from .categorical_embedding import CategoricalEmbedding
from .float_features import (float_projection, reset_float_projection,
                             split_columns)
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
    went through :class:`~graphormer_sepnorm.transforms.AddShortestPaths`,
    with the :class:`~graphormer_sepnorm.transforms.BatchLayout` that the
    data pipeline prepared: the distance and edge of every node pair, and
    the edges each pair's path crosses, hop by hop. The forward pass only
    embeds, gathers and adds.

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
        edge_float_channels (int, optional): Float columns of
            :obj:`edge_attr` after the categorical ones (if any), whose
            linear projection is added to the edge embedding.
            (default: :obj:`0`)
    """
    def __init__(
        self,
        num_heads: int,
        edge_vocab_sizes: Optional[Sequence[int]] = None,
        edge_encoding: EdgeEncoding = 'multi_hop',
        multi_hop_max_dist: int = 20,
        max_distance: int = 64,
        max_attention_distance: Optional[int] = None,
        edge_float_channels: int = 0,
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
        self.edge_vocab_sizes = (None if edge_vocab_sizes is None else
                                 [int(size) for size in edge_vocab_sizes])
        self.edge_embedding = CategoricalEmbedding(
            list(edge_vocab_sizes or [1]), num_heads, reduce='mean',
            name='edge_attr')
        self.edge_float_channels = edge_float_channels
        self.edge_float_projection = float_projection(edge_float_channels,
                                                      num_heads)
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
        reset_float_projection(self.edge_float_projection)
        torch.nn.init.normal_(self.spatial_embedding.weight, std=0.02)
        torch.nn.init.normal_(self.virtual_distance, std=0.02)
        if self.hop_weight is not None:
            torch.nn.init.normal_(self.hop_weight, std=0.02)

    def forward(self, data: Data, tokens: PackedTokens) -> list[Tensor]:
        r"""Returns the bias of every bucket of :obj:`tokens`,
        :obj:`[graphs, heads, length, length]` each (with one bucket, the
        bias of the padded batch): only the pairs of each bucket's own
        length are ever computed.

        Args:
            data (torch_geometric.data.Batch): The batch, for its
                :obj:`edge_attr`.
            tokens (PackedTokens): The layout of its tokens, whose
                :class:`~graphormer_sepnorm.transforms.BatchLayout` holds
                the node pairs and the walk of their paths.
        """
        layout = tokens.layout
        distance = layout.pair_distance
        spatial_index = torch.where(distance >= 0,
                                    distance.clamp(max=self.max_distance),
                                    self.unreachable_index)
        node_bias = self.spatial_embedding(spatial_index)  # [num_pairs, H]

        edge_emb = self._edge_embedding(data)
        # A zero row for "no edge", at index num_edges.
        edge_emb = torch.cat([edge_emb, edge_emb.new_zeros(1, self.num_heads)])
        if self.edge_encoding == 'multi_hop':
            node_bias = node_bias + self._multi_hop(distance, layout, edge_emb)
        else:
            node_bias = node_bias + edge_emb[layout.pair_edge]

        # Pairs that may not attend get -inf added, not filled in: the
        # backward pass then needs no copy of the gradient (which is zero
        # there anyway, as the softmax gives those pairs no weight).
        if self.max_attention_distance is not None:
            too_far = (distance < 0) | (distance > self.max_attention_distance)
            node_bias = node_bias + _blocked(too_far, node_bias).unsqueeze(-1)

        biases = []
        blocks = tokens.pair_blocks
        pairs = node_bias.split([count * n * n for count, n in blocks])
        virtual = self.virtual_distance.view(1, -1, 1, 1)
        for block, key_mask, (count, n) in zip(pairs, tokens.key_masks,
                                               blocks):
            block = block.view(count, n, n, -1).permute(0, 3, 1, 2)
            first_row = virtual.expand(count, -1, 1, n + 1)
            first_col = virtual.expand(count, -1, n, 1)
            bias = torch.cat(
                [first_row, torch.cat([first_col, block], dim=-1)], dim=-2)
            key_mask = key_mask.view(count, 1, 1, n + 1)
            biases.append(bias + _blocked(~key_mask, bias))
        return biases

    def _edge_embedding(self, data: Data) -> Tensor:
        edge_attr = _edge_attr_2d(data, self.edge_vocab_sizes,
                                  self.edge_float_channels)
        num_ids = len(self.edge_vocab_sizes or ())
        ids, floats = split_columns(edge_attr, num_ids,
                                    self.edge_float_channels, 'edge_attr')
        if self.edge_vocab_sizes is None:  # the one shared embedding
            ids = data.edge_index.new_zeros(data.edge_index.size(1), 1)
        edge_emb = self.edge_embedding(ids)
        if self.edge_float_projection is not None:
            edge_emb = edge_emb + self.edge_float_projection(floats)
        return edge_emb

    def _multi_hop(self, distance: Tensor, layout: BatchLayout,
                   edge_emb: Tensor) -> Tensor:
        if layout.multi_hop_max_dist != self.multi_hop_max_dist:
            raise ValueError(
                f"The batch's layout walks {layout.multi_hop_max_dist} hops "
                f"of each path, the model's multi_hop_max_dist is "
                f"{self.multi_hop_max_dist}; prepare the batches with the "
                f"model's layout_options()")
        # Apply each hop's matrix to the (few) edges once, then add up the
        # rows of the (pair, hop, edge) triples the data pipeline listed, in
        # its order (pair by pair): one gather and one index_add, forward;
        # one gather and one small index_add into the tables, backward.
        tables = torch.einsum('eh,khg->keg', edge_emb,
                              self.hop_weight).reshape(-1, self.num_heads)
        values = tables.index_select(0, layout.hop_rows)
        summed = values.new_zeros(distance.numel(), self.num_heads)
        summed = summed.index_add(0, layout.hop_pairs, values)
        hops = distance.clamp(1, self.multi_hop_max_dist)
        return summed / hops.unsqueeze(-1).to(summed.dtype)

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(heads={self.num_heads}, '
                f'edge_encoding={self.edge_encoding!r}, '
                f'multi_hop_max_dist={self.multi_hop_max_dist}, '
                f'max_distance={self.max_distance})')


def _blocked(mask: Tensor, like: Tensor) -> Tensor:
    r""":obj:`-inf` where :obj:`mask` is true, :obj:`0` elsewhere, in the
    dtype of :obj:`like`."""
    return like.new_zeros(mask.shape).masked_fill_(mask, float('-inf'))


def _edge_attr_2d(data: Data, vocab_sizes: Optional[list[int]],
                  float_channels: int = 0) -> Tensor:
    r"""The batch's :obj:`edge_attr` as :obj:`[num_edges, columns]`, or one
    column of zeros for a model without edge features (:obj:`vocab_sizes`
    :obj:`None`, no :obj:`float_channels`); a batch that does not fit the
    model raises a :class:`ValueError` naming the fix."""
    edge_attr = getattr(data, 'edge_attr', None)
    num_edges = data.edge_index.size(1)
    if vocab_sizes is None and not float_channels:
        if edge_attr is not None:
            raise ValueError(
                f"The graphs have 'edge_attr' but the model was built "
                f"without edge features (bond_vocab_sizes=None); build it "
                f"with the number of values of each edge_attr column as "
                f"bond_vocab_sizes, or delete edge_attr from the graphs")
        return data.edge_index.new_zeros(num_edges, 1)
    if edge_attr is None:
        raise ValueError(
            f"The graphs have no 'edge_attr' but the model embeds "
            f"{len(vocab_sizes or ()) + float_channels} edge feature "
            f"column(s) (bond_vocab_sizes={vocab_sizes}, edge_float_channels="
            f"{float_channels}); build the model with bond_vocab_sizes=None "
            f"and edge_float_channels=0 for graphs without edge features")
    if edge_attr.size(0) != num_edges:
        raise ValueError(
            f"'edge_attr' has {edge_attr.size(0)} rows but 'edge_index' has "
            f"{num_edges} edges (columns); give every edge its row, in the "
            f"order of edge_index's columns (transforms that add edges, "
            f"such as AddSelfLoops, add rows only to an edge_attr that "
            f"already has one per edge)")
    return edge_attr.view(-1, 1) if edge_attr.dim() == 1 else edge_attr
