"""EpochHistory: one row per validation with the batch-size-weighted mean
training loss, the scaled validation metric, the learning rate and the
clock; rows survive a resume."""
import csv
import math

import torch
from lightning.pytorch.callbacks import ModelCheckpoint

from benchmarks.baselines.clock import CpuBudgetClock
from benchmarks.baselines.history import EpochHistory, history_columns
from lightning_helpers import BurningRegression, fit, loaders


def _val_mae(module) -> float:
    _, val = loaders()
    x, y = val.dataset.tensors
    with torch.no_grad():
        return float((module.linear(x)[:, 0] - y).abs().mean())


def test_rows_hold_the_epoch_loss_metric_lr_and_clock(tmp_path):
    clock = CpuBudgetClock()
    history = EpochHistory(clock, 'mae', 'val/mae', scale=2.0,
                           metrics_file=tmp_path / 'metrics.csv')
    module = BurningRegression()
    trainer = fit(module, [clock, history], max_epochs=2)
    assert [r['epoch'] for r in history.rows] == [0, 1]
    assert [r['step'] for r in history.rows] == [3, 6]
    # Batches of 4, 4 and 2 points: the mean weighs them so.
    for epoch, row in enumerate(history.rows):
        losses = module.losses[3 * epoch:3 * epoch + 3]
        expected = sum(l * n for l, n in losses) / sum(n for _, n in losses)
        assert math.isclose(row['train_loss'], expected, rel_tol=1e-9)
        assert row['lr'] == 0.05
    # The last row's metric: the logged val MAE of the final weights, x2.
    assert math.isclose(history.rows[-1]['val_mae'], 2 * _val_mae(module),
                        rel_tol=1e-6)
    assert history.rows[0]['cpu_time_s'] < history.rows[1]['cpu_time_s'] \
        <= clock.cpu_time_s
    assert list(history.rows[0]) == history_columns('mae')
    assert trainer.global_step == 6
    with open(tmp_path / 'metrics.csv', newline='') as f:
        written = list(csv.DictReader(f))
    assert [{k: float(v) for k, v in r.items()} for r in written] == \
        history.rows


def test_best_row_is_the_first_best():
    history = EpochHistory(CpuBudgetClock(), 'rocauc', 'val/roc')
    history.rows = [{'epoch': e, 'val_rocauc': v}
                    for e, v in enumerate([0.6, 0.8, math.nan, 0.8, 0.7])]
    assert history.best_row(higher_is_better=True)['epoch'] == 1
    assert history.best_row(higher_is_better=False)['epoch'] == 0
    history.rows = []
    assert history.best_row(higher_is_better=True) is None


def test_rows_survive_a_resume(tmp_path):
    clock = CpuBudgetClock()
    first = EpochHistory(clock, 'mae', 'val/mae')
    fit(BurningRegression(), [clock, first,
                              ModelCheckpoint(dirpath=tmp_path,
                                              save_last=True)], max_epochs=2)
    clock = CpuBudgetClock()
    resumed = EpochHistory(clock, 'mae', 'val/mae')
    fit(BurningRegression(), [clock, resumed], max_epochs=3,
        ckpt_path=str(tmp_path / 'last.ckpt'))
    assert [r['epoch'] for r in resumed.rows] == [0, 1, 2]
    assert resumed.rows[:2] == first.rows
