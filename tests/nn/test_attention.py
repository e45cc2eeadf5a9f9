"""Biased multi-head attention: the CPU path computes what PyTorch's
scaled_dot_product_attention computes."""
import math

import pytest
import torch

from graphormer_sepnorm.nn import BiasedMultiheadAttention


def test_cpu_attention_matches_sdpa():
    """The CPU path of the attention (used for speed on short sequences and
    when dropout is on) computes scaled_dot_product_attention's maths."""
    torch.manual_seed(0)
    attention = BiasedMultiheadAttention(16, 4, dropout=0.0).double()
    x = torch.randn(3, 7, 16, dtype=torch.float64)
    bias = torch.randn(3, 4, 7, 7, dtype=torch.float64)
    bias[:, :, :, 5:] = -math.inf  # Padded keys.
    q, k, v = attention.qkv(x).view(3, 7, 3, 4, 4).permute(2, 0, 3, 1,
                                                            4).unbind(0)
    expected = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=bias)
    got = attention._cpu_attention(q, k, v, bias)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('length', [7, 64, 65, 100])
def test_eval_forward_equals_sdpa_on_either_side_of_the_cutoff(
        length, monkeypatch):
    """Evaluation takes the unfused path up to 64 tokens and PyTorch's fused
    kernel beyond; both give scaled_dot_product_attention's result."""
    torch.manual_seed(1)
    attention = BiasedMultiheadAttention(16, 4, dropout=0.1).eval()
    x = torch.randn(5, length, 16)
    bias = torch.randn(5, 4, length, length)
    bias[:2, :, :, length - 3:] = -math.inf  # Padded keys.
    used = []
    real = attention._cpu_attention

    def recording(*args):
        used.append(True)
        return real(*args)

    monkeypatch.setattr(attention, '_cpu_attention', recording)
    q, k, v = attention.qkv(x).view(5, length, 3, 4, 4).permute(
        2, 0, 3, 1, 4).unbind(0)
    expected = attention.out(torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=bias).transpose(1, 2).reshape(5, length, 16))
    with torch.no_grad():
        got = attention(x, bias)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    assert bool(used) == (length <= 64)
