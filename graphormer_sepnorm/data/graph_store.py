r"""A preprocessed dataset held as collated tensors on one device (*e.g.*
the GPU), batched there: :class:`DeviceGraphStore` builds a
:class:`~torch_geometric.data.Batch` for a list of graph ids by index
arithmetic on the device, without Python objects per graph or host-to-device
copies other than the ids. The batches equal those of PyG's
:class:`~torch_geometric.loader.DataLoader`.
"""
from __future__ import annotations

from typing import Any, Sequence

import torch
from torch import Tensor
from torch_geometric.data import Batch

__all__ = ['DeviceGraphStore']


class DeviceGraphStore:
    r"""An in-memory graph dataset held as collated tensors on
    :obj:`device`, batched there.

    Args:
        dataset (InMemoryDataset): A PyG in-memory dataset or an index view
            of one (materialized once with :meth:`copy`).
        device (torch.device or str): Where the tensors live.
    """
    def __init__(self, dataset, device: Any = 'cpu') -> None:
        if getattr(dataset, '_indices', None) is not None:
            dataset = dataset.copy()
        self.device = torch.device(device)
        data, slices = dataset._data, dataset.slices
        example = dataset[0]
        self.num_graphs = len(dataset)
        self.keys = list(slices.keys())
        self.tensors: dict[str, Tensor] = {}
        self.slices_host: dict[str, Tensor] = {}
        self.slices: dict[str, Tensor] = {}
        self.cat_dims: dict[str, int] = {}
        self.increments: dict[str, bool] = {}
        for key in self.keys:
            value = data[key]
            self.tensors[key] = value.to(self.device)
            self.slices_host[key] = slices[key].cpu()
            self.slices[key] = slices[key].to(self.device)
            dim = example.__cat_dim__(key, example[key])
            self.cat_dims[key] = dim % max(value.dim(), 1)
            self.increments[key] = bool(
                torch.as_tensor(example.__inc__(key, example[key])).ne(0)
                .any())
        node_key = 'x' if 'x' in self.keys else None
        if node_key is None:
            raise ValueError("DeviceGraphStore needs node features 'x'")
        self.node_key = node_key
        self.has_num_nodes = 'num_nodes' in example.keys()

    def __len__(self) -> int:
        return self.num_graphs

    def _ranges(self, key: str, ids_host: Tensor, ids: Tensor
                ) -> tuple[Tensor, Tensor, int]:
        r"""Per-graph start and count on the device, and the total on the
        host (known without a device synchronization)."""
        host = self.slices_host[key]
        total = int((host[ids_host + 1] - host[ids_host]).sum())
        sl = self.slices[key]
        start = sl[ids]
        return start, sl[ids + 1] - start, total

    @staticmethod
    def _positions(start: Tensor, count: Tensor, total: int) -> Tensor:
        # Element positions of the concatenated ranges [start, start+count).
        offset = torch.cumsum(count, 0) - count  # exclusive cumsum
        base = torch.repeat_interleave(start - offset, count,
                                       output_size=total)
        return base + torch.arange(total, device=start.device)

    def batch(self, ids: Sequence[int] | Tensor) -> Batch:
        r"""The :class:`~torch_geometric.data.Batch` of the graphs
        :obj:`ids`, built on the store's device."""
        ids_host = torch.as_tensor(ids, dtype=torch.long).cpu()
        ids = ids_host.to(self.device, non_blocking=True)
        num_graphs = ids_host.numel()
        n_start, n_count, n_total = self._ranges(self.node_key, ids_host, ids)
        node_offset = torch.cumsum(n_count, 0) - n_count
        out: dict[str, Tensor] = {}
        for key in self.keys:
            start, count, total = ((n_start, n_count, n_total)
                                   if key == self.node_key else self._ranges(
                                       key, ids_host, ids))
            positions = self._positions(start, count, total)
            dim = self.cat_dims[key]
            value = self.tensors[key].index_select(dim, positions)
            if self.increments[key]:
                inc = torch.repeat_interleave(node_offset, count,
                                              output_size=total)
                shape = [1] * value.dim()
                shape[dim] = total
                value = value + inc.view(shape)
            out[key] = value
        graph_ids = torch.arange(num_graphs, device=self.device)
        out['batch'] = torch.repeat_interleave(graph_ids, n_count,
                                               output_size=n_total)
        out['ptr'] = torch.cat([torch.zeros(1, dtype=torch.long,
                                            device=self.device),
                                torch.cumsum(n_count, 0)])
        batch = Batch(**out)
        if self.has_num_nodes:
            batch.num_nodes = n_total
        batch._num_graphs = num_graphs
        return batch
