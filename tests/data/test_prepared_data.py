"""The prediction path's arrays as a PyG graph equal the PyG path's graph:
the featurizer's :class:`~torch_geometric.data.Data` with the
:class:`~graphormer_sepnorm.transforms.AddShortestPaths` transform."""
import numpy as np
import pytest
import torch

from graphormer_sepnorm.data.featurize import get_featurizer
from graphormer_sepnorm.data.prepared_data import prepared_data
from graphormer_sepnorm.data.molecule_graphs import prepare_graph
from graphormer_sepnorm.transforms import AddShortestPaths

# Aspirin and nicotine (a stereocentre), each spelt two ways.
SMILES = ['OC(=O)c1ccccc1OC(C)=O', 'CC(=O)Oc1ccccc1C(O)=O',
          'CN1CCC[C@H]1c1cccnc1', 'c1ncccc1[C@@H]1CCCN1C']


@pytest.mark.parametrize('featurizer', ['zinc', 'ogb'])
@pytest.mark.parametrize('smiles', SMILES)
def test_equals_featurizer_and_shortest_paths(featurizer, smiles):
    y = torch.tensor([[0.5, -1.0]])
    data = prepared_data(prepare_graph(smiles, featurizer, 128), y=y)
    reference = AddShortestPaths()(get_featurizer(featurizer)(smiles))
    assert data.num_nodes == reference.num_nodes
    for key in ('x', 'edge_index', 'edge_attr', 'spd', 'path_next'):
        assert data[key].dtype == reference[key].dtype, key
        assert torch.equal(data[key], reference[key]), key
    assert torch.equal(data.y, y)


def test_shares_memory_with_the_arrays():
    graph = prepare_graph('CCO', 'ogb', 128)
    data = prepared_data(graph)
    graph[0][0, 0] += 1
    assert data.x[0, 0].item() == graph[0][0, 0]
    assert np.shares_memory(data.spd.numpy(), graph[3])
