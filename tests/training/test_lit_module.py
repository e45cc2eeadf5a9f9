"""The training loss of GraphormerLitModule leaves missing labels out, per
target, as OGB's multi-task molecule examples do (the mean over the labeled
entries only): checked against a hand computation, entry by entry."""
import math
from types import SimpleNamespace

import pytest
import torch

from graphormer_sepnorm.training.config import load_config
from graphormer_sepnorm.training.lit_module import GraphormerLitModule
from training_helpers import CONFIGS, TINY_MODEL

NAN = math.nan
PRED = [[0.5, -1.0], [2.0, 0.25], [-0.75, 3.0], [1.5, -2.0]]
# Target 'a' is missing on row 1, target 'b' on rows 0 and 3
LABELS = [[1.0, NAN], [NAN, 0.0], [0.0, 1.0], [1.0, NAN]]


def _module(task: str) -> GraphormerLitModule:
    config = load_config(CONFIGS / 'csv_zinc_properties.yaml', [
        'data.target_columns=[a,b]', f'data.task={task}',
        'train.monitor=null', *TINY_MODEL], env={}, check_paths=False)
    return GraphormerLitModule(config)


def _loss(module, pred, labels) -> float:
    batch = SimpleNamespace(y=torch.tensor(labels).view(-1, 1, 2))
    return float(module._loss(torch.tensor(pred), batch))


def _labeled():
    return [(i, k) for i in range(4) for k in range(2)
            if not math.isnan(LABELS[i][k])]


def test_regression_loss_skips_missing_labels():
    module = _module('regression')
    mean, std = [0.5, -1.0], [2.0, 4.0]
    module.target_mean, module.target_std = mean, std
    # L1 on the standardized labels, averaged over the five labeled entries
    hand = sum(abs(PRED[i][k] - (LABELS[i][k] - mean[k]) / std[k])
               for i, k in _labeled()) / 5
    assert _loss(module, PRED, LABELS) == pytest.approx(hand, rel=1e-6)


def test_binary_loss_skips_missing_labels():
    module = _module('binary')

    def cross_entropy(logit, label):
        p = 1 / (1 + math.exp(-logit))
        return -(label * math.log(p) + (1 - label) * math.log(1 - p))

    hand = sum(cross_entropy(PRED[i][k], LABELS[i][k])
               for i, k in _labeled()) / 5
    assert _loss(module, PRED, LABELS) == pytest.approx(hand, rel=1e-6)


def test_a_batch_without_labels_adds_nothing():
    module = _module('binary')
    loss = _loss(module, PRED, [[NAN, NAN]] * 4)
    assert loss == 0.0
