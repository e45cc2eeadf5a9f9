r"""Metrics (ZINC: MAE in original units; MolHIV: OGB's ROC-AUC) and
re-evaluation of a saved model on a dataset split."""
from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any, Optional, Union

import torch
import yaml
from torch import Tensor

from ..data.datasets import dataset_info, load_splits

__all__ = ['compute_metric', 'metric_name', 'evaluate_checkpoint',
           'load_checkpoint_split', 'resolve_checkpoint']

PathLike = Union[str, Path]


def metric_name(dataset: str) -> str:
    return dataset_info(dataset).metric


def compute_metric(metric: str, preds: Tensor, targets: Tensor) -> float:
    r"""The metric over all predictions (original units / logits).

    * :obj:`"mae"`: mean absolute error.
    * :obj:`"rocauc"`: :class:`ogb.graphproppred.Evaluator` for
      :obj:`ogbg-molhiv` (NaN, with a warning, when the targets hold a
      single class).
    """
    preds = preds.detach().double().view(-1).cpu()
    targets = targets.detach().double().view(-1).cpu()
    if preds.numel() == 0:
        return math.nan
    if metric == 'mae':
        return float((preds - targets).abs().mean())
    if metric == 'rocauc':
        from ogb.graphproppred import Evaluator
        if targets.unique().numel() < 2:
            warnings.warn("ROC-AUC needs both classes among the targets; "
                          "reporting NaN (use more graphs in this split)")
            return math.nan
        result = Evaluator('ogbg-molhiv').eval({
            'y_true': targets.view(-1, 1).numpy(),
            'y_pred': preds.view(-1, 1).numpy()
        })
        return float(result['rocauc'])
    raise ValueError(f"Unknown metric {metric!r}")


def resolve_checkpoint(path: PathLike) -> Path:
    r"""A :obj:`model.safetensors` file, or the one inside a run
    directory."""
    path = Path(path)
    if path.is_dir():
        candidate = path / 'model.safetensors'
        if not candidate.is_file():
            raise FileNotFoundError(
                f"{path} is a folder without model.safetensors; pass a run "
                f"directory of scripts/train.py (written when training ends) "
                f"or the .safetensors file itself")
        return candidate
    if not path.is_file():
        raise FileNotFoundError(f"Checkpoint {path} does not exist; pass a "
                                f"model.safetensors file or a run directory")
    return path


def load_checkpoint_split(checkpoint: PathLike, split: str = 'test',
                          data_overrides: Optional[dict[str, Any]] = None,
                          device: str = 'cpu', full_split: bool = False):
    r"""A saved model (evaluation mode) with a split of its dataset.

    The data settings (dataset, root, raw source, limits) come from the
    model card (written by training) and then from :obj:`data_overrides`.

    Args:
        checkpoint (str or Path): :obj:`model.safetensors` or a run
            directory.
        split (str): :obj:`"train"`, :obj:`"val"` or :obj:`"test"`.
        data_overrides (dict, optional): *e.g.* :obj:`{"root": "/data"}`.
        device (str, optional): Where to put the model.
        full_split (bool, optional): Ignore the run's :obj:`limit_*`.
    Returns:
        :obj:`(model, card, info, dataset, path)`.
    """
    from ..checkpoint import load_model
    if split not in ('train', 'val', 'test'):
        raise ValueError(f"split must be 'train', 'val' or 'test', got "
                         f"{split!r}")
    path = resolve_checkpoint(checkpoint)
    model, card = load_model(path, map_location=device)
    data = dict(card.extra.get('data') or {})
    config_file = path.parent / 'config.yaml'
    if not data and config_file.is_file():
        with open(config_file) as f:
            data = dict(yaml.safe_load(f).get('data', {}))
    data.update(data_overrides or {})
    if 'name' not in data:
        raise ValueError(f"{path}: the model card names no dataset; pass a "
                         f"run directory with config.yaml")
    limits = {k: (None if full_split else data.get(k))
              for k in ('limit_train', 'limit_val', 'limit_test')}
    splits = load_splits(data['name'], data.get('root', 'data'),
                         data.get('max_nodes', 512), data.get('raw_source'),
                         **limits)
    return model, card, splits.info, splits[split], path


@torch.no_grad()
def evaluate_checkpoint(checkpoint: PathLike, split: str = 'test',
                        data_overrides: Optional[dict[str, Any]] = None,
                        batch_size: int = 256, device: str = 'cpu',
                        full_split: bool = False) -> dict[str, Any]:
    r"""Re-evaluates a saved model on a split of its dataset (arguments as
    in :func:`load_checkpoint_split`, plus :obj:`batch_size`).

    Returns:
        dict with :obj:`metric`, :obj:`value`, :obj:`split`,
        :obj:`num_graphs`, :obj:`dataset`.
    """
    from torch_geometric.loader import DataLoader

    model, card, info, dataset, path = load_checkpoint_split(
        checkpoint, split, data_overrides, device, full_split)
    preds, targets = [], []
    for batch in DataLoader(dataset, batch_size=batch_size):
        batch = batch.to(device)
        out = model(batch).view(-1).double()
        if info.task == 'regression':
            out = out * card.target_std + card.target_mean
        preds.append(out.cpu())
        targets.append(batch.y.view(-1).double().cpu())
    value = compute_metric(info.metric, torch.cat(preds), torch.cat(targets))
    return {
        'dataset': info.name,
        'split': split,
        'metric': info.metric,
        'value': value,
        'num_graphs': len(dataset),
        'checkpoint': str(path),
    }


def format_result(result: dict) -> str:
    return json.dumps(result, indent=2)
