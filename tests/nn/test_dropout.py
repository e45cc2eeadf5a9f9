"""Dropout drawn from 32 random bits per element: the distribution of
torch.nn.Dropout."""
import pytest
import torch

from graphormer_sepnorm.nn import Dropout
from graphormer_sepnorm.nn.dropout import random_int32


@pytest.mark.parametrize('p', [0.1, 0.5, 0.97])
def test_drops_the_right_fraction_and_rescales(p):
    torch.manual_seed(0)
    x = torch.ones(1_000_001)  # Odd: half a 64-bit draw is left over.
    out = Dropout(p).train()(x)
    dropped = (out == 0).double().mean()
    # 1e6 Bernoulli(p) draws: standard error at most 5e-4.
    assert abs(dropped - p) < 2.5e-3
    kept = out[out != 0]
    torch.testing.assert_close(kept, torch.full_like(kept, 1 / (1 - p)))


def test_random_bits_are_uniform_over_int32():
    torch.manual_seed(0)
    bits = random_int32(torch.Size([1000, 1000])).double()
    # Uniform on [-2**31, 2**31): mean -0.5, standard deviation 2**32 /
    # sqrt(12), and the sign bit of both halves of each 64-bit draw fair
    # (a draw from [0, 2**63) would leave every high half non-negative).
    assert abs(bits.mean() / 2**32) < 2e-3
    assert abs(bits.std() / 2**32 - 12**-0.5) < 2e-3
    low, high = bits.view(-1)[0::2], bits.view(-1)[1::2]
    for half in (low, high):
        assert abs((half < 0).double().mean() - 0.5) < 3e-3
    assert abs((bits % 2**16).mean() / 2**16 - 0.5) < 2e-3
    assert abs(torch.corrcoef(torch.stack([low, high]))[0, 1]) < 5e-3


def test_gradient_follows_the_mask():
    torch.manual_seed(0)
    x = torch.randn(1000, requires_grad=True)
    out = Dropout(0.3).train()(x)
    out.sum().backward()
    torch.testing.assert_close(x.grad, (out != 0).float() / 0.7)


def test_identity_in_eval_mode_and_at_zero():
    x = torch.randn(100)
    assert torch.equal(Dropout(0.5).eval()(x), x)
    assert torch.equal(Dropout(0.0).train()(x), x)
    assert torch.equal(Dropout(1.0).train()(x), torch.zeros_like(x))
