r"""The self-supervised LightningModule: masked atoms and descriptors
(:mod:`~graphormer_sepnorm.pretraining.objectives`) on top of
:class:`~graphormer_sepnorm.training.run_module.RunModule` (optimizer,
schedule, clocks, history and exact resume)."""
from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor
from torch.nn import Parameter
from torchmetrics import CatMetric, MeanMetric, SumMetric

from ..analysis.graph_token import anisotropy, uniformity
from ..data.errors import DataError
from ..data.featurize import featurizer_vocab_sizes
from ..models import GraphormerSepNorm
from ..training.config import model_arguments
from ..training.init_from import HEAD_MODULES
from ..training.run_module import RunModule
from .descriptors import DESCRIPTOR_NAMES, DescriptorScaler
from .objectives import MaskedAtomHead, descriptor_loss, mask_atoms

__all__ = ['PretrainingLitModule', 'PRETRAINING_COLUMNS']

#: The columns of a pretraining run's :obj:`metrics.csv` (one row per
#: validation; :obj:`train_loss` is the mean since the previous validation,
#: the atom and descriptor terms are unweighted).
PRETRAINING_COLUMNS = [
    'epoch', 'step', 'train_loss', 'val_loss', 'val_atom_loss',
    'val_element_accuracy', 'val_atom_feature_accuracy',
    'val_descriptor_mse', 'val_descriptor_r2', 'val_graph_token_uniformity',
    'val_graph_token_anisotropy', 'lr', 'graphs_per_s', 'wall_time_s',
    'cpu_time_s']

# Salts that keep the random streams of training and validation masks apart.
_TRAIN_STREAM, _VAL_STREAM = 1, 2


class PretrainingLitModule(RunModule):
    r"""Pretrains :class:`~graphormer_sepnorm.GraphormerSepNorm` without
    labels.

    Each training batch masks :obj:`pretrain.mask_rate` of every graph's
    atoms (at least one) and minimizes

    .. math::
        w_\text{atom} \cdot \text{CE}(\text{masked atom features}) +
        w_\text{desc} \cdot \text{MSE}(\text{standardized descriptors})

    with the weights :obj:`pretrain.atom_loss_weight` and
    :obj:`pretrain.descriptor_loss_weight` (a zero weight turns its
    objective off and freezes its head: the masked-atom head, or the
    model's prediction head). A molecule's mask is drawn from the run's seed, the step
    and its line in the corpus (:func:`~graphormer_sepnorm.pretraining.
    objectives.mask_atoms`), so a resumed run masks as the interrupted one
    would have and data-parallel processes as one process; validation masks
    do not depend on the step, so every validation scores the same masked
    graphs.

    Each validation also embeds the unmasked validation molecules and
    records the uniformity and anisotropy of their graph tokens (the
    geometry of :mod:`~graphormer_sepnorm.analysis.graph_token`), the
    quantities the SepNorm paper argues about.

    Args:
        config (dict): A validated pretraining configuration.
        metrics_file (str, optional): Per-validation CSV to write (rank 0).
    """
    def __init__(self, config: dict, metrics_file: Optional[str] = None):
        super().__init__(config, metrics_file)
        self.save_hyperparameters()
        pretrain = config['pretrain']
        self.mask_rate = float(pretrain['mask_rate'])
        self.atom_weight = float(pretrain['atom_loss_weight'])
        self.descriptor_weight = float(pretrain['descriptor_loss_weight'])
        atom_vocab, bond_vocab = featurizer_vocab_sizes(
            config['data']['featurizer'])
        self.model = GraphormerSepNorm.from_config(
            dict(model_arguments(config['model']),
                 atom_vocab_sizes=list(atom_vocab),
                 bond_vocab_sizes=list(bond_vocab),
                 out_channels=len(DESCRIPTOR_NAMES),
                 featurization=config['data']['featurizer']))
        # Pretraining validates with the running statistics.
        self.model.warn_stale_statistics = False
        hidden = config['model']['hidden_channels']
        self.mask_token = Parameter(torch.empty(hidden))
        torch.nn.init.normal_(self.mask_token, std=0.02)
        self.atom_head = MaskedAtomHead(hidden, atom_vocab)
        # The head of an objective weighted 0 would get no gradient, which
        # DDP refuses: it is frozen, so no process trains it.
        unused = (([self.atom_head] if self.atom_weight == 0 else []) +
                  ([getattr(self.model, name) for name in HEAD_MODULES]
                   if self.descriptor_weight == 0 else []))
        for head in unused:
            head.requires_grad_(False)
        self.scaler: Optional[DescriptorScaler] = None
        self.corpus_sha256: Optional[dict[str, str]] = None
        self.val_means = torch.nn.ModuleDict({
            name: MeanMetric() for name in (
                'atom_loss', 'element_accuracy',
                'atom_feature_accuracy')})
        # Per descriptor: count, sum, sum of squares of the targets and the
        # squared error, for R^2 over all processes.
        self.val_descriptor_sums = torch.nn.ModuleList(
            [SumMetric() for _ in range(4)])
        self.val_graph_tokens = CatMetric()

    # ------------------------------------------------------------------
    # Setup

    def setup(self, stage: str) -> None:
        datamodule = getattr(self.trainer, 'datamodule', None)
        if datamodule is not None:
            if datamodule.scaler is not None:
                self.scaler = datamodule.scaler
            self.corpus_sha256 = datamodule.corpus_sha256

    def compile_whole_network(self) -> None:
        # Training runs the encoder through encode(), not forward(); an
        # attribute of the instance, so the parameters keep their names.
        self.model.encode = torch.compile(self.model.encode, dynamic=True)

    # ------------------------------------------------------------------
    # Objectives

    def _mask_seeds(self, batch, stream: int, step: int) -> list[int]:
        # One seed per (run seed, stream, step, molecule): independent of
        # the batch a molecule is in and of the process that holds it.
        base = ((int(self.config['seed']) * 1_000_003 + stream)
                * 1_000_000_007 + int(step)) * 10_000_019
        return [(base + int(i)) % 2**63 for i in batch.corpus_line.tolist()]

    def _global_count(self, count: Tensor) -> Optional[Tensor]:
        r"""The mean of :obj:`count` over the processes (training with
        several), which makes the processes' averaged loss that of their
        global batch; :obj:`None` with one process."""
        if self.trainer.world_size == 1:
            return None
        total = self.trainer.strategy.reduce(count.float(), reduce_op='sum')
        return total / self.trainer.world_size

    def _losses(self, batch, stream: int, step: int,
                training: bool) -> dict[str, Tensor]:
        masked = mask_atoms(batch.ptr.diff().tolist(),
                            self._mask_seeds(batch, stream, step),
                            self.mask_rate).to(batch.x.device)
        tokens, node_mask = self.model.encode(batch, masked, self.mask_token)
        out: dict[str, Tensor] = {}
        loss = tokens.new_zeros(())
        if self.atom_weight > 0:
            nodes = tokens[:, 1:][node_mask]
            normalizer = (self._global_count(masked.sum()) if training
                          else None)
            atom_loss, correct = self.atom_head.loss(
                nodes[masked], batch.x[masked], normalizer)
            out.update(atom_loss=atom_loss, correct=correct)
            loss = loss + self.atom_weight * atom_loss
        if self.descriptor_weight > 0:
            pred = self.model.head_output(tokens[:, 0])
            normalizer = (self._global_count((~torch.isnan(batch.y)).sum())
                          if training else None)
            out.update(descriptor_pred=pred, descriptor_loss=descriptor_loss(
                pred, batch.y, normalizer))
            loss = loss + self.descriptor_weight * out['descriptor_loss']
        out['loss'] = loss
        return out

    # ------------------------------------------------------------------
    # Steps

    def training_step(self, batch, batch_idx: int) -> Tensor:
        losses = self._losses(batch, _TRAIN_STREAM, self.global_step,
                              training=True)
        loss = losses['loss']
        self.check_finite(loss)
        self.record_train_loss(loss, int(batch.num_graphs))
        return loss

    def validation_step(self, batch, batch_idx: int) -> None:
        losses = self._losses(batch, _VAL_STREAM, 0, training=False)
        means = self.val_means
        if 'atom_loss' in losses:
            correct = losses['correct'].float()
            means['atom_loss'].update(losses['atom_loss'],
                                      weight=correct.size(0))
            means['element_accuracy'].update(correct[:, 0])
            means['atom_feature_accuracy'].update(correct.mean(dim=1))
        if 'descriptor_loss' in losses:
            self._update_descriptor_sums(losses['descriptor_pred'], batch.y)
        self.val_graph_tokens.update(self.model.graph_embedding(batch))

    def _update_descriptor_sums(self, pred: Tensor, target: Tensor) -> None:
        target = target.view(pred.shape).double()
        present = ~torch.isnan(target)
        y = torch.where(present, target, torch.zeros_like(target))
        error = torch.where(present, pred.double() - target,
                            torch.zeros_like(target))
        for metric, value in zip(self.val_descriptor_sums,
                                 (present.double(), y, y * y, error * error)):
            metric.update(value.sum(dim=0))

    def _descriptor_scores(self) -> tuple[float, float]:
        r"""Mean squared error over all present values, and the mean over
        descriptors of :math:`R^2 = 1 - SSE / SST`."""
        if self.val_descriptor_sums[0].update_count == 0:
            return math.nan, math.nan
        count, total, squares, sse = (m.compute().double()
                                      for m in self.val_descriptor_sums)
        mse = float(sse.sum() / count.sum().clamp(min=1))
        sst = squares - total * total / count.clamp(min=1)
        r2 = 1 - sse / sst
        valid = (count > 1) & (sst > 0)
        return mse, float(r2[valid].mean()) if valid.any() else math.nan

    def _geometry(self) -> tuple[float, float]:
        if self.val_graph_tokens.update_count == 0:
            return math.nan, math.nan
        tokens = self.val_graph_tokens.compute()
        if isinstance(tokens, (list, tuple)):
            tokens = torch.cat(list(tokens))
        if tokens.size(0) < 2:
            return math.nan, math.nan
        return uniformity(tokens.float()), anisotropy(tokens.float())

    def on_validation_epoch_end(self) -> None:
        values = {name: (float(metric.compute()) if metric.update_count
                         else math.nan)
                  for name, metric in self.val_means.items()}
        mse, r2 = self._descriptor_scores()
        # The weighted sum of the two global means (not a mean of the
        # batches' sums, whose atom counts differ).
        values['loss'] = ((self.atom_weight * values['atom_loss']
                           if self.atom_weight > 0 else 0.0) +
                          (self.descriptor_weight * mse
                           if self.descriptor_weight > 0 else 0.0))
        uniform, aniso = self._geometry()
        for metric in (*self.val_means.values(), *self.val_descriptor_sums,
                       self.val_graph_tokens):
            metric.reset()
        if self.trainer.sanity_checking:
            return
        self._tick()
        self.log('val/metric', values['loss'], sync_dist=True, prog_bar=True)
        self.log('val/loss', values['loss'], sync_dist=True)
        row = {
            'epoch': int(self.current_epoch),
            'step': int(self.global_step),
            'train_loss': self.epoch_train_loss(),
            'val_loss': values['loss'],
            'val_atom_loss': values['atom_loss'],
            'val_element_accuracy': values['element_accuracy'],
            'val_atom_feature_accuracy': values['atom_feature_accuracy'],
            'val_descriptor_mse': mse,
            'val_descriptor_r2': r2,
            'val_graph_token_uniformity': uniform,
            'val_graph_token_anisotropy': aniso,
            'lr': float(self.current_lr()),
            # Graphs of all processes per second of training batches.
            'graphs_per_s': (self.train_graphs * self.trainer.world_size /
                             self.train_time_s if self.train_time_s else
                             math.nan),
            'wall_time_s': float(self.wall_time_s),
            'cpu_time_s': float(self.cpu_time_s),
        }
        self.append_history(row, PRETRAINING_COLUMNS, key='step')
        # An epoch of the corpus spans many validations: each row's training
        # loss is the mean since the previous one.
        self.train_loss.reset()
        if self.trainer.is_global_zero:
            # Only the objectives the run trains (the others are NaN).
            scores = ([f"element accuracy {values['element_accuracy']:.3f}"]
                      if self.atom_weight > 0 else []) + (
                [f"descriptor R2 {r2:.3f}"] if self.descriptor_weight > 0
                else [])
            self.print(', '.join([
                f"step {row['step']:,}: val loss {values['loss']:.4f}",
                *scores, f"{row['graphs_per_s']:.0f} graphs/s"]))

    # ------------------------------------------------------------------
    # Checkpoint state (plain values: loads with weights_only=True)

    def extra_state(self) -> dict:
        return {'descriptor_scaler': (self.scaler.state_dict()
                                      if self.scaler is not None else None),
                'corpus_sha256': self.corpus_sha256}

    def load_extra_state(self, state: dict) -> None:
        digests = state.get('corpus_sha256')
        if digests and self.corpus_sha256:
            changed = [name for name in ('train', 'val')
                       if digests.get(name) != self.corpus_sha256.get(name)]
            if changed:
                raise DataError(
                    f"The pretraining corpus changed since the run started "
                    f"({' and '.join(f'{name}.smi' for name in changed)}: "
                    f"another SHA-256 than the checkpoint's); resume with "
                    f"the corpus it was started on")
        saved = state.get('descriptor_scaler')
        if saved is not None and self.scaler is not None and not digests:
            # A checkpoint written before the digests were kept: its scaler,
            # fitted on the corpus's first molecules, is the only witness.
            current = self.scaler.state_dict()
            if not (math.isclose(saved['clip'], current['clip'])
                    and _close(saved['mean'], current['mean'])
                    and _close(saved['std'], current['std'])):
                raise DataError(
                    "The checkpoint's descriptor scaler differs from the one "
                    "fitted on this corpus: the corpus changed since the run "
                    "started; resume with the corpus it was started on")
        if saved is not None:
            self.scaler = DescriptorScaler.from_state_dict(saved)


def _close(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(
        math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12) for x, y in zip(a, b))
