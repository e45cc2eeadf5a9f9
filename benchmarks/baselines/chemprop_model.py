r"""chemprop's default D-MPNN as ``chemprop train`` (chemprop 2.3) builds it,
for the baseline of :mod:`~benchmarks.baselines.chemprop_dmpnn`:
its settings, its datasets of our splits, the model, and its predictions
in original units."""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import torch
import torchmetrics
from chemprop import nn as chemprop_nn
from chemprop.data import MoleculeDatapoint, MoleculeDataset, build_dataloader
from chemprop.featurizers import (MultiHotAtomFeaturizer,
                                  MultiHotBondFeaturizer,
                                  SimpleMoleculeMolGraphFeaturizer)
from chemprop.models import MPNN
from chemprop.utils import make_mol

from graphormer_sepnorm.data.molecule_splits import MoleculeSplit
from graphormer_sepnorm.training.metrics import compute_metrics

from .chemprop_descriptors import molecule_descriptors, molecule_featurizers

__all__ = ['CHEMPROP_DEFAULTS', 'TASKS', 'TaskMeanAUROC',
           'chemprop_datasets', 'build_chemprop_model', 'predict_chemprop']

#: The ``chemprop train`` defaults this baseline uses (chemprop 2.3).
CHEMPROP_DEFAULTS = {
    'message_passing': 'bond',
    'message_hidden_dim': 300,
    'depth': 3,
    'message_bias': False,
    'activation': 'relu',
    'dropout': 0.0,
    'aggregation': 'norm',
    'aggregation_norm': 100.0,
    'ffn_hidden_dim': 300,
    'ffn_num_layers': 1,
    'batch_norm': False,
    'atom_features': 'V2',
    'warmup_epochs': 2,
    'init_lr': 1e-4,
    'max_lr': 1e-3,
    'final_lr': 1e-4,
    'batch_size': 64,
    'max_epochs': 50,
}

#: Per dataset: title, metric, whether higher is better, and the key
#: chemprop logs the validation metric under (:obj:`"csv"`: the binary tasks
#: of a CSV training config, titled by its file).
TASKS = {
    'zinc_subset': ('ZINC-subset', 'mae', False, 'val/mae'),
    'molhiv': ('ogbg-molhiv', 'rocauc', True, 'val/roc'),
    'csv': ('', 'rocauc', True, 'val/roc'),
}


class TaskMeanAUROC(torchmetrics.Metric):
    r"""The ROC-AUC of several binary tasks as MoleculeNet and our runs
    score it (:func:`~graphormer_sepnorm.training.metrics.compute_metrics`):
    per task on its labelled molecules, then the mean over the tasks whose
    labels hold both classes. chemprop's own ``roc`` pools every task's
    labels into one curve, which would select a checkpoint on another
    quantity than the one reported. Logged as ``val/roc``."""
    alias = 'roc'
    higher_is_better = True
    full_state_update = False

    def __init__(self, task_weights=1.0, **kwargs):
        # chemprop rebuilds a checkpoint's metrics with their task_weights
        # buffer (and other attributes); the mean weighs tasks equally.
        super().__init__()
        self.register_buffer('task_weights', torch.ones(1, 1))
        self.add_state('preds', default=[], dist_reduce_fx='cat')
        self.add_state('targets', default=[], dist_reduce_fx='cat')

    def update(self, preds: torch.Tensor, targets: torch.Tensor,
               mask: torch.Tensor, *args, **kwargs) -> None:
        self.preds.append(preds.detach())
        self.targets.append(torch.where(mask, targets, torch.nan))

    def compute(self) -> torch.Tensor:
        with warnings.catch_warnings():
            # A task without both classes in validation is left out of the
            # mean every epoch; the run's final scores say so once.
            warnings.simplefilter('ignore')
            value = compute_metrics('binary', torch.cat(self.preds).float(),
                                    torch.cat(self.targets).float())['rocauc']
        return torch.tensor(value)


def chemprop_datasets(splits: dict[str, MoleculeSplit],
                      featurizer_names: Sequence[str] = ()):
    r"""chemprop's featurizer (V2 multi-hot atoms and bonds) and one cached
    :class:`~chemprop.data.MoleculeDataset` per split of :obj:`splits`.

    Args:
        splits (dict): :class:`MoleculeSplit` per split name.
        featurizer_names (Sequence[str], optional): chemprop molecule
            featurizers whose outputs become each molecule's extra
            descriptors :obj:`x_d`
            (:mod:`~benchmarks.baselines.chemprop_descriptors`; unscaled).
            (default: none)
    """
    featurizer = SimpleMoleculeMolGraphFeaturizer(
        atom_featurizer=MultiHotAtomFeaturizer.v2(),
        bond_featurizer=MultiHotBondFeaturizer())
    extra = molecule_featurizers(featurizer_names)
    datasets = {}
    for split, part in splits.items():
        # As MoleculeDatapoint.from_smi, with the descriptors of its mol.
        mols = [make_mol(s) for s in part.smiles]
        points = [MoleculeDatapoint(mol, y=np.atleast_1d(t), name=s,
                                    x_d=molecule_descriptors(extra, mol))
                  for s, mol, t in zip(part.smiles, mols, part.targets)]
        datasets[split] = MoleculeDataset(points, featurizer)
        # Featurize once, as `chemprop train` does unless --no-cache.
        datasets[split].cache = True
    return featurizer, datasets


def build_chemprop_model(dataset: str, featurizer, output_transform,
                         n_tasks: int = 1, n_descriptors: int = 0,
                         descriptor_transform=None) -> MPNN:
    r"""The default D-MPNN for :obj:`dataset` (a regression head with
    :obj:`output_transform` for ZINC, a binary classifier for MolHIV, a
    classifier of :obj:`n_tasks` binary tasks, selected on
    :class:`TaskMeanAUROC`, for a CSV config).

    Args:
        dataset (str): :obj:`"zinc_subset"`, :obj:`"molhiv"` or :obj:`"csv"`.
        featurizer: The molecule-graph featurizer of the datasets.
        output_transform: The regression head's unscaling (ZINC), else
            :obj:`None`.
        n_tasks (int, optional): Binary tasks of a CSV config.
            (default: :obj:`1`)
        n_descriptors (int, optional): Extra descriptor columns, appended
            to the aggregated fingerprint (the head's input grows by them).
            (default: :obj:`0`)
        descriptor_transform (ScaleTransform, optional): The model's
            :obj:`X_d_transform`, from
            :func:`~benchmarks.baselines.chemprop_descriptors.
            scale_descriptors`. (default: :obj:`None`)
    """
    d = CHEMPROP_DEFAULTS
    atom_dim, bond_dim = featurizer.shape
    message_passing = chemprop_nn.BondMessagePassing(
        d_v=atom_dim, d_e=bond_dim, d_h=d['message_hidden_dim'],
        bias=d['message_bias'], depth=d['depth'], dropout=d['dropout'],
        activation=d['activation'])
    aggregation = chemprop_nn.NormAggregation(norm=d['aggregation_norm'])
    head = dict(input_dim=message_passing.output_dim + n_descriptors,
                n_tasks=n_tasks,
                hidden_dim=d['ffn_hidden_dim'], n_layers=d['ffn_num_layers'],
                dropout=d['dropout'], activation=d['activation'])
    if dataset == 'zinc_subset':
        predictor = chemprop_nn.RegressionFFN(
            output_transform=output_transform, **head)
        metric = chemprop_nn.MAE()
    else:
        predictor = chemprop_nn.BinaryClassificationFFN(**head)
        metric = TaskMeanAUROC() if dataset == 'csv' else \
            chemprop_nn.BinaryAUROC()
    return MPNN(message_passing, aggregation, predictor,
                batch_norm=d['batch_norm'], metrics=[metric],
                warmup_epochs=d['warmup_epochs'], init_lr=d['init_lr'],
                max_lr=d['max_lr'], final_lr=d['final_lr'],
                X_d_transform=descriptor_transform)


def predict_chemprop(model: MPNN, dataset, batch_size: int) -> np.ndarray:
    r"""Predictions in original units (ZINC) or probabilities (MolHIV and
    CSV tasks) of :obj:`dataset`, whose descriptors (if any) are raw (the
    model scales them in evaluation mode): :obj:`[molecules]` for one
    task, else :obj:`[molecules, tasks]`."""
    loader = build_dataloader(dataset, batch_size, num_workers=0,
                              shuffle=False, drop_last=False)
    model.eval()
    outputs = []
    with torch.inference_mode():
        for batch in loader:
            bmg, V_d, X_d, *_ = batch
            outputs.append(model(bmg, V_d, X_d))
    predictions = torch.cat(outputs).numpy().astype(np.float64)
    return predictions[:, 0] if predictions.shape[1] == 1 else predictions
