"""Metrics per target and averaged, missing labels masked: checked against
hand computations (pair counting for ROC-AUC, precision at each positive
for average precision) and OGB's Evaluator. torchmetrics returns the AUCs
in float32: they agree to 1e-6."""
import math

import numpy as np
import pytest
import torch

from graphormer_sepnorm.training.metrics import (compute_metric,
                                                 compute_metrics,
                                                 metric_keys)


def _hand_regression(pred, y):
    err = pred - y
    total = ((y - y.mean())**2).sum()
    return {'mae': np.abs(err).mean(), 'rmse': np.sqrt((err**2).mean()),
            'r2': 1 - (err**2).sum() / total}


def _hand_rocauc(score, label):
    # P(score of a positive > score of a negative), ties count one half
    pos, neg = score[label == 1], score[label == 0]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (
        pos[:, None] == neg[None, :]).sum()
    return wins / (len(pos) * len(neg))


def _hand_average_precision(score, label):
    # Mean over positives of the precision among scores >= theirs
    return np.mean([(label[score >= s] == 1).mean()
                    for s in score[label == 1]])


def test_regression_per_target_and_average_with_missing_labels():
    rng = np.random.default_rng(0)
    y = rng.normal(size=(50, 2)) * [1.0, 10.0] + [0.0, 5.0]
    pred = y + rng.normal(size=(50, 2)) * [0.5, 2.0]
    y[rng.random((50, 2)) < 0.3] = np.nan  # missing labels
    values = compute_metrics('regression', torch.tensor(pred),
                             torch.tensor(y), ['a', 'b'])
    assert list(values) == metric_keys('regression', ['a', 'b'])
    hand = [_hand_regression(pred[~np.isnan(y[:, k]), k],
                             y[~np.isnan(y[:, k]), k]) for k in range(2)]
    for metric in ('mae', 'rmse', 'r2'):
        for k, name in enumerate('ab'):
            assert values[f'{metric}_{name}'] == pytest.approx(
                hand[k][metric], rel=1e-12)
        assert values[metric] == pytest.approx(
            (hand[0][metric] + hand[1][metric]) / 2, rel=1e-12)


NAN = math.nan
# Two targets on very different scales, like logP (~1) and TPSA (~60); the
# first one's label is missing on the last row
SCALES_Y = [[1.0, 60.0], [2.0, 80.0], [3.0, 40.0], [NAN, 100.0]]
SCALES_PRED = [[1.5, 70.0], [2.0, 60.0], [2.0, 40.0], [0.0, 90.0]]
SCALES_STD = [0.5, 20.0]  # of the training labels


def test_standardized_errors_of_targets_on_different_scales():
    values = compute_metrics('regression', torch.tensor(SCALES_PRED),
                             torch.tensor(SCALES_Y), ['logp', 'tpsa'],
                             target_std=SCALES_STD)
    # By hand: logP errors 0.5, 0, 1 (MAE 0.5); TPSA errors 10, 20, 0, 10
    # (MAE 10)
    assert values['mae_logp'] == 0.5 and values['mae_tpsa'] == 10.0
    assert values['mae'] == pytest.approx((0.5 + 10.0) / 2)  # raw: 5.25
    # Each MAE over its target's std, averaged: (0.5/0.5 + 10/20) / 2
    assert values['std_mae'] == pytest.approx(0.75, rel=1e-12)
    rmse = [math.sqrt((0.25 + 0 + 1) / 3), math.sqrt((100 + 400 + 0 + 100) / 4)]
    assert values['rmse'] == pytest.approx(sum(rmse) / 2, rel=1e-12)
    assert values['std_rmse'] == pytest.approx(
        (rmse[0] / 0.5 + rmse[1] / 20.0) / 2, rel=1e-12)
    assert list(values) == metric_keys('regression', ['logp', 'tpsa'])
    # Without statistics the scale is 1: the raw average
    raw = compute_metrics('regression', torch.tensor(SCALES_PRED),
                          torch.tensor(SCALES_Y), ['logp', 'tpsa'])
    assert raw['std_mae'] == raw['mae']
    with pytest.raises(ValueError, match='target_std has 1 values for 2 '
                       'targets'):
        compute_metrics('regression', torch.tensor(SCALES_PRED),
                        torch.tensor(SCALES_Y), ['logp', 'tpsa'],
                        target_std=[1.0])


def test_one_target_and_binary_keys_are_unchanged():
    assert metric_keys('regression') == ['mae', 'rmse', 'r2']
    assert metric_keys('regression', ['logS']) == ['mae', 'rmse', 'r2']
    assert metric_keys('binary', ['p', 'q']) == [
        'rocauc', 'prauc', 'rocauc_p', 'rocauc_q', 'prauc_p', 'prauc_q']
    one = compute_metrics('regression', torch.tensor([[1.0], [2.0]]),
                          torch.tensor([[2.0], [4.0]]), ['logS'],
                          target_std=[2.0])
    assert one == {'mae': 1.5, 'rmse': pytest.approx(math.sqrt(2.5)),
                   'r2': 1 - 5 / 2}  # SS_res 1+4, SS_tot 1+1
    with pytest.raises(ValueError, match="'std_mae' is not a metric of one "
                       "target"):
        compute_metric('std_mae', torch.ones(2), torch.ones(2))


def test_binary_per_target_against_hand_computation():
    rng = np.random.default_rng(1)
    label = (rng.random((80, 2)) < 0.3).astype(float)
    logits = rng.normal(size=(80, 2)) + 1.5 * label
    logits[:10, 0] = 0.25  # ties across classes
    label[rng.random((80, 2)) < 0.2] = np.nan
    values = compute_metrics('binary', torch.tensor(logits),
                             torch.tensor(label), ['p', 'q'])
    for k, name in enumerate('pq'):
        keep = ~np.isnan(label[:, k])
        score, truth = logits[keep, k], label[keep, k]
        assert values[f'rocauc_{name}'] == pytest.approx(
            _hand_rocauc(score, truth), rel=1e-6)
        assert values[f'prauc_{name}'] == pytest.approx(
            _hand_average_precision(score, truth), rel=1e-6)
    assert values['rocauc'] == pytest.approx(
        (values['rocauc_p'] + values['rocauc_q']) / 2)


def test_rocauc_equals_ogb_evaluator():
    from ogb.graphproppred import Evaluator
    rng = np.random.default_rng(2)
    label = (rng.random((300, 1)) < 0.1).astype(float)
    logits = rng.normal(size=(300, 1)) + label
    ours = compute_metrics('binary', torch.tensor(logits),
                           torch.tensor(label))['rocauc']
    ogb = Evaluator('ogbg-molhiv').eval({'y_true': label, 'y_pred': logits})
    assert ours == pytest.approx(ogb['rocauc'], rel=1e-6)


def test_one_class_or_no_label_is_nan_with_a_warning_and_skipped():
    logits = torch.tensor([[0.1, 0.3], [0.9, -1.0], [0.4, 2.0], [0.2, 0.0]])
    label = torch.tensor([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    label[:, 1] = 0.0  # target 'q' has one class only
    with pytest.warns(RuntimeWarning, match=r"ROC-AUC and PR-AUC are "
                      r"undefined for target 'q' in the valid split: all 4 "
                      r"labels are 0 \(one class only\)"):
        values = compute_metrics('binary', logits, label, ['p', 'q'],
                                 split='valid')
    assert math.isnan(values['rocauc_q']) and math.isnan(values['prauc_q'])
    assert values['rocauc'] == values['rocauc_p'] == pytest.approx(
        _hand_rocauc(logits[:, 0].numpy(), label[:, 0].numpy()))
    with pytest.warns(RuntimeWarning, match="no labels for target 'target "
                      "0'"):
        empty = compute_metrics('regression', torch.ones(3, 1),
                                torch.full((3, 1), math.nan))
    assert all(math.isnan(v) for v in empty.values())
    with pytest.warns(RuntimeWarning, match='R² is undefined'):
        flat = compute_metrics('regression', torch.tensor([1.0, 2.0]),
                               torch.tensor([3.0, 3.0]))
    assert math.isnan(flat['r2']) and flat['mae'] == 1.5
