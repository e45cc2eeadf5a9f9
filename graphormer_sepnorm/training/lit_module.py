r"""The LightningModule: loss, metrics, optimizer and schedule, per-epoch
history, and the state that makes a resumed run continue exactly."""
from __future__ import annotations

import csv
import math
import time
from pathlib import Path
from typing import Optional

import torch
import torch.nn.functional as F
from lightning.pytorch import LightningModule
from torch import Tensor
from torchmetrics import CatMetric, MeanMetric

from ..data.datasets import data_info
from ..models import GraphormerSepNorm
from .lr_schedule import polynomial_decay_scheduler
from .metrics import (HIGHER_IS_BETTER, compute_metrics, metric_keys,
                      monitor_metric)

__all__ = ['GraphormerLitModule', 'NonFiniteLossError', 'history_columns']


class NonFiniteLossError(RuntimeError):
    r"""The training loss became NaN or infinite; training stops and the
    last checkpoint written before (all finite) is kept."""


def history_columns(keys: list[str]) -> list[str]:
    r"""The columns of :obj:`metrics.csv` for the metric :obj:`keys` (see
    :func:`~graphormer_sepnorm.training.metrics.metric_keys`)."""
    return (['epoch', 'step', 'train_loss'] + [f'val_{k}' for k in keys] +
            [f'test_{k}' for k in keys] + ['lr', 'wall_time_s', 'cpu_time_s'])


class GraphormerLitModule(LightningModule):
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
    Every validation also evaluates the test split (unless
    :obj:`train.eval_test` is false), so the test metric at the best
    validation epoch can be reported (OGB convention); each
    validation appends a row to :attr:`history` and, with
    :obj:`metrics_file`, rewrites that CSV.

    Args:
        config (dict): A validated configuration
            (:func:`~graphormer_sepnorm.training.config.load_config`).
        metrics_file (str, optional): Per-epoch CSV to write (rank 0).
    """
    def __init__(self, config: dict, metrics_file: Optional[str] = None):
        super().__init__()
        self.save_hyperparameters()
        self.config = config
        self.info = data_info(config['data'])
        self.metric = monitor_metric(config)
        self.metric_keys = metric_keys(self.info.task, self.info.target_names)
        self.model = GraphormerSepNorm.from_config(
            dict(config['model'],
                 atom_vocab_sizes=list(self.info.atom_vocab_sizes),
                 bond_vocab_sizes=list(self.info.bond_vocab_sizes),
                 out_channels=self.info.num_targets))
        self.metrics_file = metrics_file
        self.target_mean = [0.0] * self.info.num_targets
        self.target_std = [1.0] * self.info.num_targets
        # The training-loss mean of the current epoch is checkpointed, so an
        # epoch interrupted and resumed reports the same mean.
        self.train_loss = MeanMetric()
        self.train_loss.persistent(True)
        # Missing labels are NaN: kept in place (masked when computed).
        self.eval_preds = torch.nn.ModuleList(
            [CatMetric(nan_strategy='disable') for _ in range(2)])
        self.eval_targets = torch.nn.ModuleList(
            [CatMetric(nan_strategy='disable') for _ in range(2)])
        self.history: list[dict[str, float]] = []
        self.wall_time_s = 0.0  # total over resumes
        # CPU time of this process over resumes: the budget measure on a
        # shared machine, where wall time also counts other jobs.
        self.cpu_time_s = 0.0
        self.train_time_s = 0.0  # training batches only (no validation)
        self.train_graphs = 0  # graphs seen by this process
        self._rng_to_restore: Optional[dict] = None
        self._clock: Optional[float] = None
        self._cpu_clock: Optional[float] = None
        self._batch_clock: Optional[float] = None

    # ------------------------------------------------------------------
    # Setup

    def setup(self, stage: str) -> None:
        datamodule = getattr(self.trainer, 'datamodule', None)
        if datamodule is not None and self.info.task == 'regression':
            self.target_mean = [float(v) for v in datamodule.target_mean]
            self.target_std = [float(v) for v in datamodule.target_std]

    def configure_optimizers(self) -> dict:
        optim = self.config['optim']
        # AdamW on every parameter, as fairseq's Adam (decoupled weight
        # decay on all parameters) in Graphormer's recipes.
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=optim['lr'],
                                      betas=tuple(optim['betas']),
                                      eps=optim['eps'],
                                      weight_decay=optim['weight_decay'])
        total = self.total_steps()
        warmup = (round(optim['warmup_ratio'] * total)
                  if optim['warmup_ratio'] is not None else
                  optim['warmup_steps'])
        scheduler = polynomial_decay_scheduler(optimizer, warmup, total,
                                               optim['end_lr'], optim['power'])
        return {
            'optimizer': optimizer,
            'lr_scheduler': {'scheduler': scheduler, 'interval': 'step',
                             'frequency': 1}
        }

    def total_steps(self) -> int:
        configured = self.config['optim']['total_steps']
        if configured is not None:
            return int(configured)
        estimate = self.trainer.estimated_stepping_batches
        if not math.isfinite(estimate):
            raise ValueError("Cannot infer optim.total_steps; set it or "
                             "train.max_steps")
        return int(estimate)

    # ------------------------------------------------------------------
    # Steps

    def forward(self, batch) -> Tensor:
        return self.model(batch)

    def _standardization(self, like: Tensor) -> tuple[Tensor, Tensor]:
        return (like.new_tensor(self.target_mean),
                like.new_tensor(self.target_std))

    def _loss(self, pred: Tensor, batch) -> Tensor:
        if pred.dtype in (torch.float16, torch.bfloat16):
            pred = pred.float()  # the loss in float32 under mixed precision
        y = batch.y.view(pred.shape).to(pred.dtype)
        labeled = ~torch.isnan(y)
        y = torch.where(labeled, y, torch.zeros_like(y))
        if self.info.task == 'regression':
            mean, std = self._standardization(pred)
            losses = (pred - (y - mean) / std).abs()
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
        finite = bool(torch.isfinite(loss))
        if not self.trainer.strategy.reduce_boolean_decision(finite, all=True):
            last = Path(self.trainer.default_root_dir) / 'checkpoints' / \
                'last.ckpt'
            raise NonFiniteLossError(
                f"The training loss is {loss.item()} (not finite) at step "
                f"{self.global_step}, epoch {self.current_epoch}; training "
                f"stopped. The last good checkpoint is kept at {last} "
                f"(resume with --resume after lowering optim.lr, enabling "
                f"train.gradient_clip_val or checking the data).")
        num_graphs = int(batch.num_graphs)
        self.train_loss.update(loss.detach(), weight=num_graphs)
        self.train_graphs += num_graphs
        self.log('train/loss', loss.detach(), on_step=True, on_epoch=False,
                 prog_bar=True, batch_size=num_graphs)
        return loss

    def validation_step(self, batch, batch_idx: int,
                        dataloader_idx: int = 0) -> None:
        pred = self(batch).double()
        if self.info.task == 'regression':
            mean, std = self._standardization(pred)
            pred = pred * std + mean
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
                split=('valid', 'test')[index], target_std=self.target_std)
        preds.reset()
        targets.reset()
        return values

    # ------------------------------------------------------------------
    # Epoch bookkeeping

    def on_train_start(self) -> None:
        if self._rng_to_restore is not None:
            _set_rng_state(self._rng_to_restore)
            self._rng_to_restore = None
        self._clock = time.perf_counter()
        self._cpu_clock = time.process_time()
        self._batch_clock = time.perf_counter()

    def on_train_epoch_start(self) -> None:
        self.train_loss.reset()
        self._batch_clock = time.perf_counter()

    def on_train_batch_end(self, outputs, batch, batch_idx: int) -> None:
        now = time.perf_counter()
        if self._batch_clock is not None:
            self.train_time_s += now - self._batch_clock
        self._batch_clock = now
        self._tick()

    def _tick(self) -> None:
        now, cpu_now = time.perf_counter(), time.process_time()
        if self._clock is not None:
            self.wall_time_s += now - self._clock
            self.cpu_time_s += cpu_now - self._cpu_clock
        self._clock, self._cpu_clock = now, cpu_now

    def on_validation_epoch_end(self) -> None:
        val_metrics = self._compute_eval(0)
        test_metrics = (self._compute_eval(1)
                        if self.config['train']['eval_test'] else
                        {key: math.nan for key in self.metric_keys})
        if self.trainer.sanity_checking:
            return
        val, test = val_metrics[self.metric], test_metrics[self.metric]
        self._tick()
        train_loss = (float(self.train_loss.compute())
                      if self.train_loss.update_count else math.nan)
        optimizer = self.trainer.optimizers[0] if self.trainer.optimizers \
            else None
        lr = optimizer.param_groups[0]['lr'] if optimizer else math.nan
        # Already global (torchmetrics gathers all ranks); sync_dist only
        # averages equal values.
        self.log('val/metric', val, sync_dist=True, prog_bar=True)
        self.log(f'val/{self.metric}', val, sync_dist=True)
        if self.config['train']['eval_test']:
            self.log(f'test/{self.metric}', test, sync_dist=True)
        row = {
            'epoch': int(self.current_epoch),
            'step': int(self.global_step),
            'train_loss': train_loss,
            **{f'val_{k}': v for k, v in val_metrics.items()},
            **{f'test_{k}': v for k, v in test_metrics.items()},
            'lr': float(lr),
            'wall_time_s': float(self.wall_time_s),
            'cpu_time_s': float(self.cpu_time_s),
        }
        self.history = [r for r in self.history
                        if r['epoch'] != row['epoch']] + [row]
        if self.metrics_file and self.trainer.is_global_zero:
            write_history(self.history, self.metrics_file,
                          history_columns(self.metric_keys))

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

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        self._tick()
        checkpoint['graphormer_sepnorm'] = {
            'history': [dict(r) for r in self.history],
            'wall_time_s': float(self.wall_time_s),
            'cpu_time_s': float(self.cpu_time_s),
            'train_time_s': float(self.train_time_s),
            'train_graphs': int(self.train_graphs),
            'target_mean': list(self.target_mean),
            'target_std': list(self.target_std),
            'rng': _get_rng_state(self.device),
        }

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        state = checkpoint.get('graphormer_sepnorm')
        if not state:
            return
        self.history = [dict(r) for r in state['history']]
        self.wall_time_s = state['wall_time_s']
        # Checkpoints from before CPU time was recorded resume from zero.
        self.cpu_time_s = state.get('cpu_time_s', 0.0)
        self.train_time_s = state['train_time_s']
        self.train_graphs = state['train_graphs']
        # Checkpoints written before multi-target training hold floats.
        self.target_mean = _per_target(state['target_mean'])
        self.target_std = _per_target(state['target_std'])
        self._rng_to_restore = state['rng']


def _per_target(value) -> list[float]:
    if isinstance(value, (list, tuple)):
        return [float(v) for v in value]
    return [float(value)]


def _cat(value) -> Tensor:
    if isinstance(value, (list, tuple)):
        return torch.cat(list(value)) if value else torch.zeros(0)
    return value


def _get_rng_state(device: torch.device) -> dict:
    state = {'cpu': torch.get_rng_state()}
    if device.type == 'cuda':
        state['cuda'] = torch.cuda.get_rng_state(device)
    return state


def _set_rng_state(state: dict) -> None:
    torch.set_rng_state(state['cpu'].cpu())
    if 'cuda' in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state['cuda'].cpu())


def write_history(history: list[dict], path, columns: list[str]) -> None:
    r"""Writes the per-epoch rows as CSV with :obj:`columns` (atomically);
    a NaN (a split not evaluated, a metric undefined) is written as an empty
    field."""
    path = Path(path)
    tmp = path.with_name(path.name + '.tmp')
    with open(tmp, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for row in history:
            writer.writerow({k: _csv_value(row.get(k)) for k in columns})
    tmp.replace(path)


def _csv_value(value):
    return '' if isinstance(value, float) and math.isnan(value) else value
