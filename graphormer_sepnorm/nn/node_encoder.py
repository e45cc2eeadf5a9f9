from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import torch
from torch import Tensor
from torch.nn import Embedding, Module, Parameter

from .categorical_embedding import CategoricalEmbedding

if TYPE_CHECKING:  # pragma: no cover
    from torch_geometric.data import Data


class GraphormerNodeEncoder(Module):
    r"""The input token sequence of Graphormer, from the `"Do Transformers
    Really Perform Bad for Graph Representation?"
    <https://arxiv.org/abs/2106.05234>`_ paper: a learned graph token followed
    by one token per node, padded to the largest graph of the batch.

    A node token is the sum of its atom-feature embeddings and of the
    **centrality encoding**, an embedding of its degree. Degrees above
    :obj:`max_degree` share its embedding.

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
    """
    def __init__(self, atom_vocab_sizes: Sequence[int], channels: int,
                 max_degree: int = 64, directed: bool = False) -> None:
        super().__init__()
        self.channels = channels
        self.max_degree = max_degree
        self.directed = directed
        self.atom_embedding = CategoricalEmbedding(atom_vocab_sizes, channels,
                                                   reduce='sum', name='x')
        self.in_degree_embedding = Embedding(max_degree + 1, channels)
        self.out_degree_embedding = (Embedding(max_degree + 1, channels)
                                     if directed else None)
        self.graph_token = Parameter(torch.empty(channels))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Graphormer's initialization: normal with standard deviation 0.02."""
        self.atom_embedding.reset_parameters()
        for table in (self.in_degree_embedding, self.out_degree_embedding):
            if table is not None:
                torch.nn.init.normal_(table.weight, std=0.02)
        torch.nn.init.normal_(self.graph_token, std=0.02)

    def forward(self, data: Data, batch_size: int,
                masked_atoms: Optional[Tensor] = None,
                mask_token: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
        r"""Returns the tokens :obj:`[batch_size, 1 + N, channels]` (graph
        token first) and the real-node mask :obj:`[batch_size, N]`.

        For masked-atom pretraining, the atom-feature embeddings of the nodes
        where the boolean :obj:`masked_atoms` :obj:`[num_nodes]` is set are
        replaced by :obj:`mask_token` :obj:`[channels]` (their degree, the
        graph structure, is still encoded)."""
        if getattr(data, 'x', None) is None:
            raise ValueError("The graphs have no node features 'x'; this "
                             "model embeds categorical atom features")
        num_nodes = data.x.size(0)
        h = self.atom_embedding(data.x)
        if masked_atoms is not None:
            h = torch.where(masked_atoms.view(-1, 1), mask_token.view(1, -1),
                            h)
        src, dst = data.edge_index
        in_degree = _degree(dst, num_nodes)
        h = h + self.in_degree_embedding(in_degree.clamp(max=self.max_degree))
        if self.out_degree_embedding is not None:
            out_degree = _degree(src, num_nodes)
            h = h + self.out_degree_embedding(
                out_degree.clamp(max=self.max_degree))
        batch = getattr(data, 'batch', None)
        nodes, node_mask = _dense_nodes(h, batch, batch_size)
        graph_token = self.graph_token.view(1, 1, -1).expand(
            batch_size, 1, -1)
        return torch.cat([graph_token, nodes], dim=1), node_mask

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}('
                f'{self.atom_embedding.vocab_sizes}, {self.channels}, '
                f'max_degree={self.max_degree}, directed={self.directed})')


# torch_geometric.utils.degree and to_dense_batch, written with two torch
# operations each so that the model imports without PyG: importing PyG takes
# longer (2-3 s) than all the rest of a one-molecule prediction. Tested equal
# to PyG's functions.


def _degree(index: Tensor, num_nodes: int) -> Tensor:
    r"""How often each node appears in :obj:`index` (int64)."""
    return torch.bincount(index, minlength=num_nodes)


def _dense_nodes(h: Tensor, batch: Optional[Tensor],
                 batch_size: int) -> tuple[Tensor, Tensor]:
    r"""Node features :obj:`[num_nodes, C]` of graphs stored one after the
    other (as in PyG batches) as :obj:`[batch_size, N, C]`, zero-padded to
    the largest graph, and the real-node mask :obj:`[batch_size, N]`."""
    if batch is None:
        return h.unsqueeze(0), h.new_ones(1, h.size(0), dtype=torch.bool)
    counts = torch.bincount(batch, minlength=batch_size)
    largest = int(counts.max()) if batch_size else 0
    first = counts.cumsum(0) - counts  # Index of each graph's first node.
    position = torch.arange(batch.numel(), device=h.device) - first[batch]
    nodes = h.new_zeros(batch_size, largest, h.size(-1))
    nodes[batch, position] = h
    mask = torch.zeros(batch_size, largest, dtype=torch.bool,
                       device=h.device)
    mask[batch, position] = True
    return nodes, mask
