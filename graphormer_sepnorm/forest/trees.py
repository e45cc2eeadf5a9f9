r"""A random forest over the molecule features, as tensors, blended with
the network's predictions.

The forest of :class:`FeatureForest` reads the same per-graph vector the
graph token does (:obj:`data.graph_features`: Morgan counts, RDKit
descriptors, a CSV's own columns) and its output is averaged with the
network's: :math:`w \cdot \mathrm{network} + (1 - w) \cdot
\mathrm{forest}`, probabilities for a binary task, values in the targets'
units for regression. Its trees are plain arrays (children, split feature,
threshold, leaf value), so a checkpoint holds them as safetensors tensors,
never as a pickled estimator, and predicting needs no scikit-learn.

Fingerprint forests are a strong baseline on molecular property sets (on
OGB MolHIV's leaderboard, Morgan fingerprints with a random forest reach
80.6 ROC-AUC), and they err differently from a graph network: the blend
takes the better of both where validation says so.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ['FeatureForest', 'FOREST_MODULE', 'model_forest']

#: The name under which a fitted forest is a submodule of the model whose
#: predictions it blends (its tensors are :obj:`forest.*` in a checkpoint).
FOREST_MODULE = 'forest'

#: Probabilities are kept this far from 0 and 1 when a blended probability
#: is written as a logit (training's and evaluation's outputs are logits).
_EPS = 1e-12


class FeatureForest(nn.Module):
    r"""Decision trees over the molecule features, :obj:`trees_per_target`
    per output, averaged per output and blended with the network by
    :attr:`weight`.

    Every tree's nodes sit in one flat array (a tree's nodes contiguous,
    children by absolute index, :obj:`-1` at a leaf). A sample goes left at
    a node when its feature is at most the node's threshold, compared in
    float64 (the thresholds are scikit-learn's, midpoints between two
    float32 feature values), so predictions are those of the fitted
    scikit-learn forest.

    Args:
        left (Tensor): :obj:`[num_nodes]` int64, the left child of each
            node, :obj:`-1` at a leaf.
        right (Tensor): :obj:`[num_nodes]` int64, the right child.
        feature (Tensor): :obj:`[num_nodes]` int64, the feature a node
            splits on (any value at a leaf).
        threshold (Tensor): :obj:`[num_nodes]` float64.
        value (Tensor): :obj:`[num_nodes]` float64, a leaf's prediction:
            the fraction of positives of its training samples (binary) or
            their mean target (regression).
        roots (Tensor): :obj:`[num_targets, trees_per_target]` int64, the
            root node of each tree of each output.
        weight (float): The network's share :math:`w` of the blend, in
            :math:`[0, 1]`; the forest's is :math:`1 - w`.
        in_channels (int): The length of the feature vector.
    """
    def __init__(self, left: Tensor, right: Tensor, feature: Tensor,
                 threshold: Tensor, value: Tensor, roots: Tensor,
                 weight: float, in_channels: int) -> None:
        super().__init__()
        sizes = {left.numel(), right.numel(), feature.numel(),
                 threshold.numel(), value.numel()}
        if len(sizes) != 1 or roots.dim() != 2:
            raise ValueError("A forest's node arrays must all have one "
                             "entry per node, and its roots must be "
                             "[num_targets, trees_per_target]")
        if not 0.0 <= float(weight) <= 1.0:
            raise ValueError(f"The blend weight must be in [0, 1], got "
                             f"{float(weight)}")
        self.register_buffer('left', left.long())
        self.register_buffer('right', right.long())
        self.register_buffer('feature', feature.long())
        self.register_buffer('threshold', threshold.double())
        self.register_buffer('value', value.double())
        self.register_buffer('roots', roots.long())
        self.register_buffer('weight', torch.tensor(float(weight),
                                                    dtype=torch.float64))
        self.register_buffer('in_channels', torch.tensor(int(in_channels)))

    @classmethod
    def from_state_dict(cls, state: dict[str, Tensor]) -> 'FeatureForest':
        r"""The forest whose buffers are :obj:`state` (the :obj:`forest.*`
        tensors of a checkpoint, prefix removed)."""
        missing = {'left', 'right', 'feature', 'threshold', 'value', 'roots',
                   'weight', 'in_channels'} - set(state)
        if missing:
            raise ValueError(f"the forest lacks {', '.join(sorted(missing))}")
        return cls(state['left'], state['right'], state['feature'],
                   state['threshold'], state['value'], state['roots'],
                   float(state['weight']), int(state['in_channels']))

    @property
    def num_targets(self) -> int:
        return int(self.roots.size(0))

    @property
    def trees_per_target(self) -> int:
        return int(self.roots.size(1))

    def forward(self, features: Tensor) -> Tensor:
        r"""The forest's prediction, float64 :obj:`[num_graphs,
        num_targets]`, of :obj:`features` :obj:`[num_graphs,
        in_channels]`: per output, the mean of its trees' leaf values."""
        features = features.view(features.size(0), -1)
        if features.size(1) != int(self.in_channels):
            raise ValueError(
                f"The forest reads {int(self.in_channels)} molecule features "
                f"per graph, got {features.size(1)}; predict with the "
                f"data.molecule_features the model was trained with")
        x = features.to(self.threshold.device, torch.float64)
        node = self.roots.view(1, -1).expand(x.size(0), -1).contiguous()
        # One level of every tree per pass; a sample at a leaf stays there.
        for _ in range(self.left.numel()):
            left = self.left[node]
            at_leaf = left < 0
            if bool(at_leaf.all()):
                break
            goes_left = (x.gather(1, self.feature[node].clamp(min=0))
                         <= self.threshold[node])
            node = torch.where(at_leaf, node, torch.where(
                goes_left, left, self.right[node]))
        leaves = self.value[node].view(x.size(0), self.num_targets, -1)
        return leaves.mean(dim=-1)

    def blend(self, network: Tensor, features: Tensor) -> Tensor:
        r"""The blended prediction, float64, of the network's
        :obj:`network` :obj:`[num_graphs, num_targets]` (probabilities of a
        binary task, or values in the targets' units) on graphs with
        :obj:`features`."""
        forest = self(features).to(network.device)
        weight = self.weight.to(network.device)
        return weight * network.double() + (1 - weight) * forest

    def blend_logits(self, logits: Tensor, features: Tensor) -> Tensor:
        r"""As :meth:`blend` for a binary task's logits: the logit of the
        blended probability (kept within :math:`10^{-12}` of 0 and 1)."""
        probability = self.blend(torch.sigmoid(logits.double()), features)
        return torch.logit(probability.clamp(_EPS, 1 - _EPS))

    def extra_repr(self) -> str:
        return (f'targets={self.num_targets}, trees_per_target='
                f'{self.trees_per_target}, nodes={self.left.numel()}, '
                f'weight={float(self.weight):.2f}')


def model_forest(model: nn.Module) -> 'FeatureForest | None':
    r"""The :class:`FeatureForest` a model's predictions are blended with
    (its :data:`FOREST_MODULE` submodule, set by training with
    :obj:`model.forest_trees` or by loading such a checkpoint), or
    :obj:`None`."""
    forest = getattr(model, FOREST_MODULE, None)
    return forest if isinstance(forest, FeatureForest) else None
