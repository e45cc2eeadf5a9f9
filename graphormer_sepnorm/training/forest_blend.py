r"""The forest of :obj:`model.forest_trees`, fitted when a run ends: on the
training split's molecule features, its blend weight chosen on the
validation split, attached to the selected model
(:func:`~.run_results.finalize_run`), before test is scored."""
from __future__ import annotations

import time
from typing import Any, Sequence, Union

import torch

from ..data.datasets import graph_values
from ..forest import FOREST_MODULE, choose_blend_weight, fit_feature_forest
from .evaluate import per_target, predict_split, written_scores
from .metrics import HIGHER_IS_BETTER, compute_metrics

__all__ = ['fit_forest_blend']


def fit_forest_blend(model: torch.nn.Module, splits, task: str, metric: str,
                     trees: int, seed: int,
                     target_mean: Union[float, Sequence[float]],
                     target_std: Union[float, Sequence[float]],
                     target_names: Sequence[str] = (),
                     batch_size: int = 256) -> dict[str, Any]:
    r"""Fits :obj:`trees` trees per target on the training split, chooses
    the blend weight on the validation split by :obj:`metric`, attaches the
    forest to :obj:`model` (:data:`~graphormer_sepnorm.forest.FOREST_MODULE`)
    and returns what :obj:`results.json` records of it: the trees, the
    weight, the validation metric of the network, the forest and the
    blend (and at every weight tried), and the CPU and wall-clock seconds
    spent (fitting, and predicting the validation split).
    """
    wall, cpu = time.perf_counter(), time.process_time()
    train = splits['train']
    features = graph_values(train, 'graph_features').numpy()
    labels = graph_values(train, 'y').double().numpy()
    forest = fit_feature_forest(features, labels, task, trees, seed=seed,
                                threads=torch.get_num_threads())
    _, network, targets = predict_split(model, splits['val'], task,
                                        target_mean, target_std, batch_size)
    network = written_scores(network, task)  # probabilities or values
    by_forest = forest(graph_values(splits['val'], 'graph_features'))
    std = per_target(target_std)

    def score(blend: torch.Tensor) -> float:
        return compute_metrics(task, blend, targets, target_names,
                               split='valid', target_std=std)[metric]

    weight, scores = choose_blend_weight(network, by_forest, score,
                                         HIGHER_IS_BETTER[metric])
    forest.weight.fill_(weight)
    setattr(model, FOREST_MODULE, forest)
    return {
        'trees_per_target': trees,
        'max_features': 'sqrt',
        'seed': seed,
        'nodes': int(forest.left.numel()),
        'weight': weight,
        'val_metric_network': scores[1.0],
        'val_metric_forest': scores[0.0],
        'val_metric_blend': scores[weight],
        'val_metric_by_weight': {f'{w:.2f}': s for w, s in scores.items()},
        'cpu_time_s': time.process_time() - cpu,
        'wall_time_s': time.perf_counter() - wall,
    }
