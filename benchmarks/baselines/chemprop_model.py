r"""chemprop's default D-MPNN as ``chemprop train`` (chemprop 2.3) builds it,
for the baseline of :mod:`~benchmarks.baselines.chemprop_dmpnn`:
its settings, its datasets of our splits, the model, and its predictions
in original units."""
from __future__ import annotations

import numpy as np
import torch
from chemprop import nn as chemprop_nn
from chemprop.data import MoleculeDatapoint, MoleculeDataset, build_dataloader
from chemprop.featurizers import (MultiHotAtomFeaturizer,
                                  MultiHotBondFeaturizer,
                                  SimpleMoleculeMolGraphFeaturizer)
from chemprop.models import MPNN

from graphormer_sepnorm.data.molecule_splits import MoleculeSplit

__all__ = ['CHEMPROP_DEFAULTS', 'TASKS', 'chemprop_datasets',
           'build_chemprop_model', 'predict_chemprop']

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
#: chemprop logs the validation metric under.
TASKS = {
    'zinc_subset': ('ZINC-subset', 'mae', False, 'val/mae'),
    'molhiv': ('ogbg-molhiv', 'rocauc', True, 'val/roc'),
}


def chemprop_datasets(splits: dict[str, MoleculeSplit]):
    r"""chemprop's featurizer (V2 multi-hot atoms and bonds) and one cached
    :class:`~chemprop.data.MoleculeDataset` per split of :obj:`splits`."""
    featurizer = SimpleMoleculeMolGraphFeaturizer(
        atom_featurizer=MultiHotAtomFeaturizer.v2(),
        bond_featurizer=MultiHotBondFeaturizer())
    datasets = {}
    for split, part in splits.items():
        points = [MoleculeDatapoint.from_smi(s, y=np.array([t]))
                  for s, t in zip(part.smiles, part.targets)]
        datasets[split] = MoleculeDataset(points, featurizer)
        # Featurize once, as `chemprop train` does unless --no-cache.
        datasets[split].cache = True
    return featurizer, datasets


def build_chemprop_model(dataset: str, featurizer, output_transform) -> MPNN:
    r"""The default D-MPNN for :obj:`dataset` (a regression head with
    :obj:`output_transform` for ZINC, a binary classifier for MolHIV)."""
    d = CHEMPROP_DEFAULTS
    atom_dim, bond_dim = featurizer.shape
    message_passing = chemprop_nn.BondMessagePassing(
        d_v=atom_dim, d_e=bond_dim, d_h=d['message_hidden_dim'],
        bias=d['message_bias'], depth=d['depth'], dropout=d['dropout'],
        activation=d['activation'])
    aggregation = chemprop_nn.NormAggregation(norm=d['aggregation_norm'])
    head = dict(input_dim=message_passing.output_dim, n_tasks=1,
                hidden_dim=d['ffn_hidden_dim'], n_layers=d['ffn_num_layers'],
                dropout=d['dropout'], activation=d['activation'])
    if dataset == 'zinc_subset':
        predictor = chemprop_nn.RegressionFFN(
            output_transform=output_transform, **head)
        metric = chemprop_nn.MAE()
    else:
        predictor = chemprop_nn.BinaryClassificationFFN(**head)
        metric = chemprop_nn.BinaryAUROC()
    return MPNN(message_passing, aggregation, predictor,
                batch_norm=d['batch_norm'], metrics=[metric],
                warmup_epochs=d['warmup_epochs'], init_lr=d['init_lr'],
                max_lr=d['max_lr'], final_lr=d['final_lr'])


def predict_chemprop(model: MPNN, dataset, batch_size: int) -> np.ndarray:
    r"""Predictions in original units (ZINC) or probabilities (MolHIV)."""
    loader = build_dataloader(dataset, batch_size, num_workers=0,
                              shuffle=False, drop_last=False)
    model.eval()
    outputs = []
    with torch.inference_mode():
        for batch in loader:
            bmg, V_d, X_d, *_ = batch
            outputs.append(model(bmg, V_d, X_d)[:, 0])
    return torch.cat(outputs).numpy().astype(np.float64)
