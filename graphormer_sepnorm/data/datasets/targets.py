r"""Target statistics: the targets of every graph of a dataset, their
means and standard deviations, and the module that standardizes regression
targets with them and maps outputs back."""
from __future__ import annotations

from typing import Sequence, Union

import torch
from torch import Tensor

__all__ = ['graph_values', 'graph_targets', 'target_statistics',
           'TargetScaling']


def graph_values(dataset, key: str) -> Tensor:
    r"""The per-graph attribute :obj:`key` (*e.g.* :obj:`y`,
    :obj:`graph_features`) of every graph of an in-memory dataset (or an
    index view of one), stacked as :obj:`[num_graphs, ...]`, read from the
    collated storage without building each graph."""
    data = dataset._data
    slices = dataset.slices[key]
    num_total = slices.numel() - 1
    sizes = slices[1:] - slices[:-1]
    indices = dataset.indices()
    if isinstance(indices, range):
        indices = torch.arange(indices.start, indices.stop, indices.step)
    indices = torch.as_tensor(indices, dtype=torch.long)
    values = data[key]
    if bool((sizes == 1).all()):
        return values.view(num_total, *values.shape[1:])[indices]
    return torch.stack([dataset[int(i)][key] for i in range(len(dataset))])


def graph_targets(dataset) -> Tensor:
    r"""The targets :obj:`y` of every graph of an in-memory dataset (or an
    index view of one): :func:`graph_values` of :obj:`y`."""
    return graph_values(dataset, 'y')


def target_statistics(dataset) -> tuple[list[float], list[float]]:
    r"""Mean and standard deviation of each target of :obj:`dataset` (the
    training split) over its labeled graphs, as used to standardize
    regression targets (a target with fewer than two distinct values gets
    standard deviation 1; one without labels mean 0)."""
    y = graph_targets(dataset).double()
    y = y.view(y.size(0), -1)
    means, stds = [], []
    for column in y.unbind(1):
        column = column[torch.isfinite(column)]
        means.append(float(column.mean()) if column.numel() else 0.0)
        std = float(column.std()) if column.numel() > 1 else 0.0
        stds.append(std if std > 0 else 1.0)
    return means, stds


class TargetScaling(torch.nn.Module):
    r"""The standardization of regression targets, :math:`(y - \mu) /
    \sigma` with one mean and standard deviation per target (those of
    :func:`target_statistics` on the training split), and its inverse,
    which maps the model's outputs back to the targets' units
    (:meth:`forward`): the one place where the scaling is done and undone,
    in training, evaluation and prediction.

    The statistics are float64 buffers, so they move to the device with the
    module that holds this one (a copy from Python numbers at every step
    would make the host wait for a GPU); each use casts them to the dtype
    of its values. They are not part of the weights: the model card and a
    training checkpoint keep them as numbers (:meth:`statistics`).

    Args:
        mean (float or list of float, optional): Per-target means.
            (default: :obj:`0.0`)
        std (float or list of float, optional): Per-target standard
            deviations. (default: :obj:`1.0`)
    """
    def __init__(self, mean: Union[float, Sequence[float]] = 0.0,
                 std: Union[float, Sequence[float]] = 1.0) -> None:
        super().__init__()
        self.register_buffer('mean', _per_target(mean), persistent=False)
        self.register_buffer('std', _per_target(std), persistent=False)

    @classmethod
    def from_card(cls, card) -> 'TargetScaling':
        r"""The scaling of a :class:`~graphormer_sepnorm.checkpoint.
        ModelCard`'s :obj:`target_mean` and :obj:`target_std`."""
        return cls(card.target_mean, card.target_std)

    def load_statistics(self, mean: Union[float, Sequence[float]],
                        std: Union[float, Sequence[float]]) -> None:
        r"""Replaces the statistics, on the buffers' current device."""
        self.mean = _per_target(mean).to(self.mean.device)
        self.std = _per_target(std).to(self.std.device)

    def statistics(self) -> tuple[list[float], list[float]]:
        r"""The per-target means and standard deviations, as numbers."""
        return self.mean.tolist(), self.std.tolist()

    def standardize(self, targets: Tensor) -> Tensor:
        r""":obj:`(targets - mean) / std` in the dtype of :obj:`targets`,
        one statistic per target (the last dimension)."""
        return ((targets - self.mean.to(targets.dtype))
                / self.std.to(targets.dtype))

    def forward(self, values: Tensor) -> Tensor:
        r""":obj:`values * std + mean`: outputs on the standardized scale
        in the units of the targets, in the dtype of :obj:`values`."""
        return (values * self.std.to(values.dtype)
                + self.mean.to(values.dtype))

    def extra_repr(self) -> str:
        return f'num_targets={self.mean.numel()}'


def _per_target(value: Union[float, Sequence[float]]) -> Tensor:
    return torch.tensor(value, dtype=torch.float64).view(-1)
