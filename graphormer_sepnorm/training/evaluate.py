r"""Re-evaluation of a saved model on a split of its dataset."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Union

import torch
import yaml

from ..data.datasets import load_data_splits
from .config import OPTIONS
from .metrics import compute_metrics

__all__ = ['evaluate_checkpoint', 'load_checkpoint_split',
           'resolve_checkpoint']

PathLike = Union[str, Path]


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
    if full_split:
        data.update(limit_train=None, limit_val=None, limit_test=None)
    # Cards written before every data key was recorded lack some: the
    # defaults fill them.
    data = {**{option.key.split('.', 1)[1]: option.default
               for option in OPTIONS if option.key.startswith('data.')},
            **data}
    splits = load_data_splits(data)
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
    mean = torch.tensor(card.target_mean, dtype=torch.double).view(-1)
    std = torch.tensor(card.target_std, dtype=torch.double).view(-1)
    preds, targets = [], []
    for batch in DataLoader(dataset, batch_size=batch_size):
        batch = batch.to(device)
        out = model(batch).double().cpu()
        if info.task == 'regression':
            out = out * std + mean
        preds.append(out)
        targets.append(batch.y.double().cpu().view(out.shape))
    metric = card.extra.get('metric') or info.metric
    metrics = compute_metrics(info.task, torch.cat(preds), torch.cat(targets),
                              info.target_names, split=split)
    return {
        'dataset': info.name,
        'split': split,
        'metric': metric,
        'value': metrics[metric],
        'metrics': metrics,
        'num_graphs': len(dataset),
        'checkpoint': str(path),
    }


def format_result(result: dict) -> str:
    return json.dumps(result, indent=2)
