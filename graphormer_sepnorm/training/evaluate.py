r"""Re-evaluation of a saved model on a split of its dataset, and the
per-molecule predictions of a split (``test_predictions.csv``)."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import torch
import yaml

from ..data.csv_splits import identifier_columns
from ..data.datasets import TargetScaling, load_data_splits
from ..forest import model_forest
from .config import OPTIONS
from .metrics import compute_metrics

__all__ = ['evaluate_checkpoint', 'load_checkpoint_split',
           'resolve_checkpoint', 'predict_split', 'write_split_predictions',
           'written_scores', 'per_target']

PathLike = Union[str, Path]


def resolve_checkpoint(path: PathLike) -> Path:
    r"""A :obj:`model.safetensors` file, or the one inside a run
    directory (:func:`~graphormer_sepnorm.checkpoint.resolve_model_file`:
    an unfinished or a pretraining run is named as such; raises
    :class:`~graphormer_sepnorm.checkpoint.CheckpointError`)."""
    from ..checkpoint import resolve_model_file
    return resolve_model_file(path)


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
    from ..checkpoint import load_model, refuse_backbone
    if split not in ('train', 'val', 'test'):
        raise ValueError(f"split must be 'train', 'val' or 'test', got "
                         f"{split!r}")
    path = resolve_checkpoint(checkpoint)
    model, card = load_model(path, map_location=device)
    refuse_backbone(card, path)
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
    features = card.extra.get('molecule_features')
    if features:
        # The model's own fitted features (its card), not refitted.
        from ..data.graph_features import add_graph_features
        from ..data.molecule_features import MoleculeFeaturizer
        splits, _, _ = add_graph_features(
            splits, data, MoleculeFeaturizer.from_state_dict(features))
    return model, card, splits.info, splits[split], path


@torch.no_grad()
def predict_split(model: torch.nn.Module, dataset, task: str,
                  target_mean: Union[float, Sequence[float]],
                  target_std: Union[float, Sequence[float]],
                  batch_size: int = 256, device: str = 'cpu'
                  ) -> tuple[list[int], torch.Tensor, torch.Tensor]:
    r"""The model's predictions on every graph of a split, in its order.

    Args:
        model (torch.nn.Module): A :class:`GraphormerSepNorm` (put in
            evaluation mode here).
        dataset: The split (a PyG in-memory dataset or an index view of
            one).
        task (str): :obj:`"regression"` (outputs are de-standardized with
            :obj:`target_mean` and :obj:`target_std`) or :obj:`"binary"`
            (outputs stay logits). A model with a blended forest
            (:func:`~graphormer_sepnorm.forest.model_forest`) gives the
            blend: values, or the logits of the blended probabilities.
        target_mean, target_std (float or list of float): The training
            split's per-target statistics (the model card's).
        batch_size (int, optional): Graphs per forward.
            (default: :obj:`256`)
        device (str, optional): Where the model is. (default: :obj:`"cpu"`)

    Returns:
        :obj:`(ids, predictions, targets)`: the graphs' indices in the
        dataset the split was cut from (OGB's graph index for MolHIV, the
        position in the split file for ZINC), and two float64 tensors
        :obj:`[num_graphs, num_targets]`.
    """
    from ..data.graphormer_loader import GraphormerDataLoader
    from ..transforms.batch_layout import layout_options_for

    model.eval()
    scaling = TargetScaling(target_mean, target_std)
    forest = model_forest(model)
    preds, targets = [], []
    for batch in GraphormerDataLoader(
            dataset, batch_size, layout=layout_options_for(model, device)):
        batch = batch.to(device)
        out = model(batch).double().cpu()
        out = out.view(out.size(0), -1)
        if task == 'regression':
            out = scaling(out)
        if forest is not None:
            out = (forest.blend_logits(out, batch.graph_features)
                   if task == 'binary' else
                   forest.blend(out, batch.graph_features)).cpu()
        preds.append(out)
        targets.append(batch.y.double().cpu().view(out.shape))
    indices = dataset.indices() if hasattr(dataset, 'indices') else range(
        len(dataset))
    return ([int(i) for i in indices], torch.cat(preds), torch.cat(targets))


def written_scores(predictions: torch.Tensor, task: str) -> torch.Tensor:
    r"""The values :func:`write_split_predictions` writes for the outputs
    of :func:`predict_split`: binary logits as probabilities (their
    sigmoid), regression values as they are. Written with :func:`repr`,
    they read back bit for bit, so metrics computed from them are those of
    the file."""
    return torch.sigmoid(predictions) if task == 'binary' else predictions


def write_split_predictions(path: PathLike, ids: Sequence[int],
                            predictions: torch.Tensor, targets: torch.Tensor,
                            task: str, target_names: Sequence[str] = (),
                            identifiers: Optional[Mapping[str, Sequence]]
                            = None) -> None:
    r"""Writes per-molecule predictions as CSV: :obj:`id` (or the columns
    of :obj:`identifiers`), then per target its label and prediction
    (:obj:`target` and :obj:`prediction` for one target, as the chemprop
    baseline writes them; otherwise :obj:`<name>` and
    :obj:`<name>_prediction`). Binary predictions are probabilities (the
    sigmoid of the logits); a missing label is empty.

    Args:
        identifiers (mapping, optional): Columns written first instead of
            :obj:`id` (name to one value per molecule), *e.g.* a CSV's id
            and SMILES columns from
            :func:`~graphormer_sepnorm.data.csv_splits.identifier_columns`.
    """
    predictions = written_scores(predictions, task)
    leading = dict(identifiers) if identifiers else {'id': list(ids)}
    names = list(target_names)
    if len(names) <= 1 and predictions.size(1) == 1:
        header = list(leading) + ['target', 'prediction']
    else:
        names = names or [f'target_{k}' for k in range(predictions.size(1))]
        header = list(leading) + [c for name in names
                                  for c in (name, f'{name}_prediction')]
    twice = [name for name in header if header.count(name) > 1]
    if twice:
        raise ValueError(f"{path}: column {twice[0]!r} would be written "
                         f"twice; rename the identifier or the target")
    with open(path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for row, (pred, target) in enumerate(zip(predictions.tolist(),
                                                 targets.tolist())):
            cells = [values[row] for values in leading.values()]
            for y, p in zip(target, pred):
                cells += ['' if y != y else repr(y), repr(p)]
            writer.writerow(cells)


def evaluate_checkpoint(checkpoint: PathLike, split: str = 'test',
                        data_overrides: Optional[dict[str, Any]] = None,
                        batch_size: int = 256, device: str = 'cpu',
                        full_split: bool = False,
                        predictions_file: Optional[PathLike] = None
                        ) -> dict[str, Any]:
    r"""Re-evaluates a saved model on a split of its dataset (arguments as
    in :func:`load_checkpoint_split`, plus :obj:`batch_size`, and
    :obj:`predictions_file`: also write the per-molecule predictions there,
    see :func:`write_split_predictions`).

    Returns:
        dict with :obj:`metric`, :obj:`value`, :obj:`split`,
        :obj:`num_graphs`, :obj:`dataset`.
    """
    model, card, info, dataset, path = load_checkpoint_split(
        checkpoint, split, data_overrides, device, full_split)
    ids, preds, targets = predict_split(model, dataset, info.task,
                                        card.target_mean, card.target_std,
                                        batch_size, device)
    if predictions_file is not None:
        data = {**(card.extra.get('data') or {}), **(data_overrides or {})}
        write_split_predictions(
            predictions_file, ids, preds, targets, info.task,
            info.target_names,
            identifier_columns(dataset, data.get('id_column')))
    metric = card.extra.get('metric') or info.metric
    metrics = compute_metrics(info.task, preds, targets, info.target_names,
                              split=split,
                              target_std=per_target(card.target_std))
    return {
        'dataset': info.name,
        'split': split,
        'metric': metric,
        'value': metrics[metric],
        'metrics': metrics,
        'num_graphs': len(dataset),
        'checkpoint': str(path),
    }


def per_target(value: Union[float, Sequence[float]]) -> list[float]:
    r"""A model card's per-target statistic as a list (cards of
    single-target models hold one float)."""
    return [float(v) for v in value] if isinstance(value, (list, tuple)) \
        else [float(value)]
