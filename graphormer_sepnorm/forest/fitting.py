r"""Fitting a :class:`~.trees.FeatureForest` on the training split with
scikit-learn, and choosing its blend weight on the validation split."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch

from .trees import FeatureForest

__all__ = ['fit_feature_forest', 'forest_from_estimators',
           'choose_blend_weight', 'BLEND_WEIGHTS']

#: The network's shares :math:`w` tried on validation, 1 (the network
#: alone) first, so that a tie keeps the network.
BLEND_WEIGHTS: tuple[float, ...] = tuple(round(1 - k / 20, 2)
                                         for k in range(21))


def fit_feature_forest(features: np.ndarray, targets: np.ndarray, task: str,
                       trees: int, seed: int = 0, threads: int = 1
                       ) -> FeatureForest:
    r"""A random forest per output on :obj:`features`, with blend weight
    1 (:func:`choose_blend_weight` sets it).

    Each output's forest is scikit-learn's :class:`RandomForestClassifier`
    (binary) or :class:`RandomForestRegressor` (regression) with
    :obj:`max_features="sqrt"` and otherwise its defaults (bootstrap
    samples, trees grown until their leaves are pure), fitted on the
    molecules that have that output's label.

    Args:
        features (numpy.ndarray): :obj:`[num_molecules, channels]`, the
            molecule features of the training split.
        targets (numpy.ndarray): :obj:`[num_molecules, num_targets]`,
            :obj:`NaN` where a label is missing; regression targets in
            their own units.
        task (str): :obj:`"binary"` or :obj:`"regression"`.
        trees (int): Trees per output.
        seed (int, optional): The random state of the first output's
            forest (the :obj:`k`-th output's is :obj:`seed + k`).
        threads (int, optional): Processes fitting trees (scikit-learn's
            :obj:`n_jobs`).

    Raises:
        ValueError: For an output without labels.
    """
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    features = np.asarray(features, dtype=np.float32)
    targets = np.asarray(targets, dtype=np.float64).reshape(len(features), -1)
    if task not in ('binary', 'regression'):
        raise ValueError(f"A forest predicts a binary or a regression task, "
                         f"not {task!r}")
    estimators = []
    for k in range(targets.shape[1]):
        labeled = ~np.isnan(targets[:, k])
        if not labeled.any():
            raise ValueError(f"Output {k} has no labeled training molecule "
                             f"to fit its forest on")
        forest_class = (RandomForestClassifier if task == 'binary'
                        else RandomForestRegressor)
        forest = forest_class(n_estimators=trees, max_features='sqrt',
                              random_state=seed + k, n_jobs=threads)
        forest.fit(features[labeled], targets[labeled, k])
        estimators.append(forest)
    return forest_from_estimators(estimators, features.shape[1])


def forest_from_estimators(estimators: Sequence, in_channels: int,
                           weight: float = 1.0) -> FeatureForest:
    r"""The :class:`FeatureForest` of fitted scikit-learn forests, one per
    output, each with the same number of trees."""
    counts = {len(forest.estimators_) for forest in estimators}
    if len(counts) != 1:
        raise ValueError("Every output's forest must have as many trees")
    arrays = {name: [] for name in ('left', 'right', 'feature', 'threshold',
                                    'value')}
    roots, offset = [], 0
    for forest in estimators:
        roots.append([])
        for tree in forest.estimators_:
            structure = tree.tree_
            leaf = structure.children_left < 0
            roots[-1].append(offset)
            arrays['left'].append(np.where(
                leaf, -1, structure.children_left + offset))
            arrays['right'].append(np.where(
                leaf, -1, structure.children_right + offset))
            arrays['feature'].append(np.where(leaf, 0, structure.feature))
            arrays['threshold'].append(structure.threshold)
            arrays['value'].append(_leaf_values(
                tree, getattr(forest, 'classes_', None)))
            offset += structure.node_count
    tensors = {name: torch.from_numpy(np.concatenate(parts))
               for name, parts in arrays.items()}
    return FeatureForest(**tensors, roots=torch.tensor(roots),
                         weight=weight, in_channels=in_channels)


def _leaf_values(tree, classes) -> np.ndarray:
    r"""Each node's prediction: the positive class's fraction of its
    training samples (a classifier, whose forest's labels are
    :obj:`classes`), or their mean (a regressor, :obj:`classes` None)."""
    value = tree.tree_.value[:, 0, :]
    if classes is None:
        return value[:, 0].astype(np.float64)
    positive = np.flatnonzero(np.asarray(classes) == 1)
    if positive.size == 0:  # trained on negatives only
        return np.zeros(len(value))
    return (value[:, positive[0]] / value.sum(axis=1)).astype(np.float64)


def choose_blend_weight(network: torch.Tensor, forest: torch.Tensor,
                        score: Callable[[torch.Tensor], float],
                        higher_is_better: bool
                        ) -> tuple[float, dict[float, float]]:
    r"""The network's share :math:`w` of :data:`BLEND_WEIGHTS` whose blend
    :math:`w \cdot \mathrm{network} + (1 - w) \cdot \mathrm{forest}`
    scores best, and every weight's score.

    Args:
        network (Tensor): The network's predictions on the validation
            split (probabilities, or values in the targets' units).
        forest (Tensor): The forest's, same shape.
        score (callable): The validation metric of a blend.
        higher_is_better (bool): Whether a higher score is better.

    Returns:
        :obj:`(weight, scores)`; a tie goes to the larger :math:`w` (the
        network's share), and undefined (NaN) scores never win.
    """
    scores = {w: float(score(w * network + (1 - w) * forest))
              for w in BLEND_WEIGHTS}
    defined = {w: s for w, s in scores.items() if s == s}
    if not defined:
        return 1.0, scores
    pick = max if higher_is_better else min
    best = pick(defined.values())
    return next(w for w, s in defined.items() if s == best), scores
