from typing import Literal, Union

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor
from torch.nn import BatchNorm1d, LayerNorm, Module
from torch.nn.modules.batchnorm import _BatchNorm

from .packed_tokens import PackedTokens

NormKind = Literal['batch', 'layer']


class SepNorm(Module):
    r"""Separate normalization of the graph token and the node tokens, from the
    `"On Separate Normalization in Self-supervised Transformers"
    <https://arxiv.org/abs/2309.12931>`_ paper (Chen et al., NeurIPS 2023).

    The input is a padded token sequence :obj:`[batch_size, 1 + max_nodes,
    channels]` whose token :obj:`0` is the graph token of each graph (or the
    same sequences packed, see :class:`~graphormer_sepnorm.nn.PackedTokens`).
    The graph tokens and the node tokens are normalized by two different
    layers:

    * :obj:`"batch"`: :class:`torch.nn.BatchNorm1d` statistics over the
      tokens of the batch (for node tokens, over the real nodes only: padding
      never enters a mean or a variance);
    * :obj:`"layer"`: :class:`torch.nn.LayerNorm` over the channels of each
      token.

    With :obj:`graph_token_norm="batch"` a training batch of a single graph
    has no batch statistics to use; the graph token is then normalized with
    the running statistics, which stay untouched (as in evaluation). The
    graph-token :class:`~torch.nn.BatchNorm1d` is a plain submodule, so
    :meth:`torch.nn.SyncBatchNorm.convert_sync_batchnorm` turns it into
    synchronized statistics for multi-GPU training.

    Args:
        channels (int): Size of each token.
        graph_token_norm (str, optional): :obj:`"batch"` or :obj:`"layer"`.
            (default: :obj:`"batch"`)
        node_token_norm (str, optional): :obj:`"layer"` or :obj:`"batch"`.
            (default: :obj:`"layer"`)
        eps (float, optional): Added to the variance of both norms.
            (default: :obj:`1e-5`)
        momentum (float, optional): Running-statistics momentum of the batch
            norms. (default: :obj:`0.1`)
    """
    def __init__(
        self,
        channels: int,
        graph_token_norm: NormKind = 'batch',
        node_token_norm: NormKind = 'layer',
        eps: float = 1e-5,
        momentum: float = 0.1,
    ) -> None:
        super().__init__()
        self.channels = channels
        self.graph_token_norm = graph_token_norm
        self.node_token_norm = node_token_norm
        self.graph_norm = _make_norm(graph_token_norm, channels, eps, momentum,
                                     'graph_token_norm')
        self.node_norm = _make_norm(node_token_norm, channels, eps, momentum,
                                    'node_token_norm')

    def reset_parameters(self) -> None:
        r"""Resets all learnable parameters and running statistics."""
        for norm in (self.graph_norm, self.node_norm):
            if isinstance(norm, _BatchNorm):
                norm.reset_running_stats()
            norm.reset_parameters()

    def forward(self, x: Tensor,
                tokens: Union[Tensor, PackedTokens]) -> Tensor:
        r"""Normalizes a batch of token sequences.

        Args:
            x (torch.Tensor): Padded tokens :obj:`[batch_size, 1 + max_nodes,
                channels]` (graph token first), or packed tokens
                :obj:`[num_tokens, channels]`.
            tokens (torch.Tensor or PackedTokens): For padded tokens the node
                mask :obj:`[batch_size, max_nodes]` (true for real nodes,
                false for padding); for packed tokens their
                :class:`~graphormer_sepnorm.nn.PackedTokens`.
        """
        if isinstance(tokens, Tensor):
            packed = PackedTokens.from_node_mask(tokens)  # The padded layout.
            return self(x.flatten(0, 1), packed).view_as(x)
        graph_tokens = self._normalize_graph_tokens(x[tokens.graph_index])
        # _BatchNorm also covers SyncBatchNorm (no BatchNorm1d subclass).
        if isinstance(self.node_norm, _BatchNorm):
            out = torch.zeros_like(x)
            out[tokens.node_index] = self.node_norm(x[tokens.node_index])
        else:
            out = self.node_norm(x)
        # In place: no copy of every token to swap the graph tokens in (the
        # layer norm's backward does not need its output).
        out[tokens.graph_index] = graph_tokens
        return out

    def _normalize_graph_tokens(self, tokens: Tensor) -> Tensor:
        norm = self.graph_norm
        if (isinstance(norm, _BatchNorm) and norm.training
                and tokens.size(0) == 1 and norm.running_mean is not None
                and not _data_parallel()):
            # One graph has no batch variance: normalize as in evaluation.
            # (Data-parallel norms take statistics over every process.)
            return F.batch_norm(tokens, norm.running_mean, norm.running_var,
                                norm.weight, norm.bias, False, 0.0, norm.eps)
        return norm(tokens)

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.channels}, '
                f'graph_token_norm={self.graph_token_norm!r}, '
                f'node_token_norm={self.node_token_norm!r})')


class ShareNorm(Module):
    r"""One :class:`torch.nn.LayerNorm` for every token, graph token included:
    the usual transformer normalization and the baseline of the SepNorm paper.
    It takes the same arguments as :class:`SepNorm` so the two are
    interchangeable.

    Args:
        channels (int): Size of each token.
        eps (float, optional): Added to the variance. (default: :obj:`1e-5`)
    """
    def __init__(self, channels: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.channels = channels
        self.norm = LayerNorm(channels, eps=eps)

    def reset_parameters(self) -> None:
        r"""Resets all learnable parameters."""
        self.norm.reset_parameters()

    def forward(self, x: Tensor,
                tokens: Union[Tensor, PackedTokens]) -> Tensor:
        r"""Normalizes every token of :obj:`x` on its own; :obj:`tokens` (as
        for :class:`SepNorm`) is accepted for interface parity."""
        return self.norm(x)

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}({self.channels})'


def _data_parallel() -> bool:
    return (dist.is_available() and dist.is_initialized()
            and dist.get_world_size() > 1)


def _make_norm(kind: str, channels: int, eps: float, momentum: float,
               name: str) -> Module:
    if kind == 'batch':
        return BatchNorm1d(channels, eps=eps, momentum=momentum)
    if kind == 'layer':
        return LayerNorm(channels, eps=eps)
    raise ValueError(f"{name} must be 'batch' or 'layer', got {kind!r}")
