r""":class:`GraphormerDataLoader`: PyG's :class:`DataLoader` whose batches
come laid out for :class:`~graphormer_sepnorm.GraphormerSepNorm`
(:obj:`batch.layout`), computed where they are collated: in the worker
processes when there are any, so that the model's forward pass computes
nothing on the host. :class:`LayoutCollater` is its collate function.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

import torch
from torch_geometric.data import Batch
from torch_geometric.loader.dataloader import Collater

from ..transforms.batch_layout import add_batch_layout

__all__ = ['GraphormerDataLoader', 'LayoutCollater']


class LayoutCollater:
    r"""PyG's :class:`~torch_geometric.loader.dataloader.Collater`, then
    :func:`~graphormer_sepnorm.transforms.add_batch_layout` with
    :obj:`layout` (nothing with :obj:`None`). A class, not a closure, so
    that DataLoader worker processes can receive it.

    Args:
        dataset: The dataset the graphs come from.
        layout (dict, optional): Arguments of :func:`add_batch_layout`
            (:meth:`model.layout_options()
            <graphormer_sepnorm.GraphormerSepNorm.layout_options>`).
        follow_batch (list of str, optional): As PyG's :class:`DataLoader`.
        exclude_keys (list of str, optional): As PyG's :class:`DataLoader`.
    """
    def __init__(self, dataset: Any, layout: Optional[Mapping[str, int]],
                 follow_batch: Optional[Sequence[str]] = None,
                 exclude_keys: Optional[Sequence[str]] = None) -> None:
        self.collate = Collater(dataset, follow_batch, exclude_keys)
        self.layout = None if layout is None else dict(layout)

    def __call__(self, data_list: list) -> Batch:
        batch = self.collate(data_list)
        if self.layout is not None:
            batch = add_batch_layout(batch, **self.layout)
        return batch


class GraphormerDataLoader(torch.utils.data.DataLoader):
    r"""Batches of graphs for :class:`~graphormer_sepnorm.GraphormerSepNorm`,
    as PyG's :class:`~torch_geometric.loader.DataLoader` makes them, each
    with its layout (:func:`~graphormer_sepnorm.transforms.add_batch_layout`)
    computed as it is collated: in the :obj:`num_workers` worker processes,
    when there are any. The layout is a property of the batch (its graphs'
    tokens are packed together), not of one graph, so it cannot be a
    dataset :obj:`transform`; and PyG's own :class:`DataLoader` replaces any
    :obj:`collate_fn` given to it.

    A :class:`torch.utils.data.DataLoader`: with :obj:`shuffle=True` every
    epoch (every :obj:`for` loop over it) draws a new order, from
    :obj:`generator` when given; it pickles into worker processes.

    .. code-block:: python

        loader = GraphormerDataLoader(dataset, batch_size=32, shuffle=True,
                                      num_workers=4,
                                      layout=model.layout_options())
        for batch in loader:
            loss = (model(batch) - batch.y).abs().mean()

    Args:
        dataset: Graphs preprocessed by
            :class:`~graphormer_sepnorm.transforms.AddShortestPaths`.
        batch_size (int, optional): Graphs per batch. (default: :obj:`1`)
        shuffle (bool, optional): Reshuffle at every epoch.
            (default: :obj:`False`)
        layout (dict or GraphormerSepNorm): The model's
            :meth:`~graphormer_sepnorm.GraphormerSepNorm.layout_options`
            (on a GPU :obj:`model.layout_options(1)`: one size bucket), or
            the model itself for its default options; :obj:`None`: no
            layout (the model then computes it in its forward pass, on the
            host, which a compiled model cannot).
        follow_batch (list of str, optional): As PyG's :class:`DataLoader`.
        exclude_keys (list of str, optional): As PyG's :class:`DataLoader`.
        **kwargs: The other arguments of
            :class:`torch.utils.data.DataLoader` (:obj:`num_workers`,
            :obj:`pin_memory`, :obj:`persistent_workers`,
            :obj:`batch_sampler`, :obj:`generator`, ...), except
            :obj:`collate_fn`.
    """
    def __init__(self, dataset: Any, batch_size: int = 1,
                 shuffle: bool = False, *,
                 layout: Union[Mapping[str, int], torch.nn.Module, None],
                 follow_batch: Optional[Sequence[str]] = None,
                 exclude_keys: Optional[Sequence[str]] = None,
                 **kwargs: Any) -> None:
        if 'collate_fn' in kwargs:
            raise TypeError(
                "GraphormerDataLoader collates with LayoutCollater; it takes "
                "no collate_fn (use torch.utils.data.DataLoader with "
                "collate_fn=LayoutCollater(dataset, layout) around your own)")
        options = getattr(layout, 'layout_options', None)
        if callable(options):
            layout = options()
        if layout is not None and not isinstance(layout, Mapping):
            raise TypeError(
                f"layout must be model.layout_options() (a dict) or the "
                f"model, got {type(layout).__name__}")
        self.layout = None if layout is None else dict(layout)
        super().__init__(dataset, batch_size, shuffle,
                         collate_fn=LayoutCollater(dataset, self.layout,
                                                   follow_batch,
                                                   exclude_keys),
                         **kwargs)
