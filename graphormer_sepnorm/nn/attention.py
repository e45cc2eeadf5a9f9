from typing import Union

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Linear, Module

from .dropout import Dropout
from .packed_tokens import PackedTokens

# Longest sequence for which the CPU takes the unfused attention (measured
# faster up to about 70 tokens; see BiasedMultiheadAttention).
_CPU_UNFUSED_MAX_LENGTH = 64


def _unfused_is_faster(qkv: Tensor, length: int, dropout: bool) -> bool:
    r"""On the CPU, short sequences and attention dropout run faster
    unfused (see :class:`BiasedMultiheadAttention`)."""
    return qkv.device.type == 'cpu' and (length <= _CPU_UNFUSED_MAX_LENGTH
                                         or dropout)


class BiasedMultiheadAttention(Module):
    r"""Multi-head self-attention with an additive per-head bias, as Graphormer
    uses it: :math:`\mathrm{softmax}(QK^\top / \sqrt{d} + B)\,V`.

    The bias (with :obj:`-inf` for keys to ignore) goes to
    :func:`torch.nn.functional.scaled_dot_product_attention` as a float mask,
    so PyTorch picks its fastest kernel that supports one. On CPU, sequences
    of up to :obj:`64` tokens (most molecules) and training with attention
    dropout take the same maths as one :func:`torch.baddbmm`, a softmax and
    one :func:`torch.bmm` instead: PyTorch's fused CPU kernel runs about twice
    slower there (e.g. 5.0 vs 3.0 ms for 128 graphs of 26 tokens, 8 heads of
    10 channels, on one thread), and falls back to an unfused path with
    dropout anyway; it is three times faster at 100 tokens.

    Args:
        channels (int): Size of each token.
        num_heads (int): Number of heads; must divide :obj:`channels`.
        dropout (float, optional): Dropout on the attention weights.
            (default: :obj:`0.0`)
    """
    def __init__(self, channels: int, num_heads: int,
                 dropout: float = 0.0) -> None:
        super().__init__()
        if channels % num_heads != 0:
            raise ValueError(f"channels ({channels}) must be divisible by "
                             f"num_heads ({num_heads})")
        self.channels = channels
        self.num_heads = num_heads
        self.dropout = dropout
        self.attention_dropout = Dropout(dropout)
        self.qkv = Linear(channels, 3 * channels)
        self.out = Linear(channels, channels)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Graphormer's initialization: weights normal with standard
        deviation 0.02, biases zero."""
        for linear in (self.qkv, self.out):
            torch.nn.init.normal_(linear.weight, std=0.02)
            torch.nn.init.zeros_(linear.bias)

    def forward(self, x: Tensor, bias: Union[Tensor, PackedTokens]) -> Tensor:
        r"""Args:
            x (torch.Tensor): Tokens, padded :obj:`[batch_size, length,
                channels]` or packed :obj:`[num_tokens, channels]`.
            bias (torch.Tensor or PackedTokens): For padded tokens the bias
                :obj:`[batch_size, heads, length, length]`; for packed tokens
                their :class:`~graphormer_sepnorm.nn.PackedTokens`, which
                holds the bias of every bucket.
        """
        if isinstance(bias, Tensor):
            return self.out(self._attend(self.qkv(x), bias))
        return self.out(bias.attend(self._attend, self.qkv(x)))

    def _attend(self, qkv: Tensor, bias: Tensor) -> Tensor:
        batch_size, length, _ = qkv.shape
        qkv = qkv.reshape(batch_size, length, 3, self.num_heads, -1)
        query, key, value = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        bias = bias.to(query.dtype)
        if _unfused_is_faster(qkv, length, self.training and self.dropout > 0):
            out = self._cpu_attention(query, key, value, bias)
        else:
            out = F.scaled_dot_product_attention(
                query, key, value, attn_mask=bias,
                dropout_p=self.dropout if self.training else 0.0)
        return out.transpose(1, 2).reshape(batch_size, length, self.channels)

    def _cpu_attention(self, query: Tensor, key: Tensor, value: Tensor,
                       bias: Tensor) -> Tensor:
        # The same maths as scaled_dot_product_attention: one baddbmm adds
        # the bias and scales in the matrix product, and the softmax needs no
        # fully-masked-row guard (the graph token is never masked).
        batch_size, heads, length, head_dim = query.shape
        flat = batch_size * heads
        scores = torch.baddbmm(
            bias.reshape(flat, length, length),
            query.reshape(flat, length, head_dim),
            key.reshape(flat, length, head_dim).transpose(1, 2),
            alpha=head_dim**-0.5)
        weights = self.attention_dropout(scores.softmax(dim=-1))
        out = torch.bmm(weights, value.reshape(flat, length, head_dim))
        return out.view(batch_size, heads, length, head_dim)

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.channels}, '
                f'heads={self.num_heads})')
