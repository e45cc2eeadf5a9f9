r"""The supervised LightningModule: loss, metrics and the model's outputs
per target, on top of :class:`~graphormer_sepnorm.training.run_module.RunModule`
(optimizer, schedule, clocks, history and exact resume)."""
from __future__ import annotations

import math
from typing import Any, Optional

import torch
import torch.nn.functional as F
from torch import Tensor
from torchmetrics import CatMetric

from ..data.datasets import TargetScaling, data_info
from ..data.molecule_features import graph_feature_channels
from ..models import GraphormerSepNorm
from .config import model_arguments
from .layer_lr import layer_lr_groups
from .metrics import (HIGHER_IS_BETTER, compute_metrics, metric_keys,
                      monitor_metric, tests_every_validation)
from .run_module import NonFiniteLossError, RunModule, write_history

__all__ = ['GraphormerLitModule', 'NonFiniteLossError', 'history_columns',
           'write_history']


def history_columns(keys: list[str]) -> list[str]:
    r"""The columns of :obj:`metrics.csv` for the metric :obj:`keys` (see
    :func:`~graphormer_sepnorm.training.metrics.metric_keys`)."""
    return (['epoch', 'step', 'train_loss'] + [f'val_{k}' for k in keys] +
            [f'test_{k}' for k in keys] + ['lr', 'wall_time_s', 'cpu_time_s'])


class GraphormerLitModule(RunModule):
    r"""Trains :class:`~graphormer_sepnorm.GraphormerSepNorm` on one dataset,
    with one output per target.

    * Regression (ZINC, CSV): L1 loss on targets standardized per target
      with the training split's mean and standard deviation (set by
      :meth:`setup` from the data module); metrics in original units,
      and with several targets also standardized (divided by those
      standard deviations), the default selection metric.
    * Binary (MolHIV, CSV): binary cross-entropy on the logits.

    Missing labels (:obj:`NaN`) are left out of the loss and of every
    metric, per target. The metrics are those of
    :mod:`~graphormer_sepnorm.training.metrics`; :obj:`train.monitor` (by
    default ROC-AUC, MAE, or for several regression targets the
    standardized MAE; averaged over targets) selects the best model.
    With :obj:`train.test_at=every_validation` (and
    :obj:`train.eval_test`), every validation also scores the test split,
    whose metric at the best validation epoch is then reported (OGB
    convention); by default (:obj:`end`) validation never touches test,
    which :func:`~.run_results.finalize_run` scores once with the best
    checkpoint. Each validation appends a row to :attr:`history` and, with
    :obj:`metrics_file`, appends it to that CSV.

    Args:
        config (dict): A validated configuration
            (:func:`~graphormer_sepnorm.training.config.load_config`).
        metrics_file (str, optional): Per-epoch CSV to write (rank 0).
    """
    def __init__(self, config: dict, metrics_file: Optional[str] = None):
        super().__init__(config, metrics_file)
        self.save_hyperparameters()
        self.info = data_info(config['data'])
        self.metric = monitor_metric(config)
        self.metric_keys = metric_keys(self.info.task, self.info.target_names)
        self.test_every_validation = tests_every_validation(config)
        self.model = GraphormerSepNorm.from_config(
            dict(model_arguments(config['model']),
                 atom_vocab_sizes=list(self.info.atom_vocab_sizes),
                 bond_vocab_sizes=list(self.info.bond_vocab_sizes),
                 out_channels=self.info.num_targets,
                 graph_feature_channels=graph_feature_channels(
                     config['data']),
                 featurization=self.info.featurizer))
        # Validation uses the running statistics by the config's choice
        # (train.precise_bn_batches re-estimates them first).
        self.model.warn_stale_statistics = False
        # Regression: the training split's statistics (setup()); a buffer
        # of this module, so they follow it to its device.
        self.target_scaling = TargetScaling([0.0] * self.info.num_targets,
                                            [1.0] * self.info.num_targets)
        # Missing labels are NaN: kept in place (masked when computed).
        self.eval_preds = torch.nn.ModuleList(
            [CatMetric(nan_strategy='disable') for _ in range(2)])
        self.eval_targets = torch.nn.ModuleList(
            [CatMetric(nan_strategy='disable') for _ in range(2)])

    # ------------------------------------------------------------------
    # Setup

    def setup(self, stage: str) -> None:
        datamodule = getattr(self.trainer, 'datamodule', None)
        if datamodule is not None and self.info.task == 'regression':
            self.target_scaling.load_statistics(datamodule.target_mean,
                                                datamodule.target_std)

    def parameter_groups(self) -> list[dict[str, Any]]:
        optim = self.config['optim']
        return layer_lr_groups(self.model, optim['lr'],
                               optim['layer_lr_decay'])

    # ------------------------------------------------------------------
    # Steps

    def forward(self, batch) -> Tensor:
        return self.model(batch)

    def _loss(self, pred: Tensor, batch) -> Tensor:
        if pred.dtype in (torch.float16, torch.bfloat16):
            pred = pred.float()  # the loss in float32 under mixed precision
        y = batch.y.view(pred.shape).to(pred.dtype)
        labeled = ~torch.isnan(y)
        y = torch.where(labeled, y, torch.zeros_like(y))
        if self.info.task == 'regression':
            losses = (pred - self.target_scaling.standardize(y)).abs()
        else:
            losses = F.binary_cross_entropy_with_logits(pred, y,
                                                        reduction='none')
        # The mean over labeled entries (OGB's multi-task convention); a
        # batch without labels contributes zero, not NaN.
        labeled = labeled.to(pred.dtype)
        return (losses * labeled).sum() / labeled.sum().clamp(min=1)

    def training_step(self, batch, batch_idx: int) -> Tensor:
        pred = self(batch)
        loss = self._loss(pred, batch)
        self.check_finite(loss)
        self.record_train_loss(loss, int(batch.num_graphs))
        return loss

    def validation_step(self, batch, batch_idx: int,
                        dataloader_idx: int = 0) -> None:
        pred = self(batch).double()
        if self.info.task == 'regression':
            pred = self.target_scaling(pred)
        self.eval_preds[dataloader_idx].update(pred)
        self.eval_targets[dataloader_idx].update(
            batch.y.view(pred.shape).double())

    def _compute_eval(self, index: int) -> dict[str, float]:
        preds, targets = self.eval_preds[index], self.eval_targets[index]
        if preds.update_count == 0 and not self.trainer.world_size > 1:
            values = {key: math.nan for key in self.metric_keys}
        else:
            values = compute_metrics(
                self.info.task, _cat(preds.compute()),
                _cat(targets.compute()), self.info.target_names,
                split=('valid', 'test')[index],
                target_std=self.target_scaling.statistics()[1])
        preds.reset()
        targets.reset()
        return values

    # ------------------------------------------------------------------
    # Epoch bookkeeping

    def on_validation_epoch_end(self) -> None:
        val_metrics = self._compute_eval(0)
        test_metrics = (self._compute_eval(1)
                        if self.test_every_validation else
                        {key: math.nan for key in self.metric_keys})
        if self.trainer.sanity_checking:
            return
        val, test = val_metrics[self.metric], test_metrics[self.metric]
        self._tick()
        # Already global (torchmetrics gathers all ranks); sync_dist only
        # averages equal values.
        self.log('val/metric', val, sync_dist=True, prog_bar=True)
        self.log(f'val/{self.metric}', val, sync_dist=True)
        if self.test_every_validation:
            self.log(f'test/{self.metric}', test, sync_dist=True)
        row = {
            'epoch': int(self.current_epoch),
            'step': int(self.global_step),
            'train_loss': self.epoch_train_loss(),
            **{f'val_{k}': v for k, v in val_metrics.items()},
            **{f'test_{k}': v for k, v in test_metrics.items()},
            'lr': float(self.current_lr()),
            'wall_time_s': float(self.wall_time_s),
            'cpu_time_s': float(self.cpu_time_s),
        }
        # Validations every N steps may fall twice in one epoch.
        by_steps = self.config['train']['val_every_n_steps'] is not None
        self.append_history(row, history_columns(self.metric_keys),
                            key='step' if by_steps else 'epoch')

    def best_row(self) -> Optional[dict]:
        r"""The history row of the best validation metric (first one on
        ties, as :class:`ModelCheckpoint` keeps the first)."""
        key = f'val_{self.metric}'
        rows = [r for r in self.history if not math.isnan(r[key])]
        if not rows:
            return None
        pick = max if HIGHER_IS_BETTER[self.metric] else min
        best = pick(r[key] for r in rows)
        return next(r for r in rows if r[key] == best)

    # ------------------------------------------------------------------
    # Checkpoint state (plain values and tensors: loads with
    # weights_only=True)

    def extra_state(self) -> dict:
        mean, std = self.target_scaling.statistics()
        return {'target_mean': mean, 'target_std': std}

    def load_extra_state(self, state: dict) -> None:
        # Checkpoints written before multi-target training hold floats.
        self.target_scaling.load_statistics(state['target_mean'],
                                            state['target_std'])


def _cat(value) -> Tensor:
    if isinstance(value, (list, tuple)):
        return torch.cat(list(value)) if value else torch.zeros(0)
    return value
