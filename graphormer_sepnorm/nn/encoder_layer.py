import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Linear, Module

from .attention import BiasedMultiheadAttention
from .dropout import Dropout
from .packed_tokens import PackedTokens


class GraphormerLayer(Module):
    r"""One Graphormer transformer block: biased self-attention and a GELU
    feed-forward network, each in a residual branch with its own
    normalization, from the `"Do Transformers Really Perform Bad for Graph
    Representation?" <https://arxiv.org/abs/2106.05234>`_ paper.

    With :obj:`pre_norm=True` (the Graphormer paper's choice) each branch
    normalizes its input, :math:`x + f(\mathrm{norm}(x))`; otherwise the sum
    is normalized, :math:`\mathrm{norm}(x + f(x))`. The two norms are
    modules with the signature :obj:`norm(x, tokens)`:
    :class:`~graphormer_sepnorm.nn.SepNorm` or
    :class:`~graphormer_sepnorm.nn.ShareNorm`.

    Args:
        channels (int): Size of each token.
        ffn_channels (int): Hidden size of the feed-forward network.
        num_heads (int): Number of attention heads.
        attention_norm (torch.nn.Module): Norm of the attention branch.
        ffn_norm (torch.nn.Module): Norm of the feed-forward branch.
        pre_norm (bool, optional): Pre-LN if :obj:`True`, post-LN otherwise.
            (default: :obj:`True`)
        dropout (float, optional): Dropout on each branch's output.
            (default: :obj:`0.0`)
        attention_dropout (float, optional): Dropout on attention weights.
            (default: :obj:`0.1`)
        activation_dropout (float, optional): Dropout after the GELU.
            (default: :obj:`0.1`)
    """
    def __init__(
        self,
        channels: int,
        ffn_channels: int,
        num_heads: int,
        attention_norm: Module,
        ffn_norm: Module,
        pre_norm: bool = True,
        dropout: float = 0.0,
        attention_dropout: float = 0.1,
        activation_dropout: float = 0.1,
    ) -> None:
        super().__init__()
        self.pre_norm = pre_norm
        self.attention = BiasedMultiheadAttention(channels, num_heads,
                                                  attention_dropout)
        self.attention_norm = attention_norm
        self.ffn_norm = ffn_norm
        self.fc1 = Linear(channels, ffn_channels)
        self.fc2 = Linear(ffn_channels, channels)
        self.dropout = Dropout(dropout)
        self.activation_dropout = Dropout(activation_dropout)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Graphormer's initialization: weights normal with standard
        deviation 0.02, biases zero, norms reset."""
        self.attention.reset_parameters()
        for linear in (self.fc1, self.fc2):
            torch.nn.init.normal_(linear.weight, std=0.02)
            torch.nn.init.zeros_(linear.bias)
        self.attention_norm.reset_parameters()
        self.ffn_norm.reset_parameters()

    def forward(self, x: Tensor, tokens: PackedTokens) -> Tensor:
        r"""Args:
            x (torch.Tensor): Packed tokens :obj:`[num_tokens, channels]`.
            tokens (PackedTokens): Their layout, with the attention bias.
        """
        x = self._residual(x, tokens, self.attention_norm,
                           lambda h: self.attention(h, tokens))
        return self._residual(x, tokens, self.ffn_norm, self._ffn)

    def _ffn(self, x: Tensor) -> Tensor:
        return self.fc2(self.activation_dropout(F.gelu(self.fc1(x))))

    def _residual(self, x: Tensor, tokens: PackedTokens, norm: Module,
                  branch) -> Tensor:
        if self.pre_norm:
            return x + self.dropout(branch(norm(x, tokens)))
        return norm(x + self.dropout(branch(x)), tokens)
