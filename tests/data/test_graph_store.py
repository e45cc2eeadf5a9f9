"""DeviceGraphStore: batches gathered on the device equal PyG's
Batch.from_data_list and DataLoader, also through GraphBatchLoader."""
import pytest
import torch
from torch_geometric.data import Batch
from torch_geometric.loader import DataLoader

from graphormer_sepnorm.data.batch_loader import GraphBatchLoader
from graphormer_sepnorm.data.datasets import load_splits
from graphormer_sepnorm.data.graph_store import DeviceGraphStore


@pytest.mark.parametrize('dataset', ['zinc', 'molhiv'])
def test_device_store_batches_equal_pyg_dataloader(dataset, zinc_val,
                                                   molhiv_root):
    if dataset == 'zinc':
        data = zinc_val
    else:
        data = load_splits('molhiv', molhiv_root).train  # an index view
    store = DeviceGraphStore(data, 'cpu')
    ids = torch.randperm(len(data), generator=torch.Generator().manual_seed(
        0))[:64]
    for chunk in ids.split(17):
        expected = Batch.from_data_list([data[int(i)] for i in chunk])
        got = store.batch(chunk)
        assert sorted(got.keys()) == sorted(expected.keys())
        for key in expected.keys():
            if torch.is_tensor(expected[key]):
                assert torch.equal(got[key], expected[key]), key
            else:
                assert got[key] == expected[key], key
        assert got.num_graphs == expected.num_graphs
    # A whole epoch: loader with and without the store, against PyG's own
    # DataLoader over the same order.
    host = GraphBatchLoader(data, 32, shuffle=True, seed=3)
    device = GraphBatchLoader(data, 32, shuffle=True, seed=3, store=store)
    order = torch.cat(host.batches())
    reference = DataLoader(data[order], batch_size=32)
    for a, b, c in zip(host, device, reference):
        for key in c.keys():
            if torch.is_tensor(c[key]):
                assert torch.equal(a[key], c[key]) and torch.equal(
                    b[key], c[key]), key
