r"""Evaluation metrics per target and averaged over targets, from
:mod:`torchmetrics`, with missing labels masked per target as in OGB's
multi-task molecule datasets.

* Regression: mean absolute error (:obj:`"mae"`), root mean squared error
  (:obj:`"rmse"`) and the coefficient of determination (:obj:`"r2"`), in the
  units of the targets.
* Binary: area under the ROC curve (:obj:`"rocauc"`, equal to OGB's
  :class:`~ogb.graphproppred.Evaluator`) and area under the
  precision-recall curve (:obj:`"prauc"`, computed as average precision,
  the step-wise estimate of :func:`sklearn.metrics.average_precision_score`;
  chemprop's ``prc`` integrates the curve with the trapezoidal rule
  instead, which can read higher).

With several regression targets, each on its own scale (logP near 1, TPSA
near 60), an average in the targets' units is the error of the
largest-scale target, nearly alone. So several regression targets also
report **standardized** errors (:data:`STANDARDIZED_METRICS`): each
target's MAE (RMSE) divided by the standard deviation of its training
labels, the scale the training loss uses, then averaged over targets
(:obj:`"std_mae"`, :obj:`"std_rmse"`); :obj:`"std_mae"` selects the best
model by default (:func:`monitor_metric`).

A metric that is undefined for a target on a split (no labels; one class
only, for the AUCs; fewer than two labels or constant labels, for R²) is
:obj:`NaN` for that target, with a warning, and left out of the average.
"""
from __future__ import annotations

import math
import warnings
from typing import Mapping, Optional, Sequence

import torch
from torch import Tensor

__all__ = ['TASK_METRICS', 'STANDARDIZED_METRICS', 'HIGHER_IS_BETTER',
           'METRIC_NAMES', 'reported_metrics', 'metric_keys',
           'monitor_metric', 'compute_metrics', 'compute_metric',
           'tests_every_validation']

#: The metrics reported for each task, the first being the default
#: model-selection metric (:obj:`train.monitor`).
TASK_METRICS: dict[str, tuple[str, ...]] = {
    'regression': ('mae', 'rmse', 'r2'),
    'binary': ('rocauc', 'prauc'),
}

#: The standardized metrics of several regression targets, by the metric
#: of :data:`TASK_METRICS` each standardizes (named ``std_<metric>``, which
#: no per-target key ``<metric>_<target>`` can be).
STANDARDIZED_METRICS: dict[str, str] = {'std_mae': 'mae', 'std_rmse': 'rmse'}

#: Whether a larger value of a metric is better.
HIGHER_IS_BETTER: dict[str, bool] = {
    'mae': False, 'rmse': False, 'r2': True, 'rocauc': True, 'prauc': True,
    'std_mae': False, 'std_rmse': False
}

#: Every metric name (the choices of :obj:`train.monitor`).
METRIC_NAMES: tuple[str, ...] = tuple(HIGHER_IS_BETTER)


def reported_metrics(task: str, num_targets: int = 1) -> tuple[str, ...]:
    r"""The metrics (averaged over targets) reported for :obj:`task` with
    :obj:`num_targets` targets: those of :data:`TASK_METRICS`, and for
    several regression targets :data:`STANDARDIZED_METRICS` too."""
    if task == 'regression' and num_targets > 1:
        return TASK_METRICS[task] + tuple(STANDARDIZED_METRICS)
    return TASK_METRICS[task]


def metric_keys(task: str, target_names: Sequence[str] = ()) -> list[str]:
    r"""The keys :func:`compute_metrics` returns: each metric of
    :func:`reported_metrics` (averaged over targets), then, with several
    targets, :obj:`"<metric>_<target>"` for each metric of
    :data:`TASK_METRICS` and each target."""
    keys = list(reported_metrics(task, len(target_names)))
    if len(target_names) > 1:
        keys += [f'{metric}_{name}' for metric in TASK_METRICS[task]
                 for name in target_names]
    return keys


def monitor_metric(config: Mapping) -> str:
    r"""The model-selection metric of a validated configuration:
    :obj:`train.monitor`, or the dataset's default
    (:attr:`~graphormer_sepnorm.data.graph_splits.DatasetInfo.metric`:
    ROC-AUC for binary tasks, MAE for one regression target, the
    standardized MAE :obj:`"std_mae"` for several)."""
    from ..data.datasets import data_info
    return config['train'].get('monitor') or data_info(config['data']).metric


def compute_metrics(task: str, preds: Tensor, targets: Tensor,
                    target_names: Sequence[str] = (), split: str = '',
                    target_std: Optional[Sequence[float]] = None
                    ) -> dict[str, float]:
    r"""The metrics of :obj:`task` per target and averaged over targets.

    Args:
        task (str): :obj:`"regression"` or :obj:`"binary"`.
        preds (Tensor): :obj:`[num_graphs, num_targets]` (or
            :obj:`[num_graphs]`) predictions: values in the units of the
            targets (regression) or scores (binary: logits or
            probabilities; the AUCs depend on their order only).
        targets (Tensor): The labels, same shape, :obj:`NaN` where missing.
        target_names (list of str, optional): Names of the targets, for the
            per-target keys and messages. (default: :obj:`()`)
        split (str, optional): The split's name, for messages.
            (default: :obj:`""`)
        target_std (list of float, optional): The standard deviation of
            each target's training labels, which the standardized metrics
            of several regression targets divide by (the model card's
            :obj:`target_std`). (default: :obj:`None`: 1 for every target,
            the targets' units)

    Returns:
        dict from the keys of :func:`metric_keys` to floats (:obj:`NaN` when
        undefined).
    """
    preds = preds.detach().double().cpu()
    targets = targets.detach().double().cpu()
    num_targets = preds.view(preds.size(0), -1).size(1) if preds.numel() \
        else max(len(target_names), 1)
    preds = preds.reshape(-1, num_targets)
    targets = targets.reshape(-1, num_targets)
    names = list(target_names) or [f'target {k}' for k in range(num_targets)]
    per_target = {metric: [] for metric in TASK_METRICS[task]}
    for k in range(num_targets):
        labeled = ~torch.isnan(targets[:, k])
        values = _target_metrics(task, preds[labeled, k],
                                 targets[labeled, k],
                                 f"{names[k]!r}" + (f" in the {split} split"
                                                    if split else ""))
        for metric, value in values.items():
            per_target[metric].append(value)
    out = {metric: _mean_defined(values)
           for metric, values in per_target.items()}
    if task == 'regression' and len(target_names) > 1:
        scale = ([1.0] * num_targets if target_std is None else
                 [float(v) for v in target_std])
        if len(scale) != num_targets:
            raise ValueError(f"target_std has {len(scale)} values for "
                             f"{num_targets} targets; pass one per target")
        for name, metric in STANDARDIZED_METRICS.items():
            out[name] = _mean_defined([value / std for value, std in zip(
                per_target[metric], scale)])
    if len(target_names) > 1:
        for metric, values in per_target.items():
            for name, value in zip(target_names, values):
                out[f'{metric}_{name}'] = value
    return out


def compute_metric(metric: str, preds: Tensor, targets: Tensor) -> float:
    r"""One metric (of :data:`TASK_METRICS`) of one target, as
    :func:`compute_metrics` computes it (:obj:`NaN` where undefined)."""
    task = next((t for t, names in TASK_METRICS.items() if metric in names),
                None)
    if task is None:
        raise ValueError(f"{metric!r} is not a metric of one target; choose "
                         f"one of {', '.join(sum(TASK_METRICS.values(), ()))}"
                         f" (the standardized metrics need several targets: "
                         f"compute_metrics)")
    return compute_metrics(task, preds.reshape(-1, 1),
                           targets.reshape(-1, 1))[metric]


def _target_metrics(task: str, preds: Tensor, targets: Tensor,
                    where: str) -> dict[str, float]:
    from torchmetrics.functional import (mean_absolute_error,
                                         mean_squared_error, r2_score)
    from torchmetrics.functional.classification import (
        binary_auroc, binary_average_precision)
    metrics = TASK_METRICS[task]
    if targets.numel() == 0:
        _warn(f"no labels for target {where}; its metrics are NaN and left "
              f"out of the averages")
        return {metric: math.nan for metric in metrics}
    if task == 'regression':
        r2 = math.nan
        if targets.numel() < 2 or bool((targets == targets[0]).all()):
            _warn(f"R² is undefined for target {where} (fewer than two "
                  f"labels, or all equal); it is NaN and left out of the "
                  f"average")
        else:
            r2 = float(r2_score(preds, targets))
        return {'mae': float(mean_absolute_error(preds, targets)),
                'rmse': float(mean_squared_error(preds, targets,
                                                 squared=False)),
                'r2': r2}
    if targets.unique().numel() < 2:
        _warn(f"ROC-AUC and PR-AUC are undefined for target {where}: all "
              f"{targets.numel()} labels are {int(targets[0])} (one class "
              f"only); they are NaN and left out of the averages")
        return {metric: math.nan for metric in metrics}
    # Scores outside [0, 1] (logits) go through a sigmoid inside
    # torchmetrics; the order, all the AUCs see, is kept either way.
    labels = targets.long()
    return {'rocauc': float(binary_auroc(preds, labels)),
            'prauc': float(binary_average_precision(preds, labels))}


def _mean_defined(values: Sequence[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined) if defined else math.nan


def _warn(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def tests_every_validation(config: dict) -> bool:
    r"""Whether every validation also scores the test split
    (:obj:`train.eval_test` with :obj:`train.test_at=every_validation`)."""
    train = config['train']
    return bool(train['eval_test']) and train['test_at'] == 'every_validation'
