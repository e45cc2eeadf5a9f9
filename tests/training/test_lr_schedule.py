"""Graphormer's warmup + polynomial decay and its weights_only-safe state."""
import io

import pytest
import torch

from graphormer_sepnorm.training.lr_schedule import (
    PolynomialDecayWithWarmup, polynomial_decay_scheduler)


def test_warmup_then_linear_decay_to_end_lr():
    f = PolynomialDecayWithWarmup(warmup_steps=10, total_steps=110,
                                  peak_lr=2e-4, end_lr=1e-9, power=1.0)
    assert f(0) == pytest.approx(0.1)  # first update: lr / warmup * 1
    assert f(9) == pytest.approx(1.0)
    assert f(10) == pytest.approx(1.0)
    assert f(60) * 2e-4 == pytest.approx((2e-4 - 1e-9) * 0.5 + 1e-9)
    assert f(110) * 2e-4 == pytest.approx(1e-9)
    assert f(10_000) * 2e-4 == pytest.approx(1e-9)
    squared = PolynomialDecayWithWarmup(0, 100, 1.0, 0.0, power=2.0)
    assert squared(50) == pytest.approx(0.25)


def test_scheduler_state_loads_with_weights_only():
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([param], lr=1e-3)
    scheduler = polynomial_decay_scheduler(optimizer, 4, 20)
    lrs = []
    for _ in range(8):
        optimizer.step()
        scheduler.step()
        lrs.append(optimizer.param_groups[0]['lr'])
    assert max(lrs) == pytest.approx(1e-3)
    buffer = io.BytesIO()
    torch.save(scheduler.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    fresh = polynomial_decay_scheduler(
        torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1e-3), 1,
        2)
    fresh.load_state_dict(state)
    assert fresh.lr_lambdas[0].total_steps == 20
