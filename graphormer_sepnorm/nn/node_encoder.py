from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import torch
from torch import Tensor
from torch.nn import Embedding, Module, Parameter

from .categorical_embedding import CategoricalEmbedding
from .float_features import (float_projection, reset_float_projection,
                             split_columns)
from .packed_tokens import PackedTokens

if TYPE_CHECKING:  # pragma: no cover
    from torch_geometric.data import Data


class GraphormerNodeEncoder(Module):
    r"""The input token sequence of Graphormer, from the `"Do Transformers
    Really Perform Bad for Graph Representation?"
    <https://arxiv.org/abs/2106.05234>`_ paper: a learned graph token followed
    by one token per node, in the packed layout of
    :class:`~graphormer_sepnorm.nn.PackedTokens`.

    A node token is the sum of its atom-feature embeddings and of the
    **centrality encoding**, an embedding of its degree. Degrees above
    :obj:`max_degree` share its embedding. With :obj:`float_channels`,
    :obj:`x` is a float tensor :obj:`[categorical ids | float columns]` and
    a linear projection of the float columns is added (an empty
    :obj:`atom_vocab_sizes`: float columns only).

    Args:
        atom_vocab_sizes (Sequence[int]): Number of values of each column of
            :obj:`x` (ZINC: :obj:`[28]`; OGB molecules: the nine
            :func:`ogb.utils.features.get_atom_feature_dims`).
        channels (int): Size of each token.
        max_degree (int, optional): Largest degree with its own embedding.
            (default: :obj:`64`)
        directed (bool, optional): If :obj:`True`, in- and out-degree get
            separate embeddings (the reference always has both; for undirected
            graphs they coincide, so one table is equivalent).
            (default: :obj:`False`)
        float_channels (int, optional): Float columns of :obj:`x` after
            the categorical ones. (default: :obj:`0`)
    """
    def __init__(self, atom_vocab_sizes: Sequence[int], channels: int,
                 max_degree: int = 64, directed: bool = False,
                 float_channels: int = 0) -> None:
        super().__init__()
        if not atom_vocab_sizes and not float_channels:
            raise ValueError("The model needs node features: categorical "
                             "(atom_vocab_sizes) or float columns "
                             "(node_float_channels), or both")
        self.channels = channels
        self.max_degree = max_degree
        self.directed = directed
        self.num_ids = len(atom_vocab_sizes)
        self.atom_embedding = (CategoricalEmbedding(
            atom_vocab_sizes, channels, reduce='sum', name='x')
            if atom_vocab_sizes else None)
        self.float_channels = float_channels
        self.float_projection = float_projection(float_channels, channels)
        self.in_degree_embedding = Embedding(max_degree + 1, channels)
        self.out_degree_embedding = (Embedding(max_degree + 1, channels)
                                     if directed else None)
        self.graph_token = Parameter(torch.empty(channels))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Graphormer's initialization: normal with standard deviation 0.02."""
        if self.atom_embedding is not None:
            self.atom_embedding.reset_parameters()
        reset_float_projection(self.float_projection)
        for table in (self.in_degree_embedding, self.out_degree_embedding):
            if table is not None:
                torch.nn.init.normal_(table.weight, std=0.02)
        torch.nn.init.normal_(self.graph_token, std=0.02)

    def forward(self, data: Data, tokens: PackedTokens,
                masked_atoms: Optional[Tensor] = None,
                mask_token: Optional[Tensor] = None) -> Tensor:
        r"""Returns the packed tokens :obj:`[num_tokens, channels]` of
        :obj:`tokens`' layout: every graph's graph token, then its nodes,
        zeros at padding. Degrees come with the batch's
        :class:`~graphormer_sepnorm.transforms.BatchLayout`.

        For masked-atom pretraining, the atom-feature embeddings of the nodes
        where the boolean :obj:`masked_atoms` :obj:`[num_nodes]` is set are
        replaced by :obj:`mask_token` :obj:`[channels]` (their degree, the
        graph structure, is still encoded)."""
        if getattr(data, 'x', None) is None:
            raise ValueError(
                "The graphs have no node features 'x'; this model embeds "
                "categorical node features (atom_vocab_sizes). Featurize "
                "molecules with graphormer_sepnorm.data.featurize, or give "
                "graphs without node features one constant column, "
                "data.x = torch.zeros(data.num_nodes, 1, dtype=torch.long), "
                "and build the model with atom_vocab_sizes=[1]")
        ids, floats = split_columns(data.x, self.num_ids,
                                    self.float_channels, 'x')
        h = (self.float_projection(floats) if self.float_projection is not
             None else None)
        if self.atom_embedding is not None:
            atoms = self.atom_embedding(ids)
            h = atoms if h is None else h + atoms
        if masked_atoms is not None:
            h = torch.where(masked_atoms.view(-1, 1), mask_token.view(1, -1),
                            h)
        layout = tokens.layout
        h = h + self.in_degree_embedding(
            layout.in_degree.clamp(max=self.max_degree))
        if self.out_degree_embedding is not None:
            h = h + self.out_degree_embedding(
                layout.out_degree.clamp(max=self.max_degree))
        return tokens.pack(h, self.graph_token)

    def __repr__(self) -> str:
        vocab = self.atom_embedding and self.atom_embedding.vocab_sizes
        floats = (f', float_channels={self.float_channels}'
                  if self.float_channels else '')
        return (f'{self.__class__.__name__}({vocab or []}, {self.channels}, '
                f'max_degree={self.max_degree}, directed={self.directed}'
                f'{floats})')

