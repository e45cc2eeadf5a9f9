"""Biased multi-head attention: the CPU path computes what PyTorch's
scaled_dot_product_attention computes."""
import math

import torch

from graphormer_sepnorm.nn import BiasedMultiheadAttention


def test_cpu_training_attention_matches_sdpa():
    """The CPU training path of the attention (used for speed when dropout is
    on) computes scaled_dot_product_attention's maths."""
    torch.manual_seed(0)
    attention = BiasedMultiheadAttention(16, 4, dropout=0.0).double()
    x = torch.randn(3, 7, 16, dtype=torch.float64)
    bias = torch.randn(3, 4, 7, 7, dtype=torch.float64)
    bias[:, :, :, 5:] = -math.inf  # Padded keys.
    q, k, v = attention.qkv(x).view(3, 7, 3, 4, 4).permute(2, 0, 3, 1,
                                                            4).unbind(0)
    expected = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=bias)
    got = attention._cpu_attention_with_dropout(q, k, v, bias)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
