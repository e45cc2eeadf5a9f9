r"""What every training run of this package shares, whatever it learns:
the optimizer and schedule, the clocks (wall, CPU, training batches), the
per-epoch history written as CSV, the non-finite loss check, and the state
that makes a resumed run continue exactly (random generators included).
:class:`~graphormer_sepnorm.training.lit_module.GraphormerLitModule`
(supervised) and
:class:`~graphormer_sepnorm.pretraining.lit_module.PretrainingLitModule`
(self-supervised) build on it."""
from __future__ import annotations

import csv
import math
import time
from pathlib import Path
from typing import Any, Callable, Optional

import torch
from lightning.pytorch import LightningModule
from torch import Tensor
from torchmetrics import MeanMetric

from ..nn.categorical_embedding import reads_back_cheaply
from .lr_schedule import polynomial_decay_scheduler

__all__ = ['RunModule', 'NonFiniteLossError', 'write_history',
           'append_history_row']


#: Steps between two reads of the losses on an accelerator (see
#: :meth:`RunModule.check_finite`).
FINITE_CHECK_STEPS = 50

class NonFiniteLossError(RuntimeError):
    r"""The training loss became NaN or infinite; training stops and the
    last checkpoint written before (all finite) is kept."""


class RunModule(LightningModule):
    r"""A :class:`~lightning.pytorch.LightningModule` with the bookkeeping of
    a run: subclasses build their model, compute their loss and call
    :meth:`check_finite`, :meth:`record_train_loss` and
    :meth:`append_history`.

    * AdamW on :meth:`parameter_groups` with linear warmup and
      polynomial decay (:obj:`optim.*`), stepped every optimizer step;
    * :attr:`wall_time_s`, :attr:`cpu_time_s` (this process; the budget
      measure on a shared machine) and :attr:`train_time_s` (training
      batches only), summed over resumes;
    * :attr:`history`, one row per validation, appended to
      :obj:`metrics_file` (rank 0) after each;
    * :obj:`train.compile` compiles the network (:meth:`compile_network`)
      when fitting starts;
    * checkpoints hold these and the random generators' states (plain values
      and tensors: they load with :obj:`weights_only=True`); subclasses add
      theirs with :meth:`extra_state` and :meth:`load_extra_state`.

    Args:
        config (dict): A validated configuration.
        metrics_file (str, optional): Per-epoch CSV to write (rank 0).
    """
    def __init__(self, config: dict, metrics_file: Optional[str] = None):
        super().__init__()
        self.config = config
        self.metrics_file = metrics_file
        # The training-loss mean of the current epoch is checkpointed, so an
        # epoch interrupted and resumed reports the same mean.
        # No NaN check inside the metric: it would read the loss back at
        # every step (check_finite does that, where it is cheap).
        self.train_loss = MeanMetric(nan_strategy='disable')
        self.train_loss.persistent(True)
        self.history: list[dict[str, float]] = []
        self._history_written = False  # metrics_file by this process
        self.wall_time_s = 0.0  # total over resumes
        self.cpu_time_s = 0.0
        self.train_time_s = 0.0  # training batches only (no validation)
        self.train_graphs = 0  # graphs seen by this process
        self._rng_to_restore: Optional[dict] = None
        # On an accelerator, the step of the first non-finite loss (-1:
        # none), kept on the device until check_pending_losses reads it.
        self._first_non_finite: Optional[Tensor] = None
        self._clock: Optional[float] = None
        self._cpu_clock: Optional[float] = None
        self._batch_clock: Optional[float] = None

    # ------------------------------------------------------------------
    # Optimizer and schedule

    def parameter_groups(self) -> list[dict[str, Any]]:
        r"""AdamW's parameter groups, the one of :obj:`optim.lr` first
        (default: every parameter of the module in one group)."""
        return [{'params': list(self.parameters())}]

    def configure_optimizers(self) -> dict:
        optim = self.config['optim']
        # AdamW on every parameter, as fairseq's Adam (decoupled weight
        # decay on all parameters) in Graphormer's recipes.
        optimizer = torch.optim.AdamW(self.parameter_groups(),
                                      lr=optim['lr'],
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

    def current_lr(self) -> float:
        optimizer = self.trainer.optimizers[0] if self.trainer.optimizers \
            else None
        return optimizer.param_groups[0]['lr'] if optimizer else math.nan

    # ------------------------------------------------------------------
    # Training-step helpers

    def check_finite(self, loss: Tensor) -> None:
        r"""Stops training with :class:`NonFiniteLossError` when the loss of
        any process is NaN or infinite.

        On the CPU every step's loss is read. On an accelerator, reading it
        would make the host wait for the device at every step, so the step
        of the first non-finite loss is kept on the device and read every
        :data:`FINITE_CHECK_STEPS` steps, and always before a checkpoint is
        written, a validation runs or training ends: a checkpoint never
        holds the weights of a non-finite step."""
        loss = loss.detach()
        if reads_back_cheaply(loss):
            self._stop_if_not_finite(
                self.global_step if not bool(torch.isfinite(loss)) else -1,
                float(loss))
            return
        step = torch.full((), self.global_step, device=loss.device)
        first = (torch.full_like(step, -1) if self._first_non_finite is None
                 else self._first_non_finite)
        self._first_non_finite = torch.where(
            (first < 0) & ~torch.isfinite(loss), step, first)
        if self.global_step % FINITE_CHECK_STEPS == 0:
            self.check_pending_losses()

    def check_pending_losses(self) -> None:
        r"""Reads the step of the first non-finite loss kept on the device
        by :meth:`check_finite`, and stops training if there is one."""
        if self._first_non_finite is not None:
            self._stop_if_not_finite(int(self._first_non_finite), math.nan)

    def _stop_if_not_finite(self, bad_step: int, value: float) -> None:
        finite = bad_step < 0
        if self.trainer.strategy.reduce_boolean_decision(finite, all=True):
            return
        last = Path(self.trainer.default_root_dir) / 'checkpoints' / \
            'last.ckpt'
        where = (f"at step {bad_step}" if bad_step >= 0 else
                 f"on another process by step {self.global_step}")
        loss = f"is {value}" if bad_step == self.global_step else \
            "became NaN or infinite"
        raise NonFiniteLossError(
            f"The training loss {loss} (not finite) {where}, epoch "
            f"{self.current_epoch}; training stopped. The last good "
            f"checkpoint is kept at {last} (resume with --resume after "
            f"lowering optim.lr, enabling train.gradient_clip_val or "
            f"checking the data).")

    def record_train_loss(self, loss: Tensor, num_graphs: int) -> None:
        r"""Counts :obj:`loss` into the epoch's mean training loss and logs
        it (progress bar, step-level logs)."""
        self.train_loss.update(loss.detach(), weight=num_graphs)
        self.train_graphs += num_graphs
        self.log('train/loss', loss.detach(), on_step=True, on_epoch=False,
                 prog_bar=True, batch_size=num_graphs)

    def epoch_train_loss(self) -> float:
        return (float(self.train_loss.compute())
                if self.train_loss.update_count else math.nan)

    # ------------------------------------------------------------------
    # Compilation (train.compile)

    def on_fit_start(self) -> None:
        if self.config['train']['compile']:
            self.compile_network()

    def compile_network(self) -> None:
        r"""Compiles what training runs of the network
        (:obj:`train.compile`, :obj:`train.compile_scope`): the model's
        regions or its forward, in place, so that the parameters keep their
        names (no :obj:`_orig_mod.` prefix) in checkpoints."""
        if self.config['train']['compile_scope'] == 'regions':
            self.model.compile_regions(dynamic=True)
        else:
            self.compile_whole_network()

    def compile_whole_network(self) -> None:
        r"""Compiles the whole of what training runs
        (:obj:`train.compile_scope: model`): here the model's forward."""
        self.model.compile(dynamic=True)

    # ------------------------------------------------------------------
    # Clocks

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

    # ------------------------------------------------------------------
    # History

    def append_history(self, row: dict, columns: list[str],
                       key: str = 'epoch') -> None:
        r"""Adds the row of this validation (replacing a row of the same
        :obj:`key`, :obj:`"epoch"` or :obj:`"step"`, as after a resume) and
        appends it to :obj:`metrics_file`. The first write of a process
        (a resume: the file may hold rows the checkpoint does not) and a
        replaced row rewrite the file from :attr:`history` instead, so the
        file always holds the history."""
        replaced = any(r[key] == row[key] for r in self.history)
        self.history = [r for r in self.history
                        if r[key] != row[key]] + [row]
        if self.metrics_file and self.trainer.is_global_zero:
            if replaced or not self._history_written:
                write_history(self.history, self.metrics_file, columns)
                self._history_written = True
            else:
                append_history_row(row, self.metrics_file, columns)

    # ------------------------------------------------------------------
    # Checkpoint state

    def extra_state(self) -> dict:
        r"""A subclass's own values to checkpoint (plain values/tensors)."""
        return {}

    def load_extra_state(self, state: dict) -> None:
        r"""Restores what :meth:`extra_state` saved."""

    def transfer_batch_to_device(self, batch, device: torch.device,
                                 dataloader_idx: int):
        r"""Copies a PyG batch (its layout too) to an accelerator without
        blocking the host: from the loader's pinned memory the copy then
        overlaps the previous step (Lightning copies only bare tensors that
        way)."""
        if device.type != 'cpu' and isinstance(getattr(batch, 'to', None),
                                               Callable):
            return batch.to(device, non_blocking=True)
        return super().transfer_batch_to_device(batch, device, dataloader_idx)

    def on_validation_start(self) -> None:
        self.check_pending_losses()

    def on_train_end(self) -> None:
        self.check_pending_losses()

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        self.check_pending_losses()
        self._tick()
        checkpoint['graphormer_sepnorm'] = {
            'history': [dict(r) for r in self.history],
            'wall_time_s': float(self.wall_time_s),
            'cpu_time_s': float(self.cpu_time_s),
            'train_time_s': float(self.train_time_s),
            'train_graphs': int(self.train_graphs),
            'rng': _get_rng_state(self.device),
            **self.extra_state(),
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
        self._rng_to_restore = state['rng']
        self.load_extra_state(state)


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
            _write_row(writer, row, columns)
    tmp.replace(path)


def append_history_row(row: dict, path, columns: list[str]) -> None:
    r"""Appends one row to a CSV that :func:`write_history` wrote with the
    same :obj:`columns`."""
    with open(path, 'a', newline='') as f:
        _write_row(csv.DictWriter(f, fieldnames=columns), row, columns)


def _write_row(writer: csv.DictWriter, row: dict, columns: list[str]) -> None:
    writer.writerow({k: _csv_value(row.get(k)) for k in columns})


def _csv_value(value):
    return '' if isinstance(value, float) and math.isnan(value) else value
