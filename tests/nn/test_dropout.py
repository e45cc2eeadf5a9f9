"""Dropout drawn from torch.rand: the distribution of torch.nn.Dropout."""
import torch

from graphormer_sepnorm.nn import Dropout


def test_drops_the_right_fraction_and_rescales():
    torch.manual_seed(0)
    x = torch.ones(1_000_000)
    out = Dropout(0.1).train()(x)
    dropped = (out == 0).float().mean()
    # 1e6 Bernoulli(0.1) draws: standard error 3e-4.
    assert abs(dropped - 0.1) < 2e-3
    kept = out[out != 0]
    torch.testing.assert_close(kept, torch.full_like(kept, 1 / 0.9))
    assert abs(out.mean() - 1.0) < 3e-3


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
