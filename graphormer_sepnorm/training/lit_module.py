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

from ..data.datasets import dataset_info
from ..models import GraphormerSepNorm
from .evaluate import compute_metric
from .lr_schedule import polynomial_decay_scheduler

__all__ = ['GraphormerLitModule', 'NonFiniteLossError', 'HISTORY_COLUMNS']


class NonFiniteLossError(RuntimeError):
    r"""The training loss became NaN or infinite; training stops and the
    last checkpoint written before (all finite) is kept."""


def HISTORY_COLUMNS(metric: str) -> list[str]:
    return ['epoch', 'step', 'train_loss', f'val_{metric}', f'test_{metric}',
            'lr', 'wall_time_s', 'cpu_time_s']


class GraphormerLitModule(LightningModule):
    r"""Trains :class:`~graphormer_sepnorm.GraphormerSepNorm` on one dataset.

    * Regression (ZINC): L1 loss on targets standardized with the training
      split's mean and standard deviation (set by :meth:`setup` from the
      data module), MAE reported in original units.
    * Binary (MolHIV): binary cross-entropy on the logit, OGB ROC-AUC.

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
        self.info = dataset_info(config['data']['name'])
        self.metric = self.info.metric
        self.model = GraphormerSepNorm.from_config(
            dict(config['model'],
                 atom_vocab_sizes=list(self.info.atom_vocab_sizes),
                 bond_vocab_sizes=list(self.info.bond_vocab_sizes),
                 out_channels=1))
        self.metrics_file = metrics_file
        self.target_mean = 0.0
        self.target_std = 1.0
        # The training-loss mean of the current epoch is checkpointed, so an
        # epoch interrupted and resumed reports the same mean.
        self.train_loss = MeanMetric()
        self.train_loss.persistent(True)
        self.eval_preds = torch.nn.ModuleList([CatMetric(), CatMetric()])
        self.eval_targets = torch.nn.ModuleList([CatMetric(), CatMetric()])
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
            self.target_mean = float(datamodule.target_mean)
            self.target_std = float(datamodule.target_std)

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
        return self.model(batch).view(-1)

    def _loss(self, pred: Tensor, batch) -> Tensor:
        if pred.dtype in (torch.float16, torch.bfloat16):
            pred = pred.float()  # the loss in float32 under mixed precision
        y = batch.y.view(-1).to(pred.dtype)
        if self.info.task == 'regression':
            return F.l1_loss(pred, (y - self.target_mean) / self.target_std)
        return F.binary_cross_entropy_with_logits(pred, y)

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
            pred = pred * self.target_std + self.target_mean
        self.eval_preds[dataloader_idx].update(pred)
        self.eval_targets[dataloader_idx].update(batch.y.view(-1).double())

    def _compute_eval(self, index: int) -> float:
        preds, targets = self.eval_preds[index], self.eval_targets[index]
        if preds.update_count == 0 and not self.trainer.world_size > 1:
            value = math.nan
        else:
            value = compute_metric(self.metric, _cat(preds.compute()),
                                   _cat(targets.compute()))
        preds.reset()
        targets.reset()
        return value

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
        val = self._compute_eval(0)
        test = (self._compute_eval(1) if self.config['train']['eval_test']
                else math.nan)
        if self.trainer.sanity_checking:
            return
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
            f'val_{self.metric}': val,
            f'test_{self.metric}': test,
            'lr': float(lr),
            'wall_time_s': float(self.wall_time_s),
            'cpu_time_s': float(self.cpu_time_s),
        }
        self.history = [r for r in self.history
                        if r['epoch'] != row['epoch']] + [row]
        if self.metrics_file and self.trainer.is_global_zero:
            write_history(self.history, self.metrics_file, self.metric)

    def best_row(self) -> Optional[dict]:
        r"""The history row of the best validation metric (first one on
        ties, as :class:`ModelCheckpoint` keeps the first)."""
        key = f'val_{self.metric}'
        rows = [r for r in self.history if not math.isnan(r[key])]
        if not rows:
            return None
        pick = max if self.info.higher_is_better else min
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
            'target_mean': float(self.target_mean),
            'target_std': float(self.target_std),
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
        self.target_mean = state['target_mean']
        self.target_std = state['target_std']
        self._rng_to_restore = state['rng']


def _cat(value) -> Tensor:
    if isinstance(value, (list, tuple)):
        return torch.cat([v.view(-1) for v in value]) if value else \
            torch.zeros(0)
    return value.view(-1)


def _get_rng_state(device: torch.device) -> dict:
    state = {'cpu': torch.get_rng_state()}
    if device.type == 'cuda':
        state['cuda'] = torch.cuda.get_rng_state(device)
    return state


def _set_rng_state(state: dict) -> None:
    torch.set_rng_state(state['cpu'].cpu())
    if 'cuda' in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state['cuda'].cpu())


def write_history(history: list[dict], path, metric: str,
                  columns: Optional[list[str]] = None) -> None:
    r"""Writes the per-epoch rows as CSV (atomically), with the given
    :obj:`columns` (default: :func:`HISTORY_COLUMNS` of :obj:`metric`); a
    NaN (a split not evaluated) is written as an empty field."""
    path = Path(path)
    tmp = path.with_name(path.name + '.tmp')
    columns = columns or HISTORY_COLUMNS(metric)
    with open(tmp, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for row in history:
            writer.writerow({k: _csv_value(row.get(k)) for k in columns})
    tmp.replace(path)


def _csv_value(value):
    return '' if isinstance(value, float) and math.isnan(value) else value
