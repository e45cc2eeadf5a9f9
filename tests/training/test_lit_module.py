"""The training loss of GraphormerLitModule leaves missing labels out, per
target, as OGB's multi-task molecule examples do (the mean over the labeled
entries only): checked against a hand computation, entry by entry. With
several regression targets, the standardized MAE selects the best epoch."""
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


def _module(task: str, *overrides: str) -> GraphormerLitModule:
    config = load_config(CONFIGS / 'csv_zinc_properties.yaml', [
        'data.target_columns=[a,b]', f'data.task={task}', *TINY_MODEL,
        *overrides], env={}, check_paths=False)
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
    module.target_scaling.load_statistics(mean, std)
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


def _validation_metrics(module, pred, labels) -> dict:
    module.eval_preds[0].update(torch.tensor(pred, dtype=torch.double))
    module.eval_targets[0].update(torch.tensor(labels, dtype=torch.double))
    return module._compute_eval(0)


def _history_row(epoch: int, values: dict) -> dict:
    return {'epoch': epoch, **{f'val_{k}': v for k, v in values.items()}}


def test_several_regression_targets_are_selected_on_standardized_errors():
    """Targets on the scales of logP (std 0.5) and TPSA (std 20). Epoch 0:
    MAEs 0.5 and 10 (raw mean 5.25, standardized (1 + 0.5) / 2 = 0.75).
    Epoch 1 doubles the logP error and gains 1 on TPSA: MAEs 1.0 and 9 (raw
    mean 5.0, better; standardized (2 + 0.45) / 2 = 1.225, worse). The raw
    mean would pick epoch 1 on TPSA alone; the default selection picks
    epoch 0, and both metrics are in the history row."""
    module = _module('regression')
    module.target_scaling.load_statistics([0.0, 0.0], [0.5, 20.0])
    assert module.metric == 'std_mae'
    y = [[1.0, 60.0], [2.0, 80.0], [3.0, 40.0], [NAN, 100.0]]
    first = _validation_metrics(module, [[1.5, 70.0], [2.0, 60.0],
                                         [2.0, 40.0], [0.0, 90.0]], y)
    second = _validation_metrics(module, [[2.0, 69.0], [3.0, 71.0],
                                          [2.0, 48.0], [0.0, 90.0]], y)
    assert (first['mae_a'], first['mae_b']) == (0.5, 10.0)
    assert (second['mae_a'], second['mae_b']) == (1.0, 9.0)
    assert (first['mae'], second['mae']) == (5.25, 5.0)
    assert first['std_mae'] == pytest.approx(0.75, rel=1e-12)
    assert second['std_mae'] == pytest.approx(1.225, rel=1e-12)
    module.history = [_history_row(0, first), _history_row(1, second)]
    assert module.best_row()['epoch'] == 0
    # An explicit train.monitor still wins: the raw mean
    raw = _module('regression', 'train.monitor=mae')
    raw.history = module.history
    assert raw.metric == 'mae' and raw.best_row()['epoch'] == 1
    # One target: MAE in its units, as before
    assert _module('regression', 'data.target_columns=a').metric == 'mae'


def test_batches_go_to_an_accelerator_without_blocking():
    """A PyG batch (and its layout) is copied with non_blocking=True to a
    GPU (the device type faked: the call is what matters), and left to
    Lightning on the CPU."""
    module = _module('regression')
    calls = []

    class FakeBatch:
        def to(self, device, non_blocking=False):
            calls.append((device.type, non_blocking))
            return self

    module.transfer_batch_to_device(FakeBatch(), torch.device('cuda'), 0)
    assert calls == [('cuda', True)]
    tensor = torch.ones(2)
    assert module.transfer_batch_to_device(tensor, torch.device('cpu'),
                                           0) is not None


def test_the_target_statistics_follow_the_module_not_its_weights():
    """The statistics are buffers of the module: they move with it to a
    device or dtype (no copy from Python numbers at each step, which would
    make the host wait for a GPU), and stay out of the state dict, whose
    keys stay those of checkpoints written before (the extra state holds
    the statistics)."""
    module = _module('regression')
    module.target_scaling.load_statistics([1.0, 2.0], [3.0, 4.0])
    buffers = dict(module.named_buffers())
    assert buffers['target_scaling.mean'].tolist() == [1.0, 2.0]
    assert not any(key.startswith('target_scaling')
                   for key in module.state_dict())
    assert module.extra_state() == {'target_mean': [1.0, 2.0],
                                    'target_std': [3.0, 4.0]}
    module.to(torch.float32)
    assert module.target_scaling.std.dtype == torch.float32
    # Old single-target checkpoints hold floats.
    module.load_extra_state({'target_mean': 0.5, 'target_std': 2.0})
    assert module.target_scaling.statistics() == ([0.5], [2.0])
