r"""Molecule-level features in the graph token: a per-graph float vector
(:obj:`data.graph_features`, :obj:`[num_graphs, in_channels]` after
batching) projected by a linear layer and added to each graph's graph-token
embedding, the token that SepNorm normalizes apart from the atoms and that
the prediction head reads."""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import Tensor
from torch.nn import Linear, Module

from .packed_tokens import PackedTokens

if TYPE_CHECKING:  # pragma: no cover
    from torch_geometric.data import Data

__all__ = ['GraphFeatureEncoder']


class GraphFeatureEncoder(Module):
    r"""Adds :obj:`Linear(data.graph_features)` to the graph tokens of a
    packed token sequence.

    Args:
        in_channels (int): Length of each graph's feature vector.
        channels (int): Size of each token.
    """
    def __init__(self, in_channels: int, channels: int) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.projection = Linear(in_channels, channels)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Graphormer's initialization: weight normal with standard
        deviation 0.02, bias zero."""
        torch.nn.init.normal_(self.projection.weight, std=0.02)
        torch.nn.init.zeros_(self.projection.bias)

    def forward(self, data: Data, tokens: PackedTokens, x: Tensor) -> Tensor:
        r"""Returns :obj:`x` (packed tokens :obj:`[num_tokens, channels]`)
        with the projected features added at each graph's graph token.

        Raises:
            ValueError: The batch has no :obj:`graph_features`, or not one
                row of :obj:`in_channels` values per graph.
        """
        features = getattr(data, 'graph_features', None)
        if features is None:
            raise ValueError(
                f"This model adds {self.in_channels} molecule features per "
                f"graph to the graph token (model.graph_feature_channels="
                f"{self.in_channels}) but the batch has no 'graph_features'; "
                f"train and predict with the data.molecule_features and "
                f"data.feature_columns the model was trained with (the "
                f"Predictor computes them from the model card)")
        if features.dim() != 2 or tuple(features.shape) != (
                tokens.num_graphs, self.in_channels):
            raise ValueError(
                f"'graph_features' has shape {tuple(features.shape)} but "
                f"this model expects [{tokens.num_graphs} graphs, "
                f"{self.in_channels}] (model.graph_feature_channels="
                f"{self.in_channels}); compute the features with the "
                f"settings the model was trained with, one row per graph")
        h = self.projection(features.to(x.dtype))
        return x.index_add(0, tokens.graph_index, h)

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.in_channels}, '
                f'{self.projection.out_features})')
