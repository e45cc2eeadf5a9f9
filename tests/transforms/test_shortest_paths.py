"""AddShortestPaths against networkx, on real molecules and edge cases."""
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
import torch
from conftest import load_real_zinc
from torch_geometric.data import Batch, Data
from torch_geometric.utils import to_networkx

from graphormer_sepnorm.data.featurize import smiles_to_ogb_graph
from graphormer_sepnorm.transforms import UNREACHABLE, AddShortestPaths


def check_against_networkx(data: Data) -> None:
    """spd equals networkx's distances; walking path_next from i reaches j
    along edges of the graph in exactly spd[i, j] hops."""
    n = data.num_nodes
    spd = data.spd.view(n, n).long().numpy()
    path_next = data.path_next.view(n, n).long().numpy()
    graph = to_networkx(data)  # directed, as given by edge_index
    lengths = dict(nx.all_pairs_shortest_path_length(graph))
    edges = set(graph.edges())
    for i in range(n):
        for j in range(n):
            expected = lengths[i].get(j, UNREACHABLE)
            assert spd[i, j] == expected, (i, j)
            if expected == UNREACHABLE:
                assert path_next[i, j] == UNREACHABLE
                continue
            node, hops = i, 0
            while node != j:
                step = path_next[node, j]
                assert (node, step) in edges, f"{node}->{step} is no edge"
                node, hops = step, hops + 1
                assert hops <= n
            assert hops == expected


def test_real_zinc_graphs_match_networkx():
    transform = AddShortestPaths()
    for data in load_real_zinc('val', limit=300):
        check_against_networkx(transform(data))


def test_real_molhiv_molecules_match_networkx(molhiv_smiles):
    transform = AddShortestPaths()
    checked = 0
    for smiles in molhiv_smiles[:400]:
        try:
            data = smiles_to_ogb_graph(smiles)
        except ValueError:  # A few MolHIV SMILES no longer parse in RDKit.
            continue
        check_against_networkx(transform(data))
        checked += 1
    assert checked >= 390


def test_salt_is_two_unreachable_fragments(molhiv_smiles):
    salts = [s for s in molhiv_smiles[:3000] if '.' in s][:20]
    assert salts, "expected salts among the first MolHIV molecules"
    transform = AddShortestPaths()
    for smiles in salts:
        data = transform(smiles_to_ogb_graph(smiles))
        check_against_networkx(data)
        assert (data.spd == UNREACHABLE).any()


def test_paths_through_node_zero():
    # A star around node 0: every leaf-to-leaf path goes through node 0,
    # exactly the paths the original Graphormer Cython code dropped.
    leaves = torch.arange(1, 6)
    edge_index = torch.cat([
        torch.stack([torch.zeros(5, dtype=torch.long), leaves]),
        torch.stack([leaves, torch.zeros(5, dtype=torch.long)])
    ], dim=1)
    data = AddShortestPaths()(Data(edge_index=edge_index, num_nodes=6))
    check_against_networkx(data)
    spd = data.spd.view(6, 6)
    path_next = data.path_next.view(6, 6)
    assert spd[1, 2] == 2 and path_next[1, 2] == 0


def test_hand_computed_path_graph():
    # 0 - 1 - 2 - 3, and an isolated node 4.
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
    data = AddShortestPaths()(Data(edge_index=edge_index, num_nodes=5))
    spd = data.spd.view(5, 5)
    expected = torch.tensor([[0, 1, 2, 3, -1], [1, 0, 1, 2, -1],
                             [2, 1, 0, 1, -1], [3, 2, 1, 0, -1],
                             [-1, -1, -1, -1, 0]], dtype=torch.int16)
    assert torch.equal(spd, expected)
    assert data.path_next.view(5, 5)[0].tolist() == [0, 1, 1, 1, -1]
    assert data.path_next.view(5, 5)[3].tolist() == [2, 2, 2, 3, -1]


def test_directed_edges_are_followed_one_way():
    data = AddShortestPaths()(
        Data(edge_index=torch.tensor([[0, 1], [1, 2]]), num_nodes=3))
    check_against_networkx(data)
    assert data.spd.view(3, 3)[2, 0] == UNREACHABLE


@pytest.mark.parametrize('num_nodes', [1, 4])
def test_graphs_without_edges(num_nodes):
    data = AddShortestPaths()(
        Data(edge_index=torch.empty(2, 0, dtype=torch.long),
             num_nodes=num_nodes))
    eye = torch.eye(num_nodes, dtype=torch.bool)
    expected = torch.where(eye, 0, UNREACHABLE).to(torch.int16)
    assert torch.equal(data.spd.view(num_nodes, num_nodes), expected)
    expected_next = torch.where(eye, torch.arange(num_nodes), UNREACHABLE)
    assert torch.equal(data.path_next.view(num_nodes, num_nodes).long(),
                       expected_next)


def test_too_large_graph_is_a_clear_error():
    data = Data(edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=10)
    with pytest.raises(ValueError, match='more than max_nodes=8'):
        AddShortestPaths(max_nodes=8)(data)


@pytest.mark.parametrize('edge_index, message', [
    (torch.tensor([[0, 5], [1, 0]]), 'valid ids 0..2'),
    (torch.tensor([[0, -1], [1, 0]]), 'valid ids 0..2'),
    (torch.tensor([[0.0, 1.0], [1.0, 0.0]]), 'torch.long'),
    (torch.tensor([0, 1, 2]), r'shape \[2, num_edges\]'),
])
def test_invalid_edge_index_is_a_clear_error(edge_index, message):
    with pytest.raises(ValueError, match=message):
        AddShortestPaths()(Data(edge_index=edge_index, num_nodes=3))


def test_missing_size_is_a_clear_error():
    with pytest.raises(ValueError, match="needs 'num_nodes'"):
        AddShortestPaths()(Data(edge_attr=torch.zeros(3)))


def test_stored_compactly_and_deterministically():
    data = load_real_zinc('val', limit=1)[0]
    first = AddShortestPaths()(data.clone())
    second = AddShortestPaths()(data.clone())
    assert first.spd.dtype == torch.int16
    assert first.path_next.dtype == torch.int16
    assert first.spd.numel() == data.num_nodes**2
    assert torch.equal(first.path_next, second.path_next)
    assert np.array_equal(first.spd.numpy(), second.spd.numpy())


def test_the_function_keeps_its_name_after_the_transform_loads():
    """The package exports the search function `shortest_paths` and loads
    the transform lazily; loading the transform (in any order) must not
    rebind the package's `shortest_paths` to a module."""
    code = ('from graphormer_sepnorm import AddShortestPaths\n'
            'from graphormer_sepnorm.transforms import shortest_paths\n'
            'import graphormer_sepnorm.transforms.add_shortest_paths\n'
            'import graphormer_sepnorm.transforms as t\n'
            'assert callable(shortest_paths) and callable(t.shortest_paths)\n'
            'assert t.AddShortestPaths is AddShortestPaths\n')
    result = subprocess.run([sys.executable, '-c', code],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
