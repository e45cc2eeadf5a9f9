r"""Target statistics: the targets of every graph of a dataset, their
means and standard deviations for standardizing regression targets, and the
way back from the standardized scale."""
from __future__ import annotations

import torch
from torch import Tensor

__all__ = ['graph_targets', 'target_statistics', 'destandardize']


def graph_targets(dataset) -> Tensor:
    r"""The targets :obj:`y` of every graph of an in-memory dataset (or an
    index view of one), stacked as :obj:`[num_graphs, ...]`, read from the
    collated storage without building each graph."""
    data = dataset._data
    slices = dataset.slices['y']
    num_total = slices.numel() - 1
    sizes = slices[1:] - slices[:-1]
    indices = dataset.indices()
    if isinstance(indices, range):
        indices = torch.arange(indices.start, indices.stop, indices.step)
    indices = torch.as_tensor(indices, dtype=torch.long)
    if bool((sizes == 1).all()):
        return data.y.view(num_total, *data.y.shape[1:])[indices]
    return torch.stack([dataset[int(i)].y for i in range(len(dataset))])


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


def destandardize(values: Tensor, mean: Tensor, std: Tensor) -> Tensor:
    r"""Regression outputs on the standardized scale mapped back to the
    units of the targets, :obj:`values * std + mean`: the inverse of the
    standardization :obj:`(y - mean) / std` with the statistics of
    :func:`target_statistics`, one :obj:`mean` and :obj:`std` per target
    (the last dimension of :obj:`values`).

    The statistics are tensors already of the dtype and on the device
    wanted: each caller converts them once, where it keeps them, not at
    every batch."""
    return values * std + mean
