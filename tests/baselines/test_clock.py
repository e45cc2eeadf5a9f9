"""CpuBudgetClock: CPU time counted in fit, the budget stops at an epoch end
before overrunning (or mid-epoch once spent), and the count survives a
resume. The training steps burn known CPU time (0.1 s per batch of a
3-batch epoch), so the stopping epochs follow by hand."""
import pytest
from lightning.pytorch.callbacks import ModelCheckpoint

from benchmarks.baselines.clock import CpuBudgetClock
from lightning_helpers import BurningRegression, fit

BURN_S = 0.1  # CPU seconds per training batch; 3 batches per epoch


def test_counts_cpu_time_of_fit():
    clock = CpuBudgetClock()
    trainer = fit(BurningRegression(BURN_S), [clock], max_epochs=2)
    assert trainer.current_epoch == 2 and not clock.stopped_by_budget
    # 6 burnt batches, plus a little Lightning overhead.
    assert 6 * BURN_S <= clock.cpu_time_s < 6 * BURN_S + 0.5
    assert clock.wall_time_s >= clock.cpu_time_s * 0.9
    assert 3 * BURN_S <= clock.longest_epoch_cpu_s < 3 * BURN_S + 0.3


def test_budget_stops_before_an_epoch_that_would_overrun():
    # Epochs take ~0.3 s. Budget 1.05 s: after epoch 2 (~0.6 s) another
    # fits; after epoch 3 (>= 0.9 s, longest >= 0.3 s) it would not.
    clock = CpuBudgetClock(max_cpu_minutes=1.05 / 60)
    trainer = fit(BurningRegression(BURN_S), [clock], max_epochs=10)
    assert clock.stopped_by_budget
    assert trainer.global_step == 9  # 3 whole epochs, none cut short
    assert clock.cpu_time_s <= 1.05


def test_budget_spent_mid_epoch_stops_after_that_batch():
    # Budget 0.25 s: spent during the third batch (>= 0.3 s after it).
    clock = CpuBudgetClock(max_cpu_minutes=0.25 / 60)
    trainer = fit(BurningRegression(BURN_S), [clock], max_epochs=10)
    assert clock.stopped_by_budget
    assert trainer.global_step == 3


def test_last_epoch_is_not_a_budget_stop():
    clock = CpuBudgetClock(max_cpu_minutes=0.5 / 60)
    fit(BurningRegression(BURN_S), [clock], max_epochs=1)
    assert not clock.stopped_by_budget


def test_resume_continues_the_count(tmp_path):
    first = CpuBudgetClock()
    fit(BurningRegression(BURN_S), [first, ModelCheckpoint(
        dirpath=tmp_path, save_last=True)], max_epochs=1)
    assert first.cpu_time_s >= 3 * BURN_S
    resumed = CpuBudgetClock()
    fit(BurningRegression(BURN_S), [resumed], max_epochs=2,
        ckpt_path=str(tmp_path / 'last.ckpt'))
    # The checkpoint's count (epoch 1) plus epoch 2: all 6 burnt batches.
    assert 6 * BURN_S <= resumed.cpu_time_s < first.cpu_time_s + 0.8
    assert resumed.longest_epoch_cpu_s >= 3 * BURN_S


def test_rejects_a_budget_that_is_not_positive():
    with pytest.raises(ValueError, match='positive minutes'):
        CpuBudgetClock(max_cpu_minutes=0)
