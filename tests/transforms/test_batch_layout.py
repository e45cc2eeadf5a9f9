"""BatchLayout (graphormer_sepnorm.transforms.batch_layout): the packed pairs
hold every graph's own distances and edges, the walk lists the edges of
each pair's path hop by hop (checked against a walk written out pair by
pair from the graphs' own path_next), degrees are PyG's, and the layout
travels with a PyG batch."""
import pytest
import torch
from conftest import load_real_zinc
from torch_geometric.data import Batch, Data
from torch_geometric.utils import degree

from graphormer_sepnorm.nn import PackedTokens
from graphormer_sepnorm.transforms import (AddShortestPaths, BatchLayout,
                                           add_batch_layout, batch_layout)


def salt_graph():
    """Two fragments (C-C=O and N#C): unreachable pairs."""
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
    return Data(x=torch.tensor([[0], [0], [1], [2], [0]]),
                edge_index=edge_index,
                edge_attr=torch.tensor([1, 1, 2, 2, 3, 3]),
                y=torch.tensor([0.0]))


def real_graphs(limit=12):
    graphs = load_real_zinc('val', limit=limit) + [salt_graph()]
    return [AddShortestPaths()(g) for g in graphs]


def pair_places(layout, graphs):
    """Per graph, the packed index of its pair (i, j), from the layout's
    token rows alone: a graph's block starts where its graph token's bucket
    and place say."""
    tokens = PackedTokens(layout)
    order = torch.argsort(tokens.graph_index).tolist()
    starts, pair_start = {}, 0
    for count, length in tokens.buckets:
        for k in range(count):
            graph = order[len(starts)]
            starts[graph] = (pair_start + k * (length - 1)**2, length - 1)
        pair_start += count * (length - 1)**2
    return [lambda i, j, s=starts[g][0], w=starts[g][1]: s + i * w + j
            for g in range(len(graphs))]


@pytest.mark.parametrize('num_buckets', [1, 3])
def test_pairs_hold_each_graphs_distances_and_edges(num_buckets):
    graphs = real_graphs()
    batch = Batch.from_data_list(graphs)
    layout = batch_layout(batch, num_buckets)
    places = pair_places(layout, graphs)
    seen = torch.zeros(layout.pair_distance.numel(), dtype=torch.bool)
    first_edge = 0
    for data, place in zip(graphs, places):
        n = data.num_nodes
        spd = data.spd.view(n, n)
        edges = {(int(u), int(v)): first_edge + e
                 for e, (u, v) in enumerate(data.edge_index.t())}
        for i in range(n):
            for j in range(n):
                p = place(i, j)
                seen[p] = True
                assert layout.pair_distance[p] == spd[i, j]
                assert layout.pair_edge[p] == edges.get(
                    (i, j), batch.num_edges)
        first_edge += data.num_edges
    # Padding pairs: no distance, no edge.
    assert (layout.pair_distance[~seen] == -1).all()
    assert (layout.pair_edge[~seen] == batch.num_edges).all()


@pytest.mark.parametrize('num_buckets, max_hops', [(1, 20), (3, 3), (2, 1)])
def test_walk_lists_the_edges_of_each_path_hop_by_hop(num_buckets,
                                                      max_hops):
    graphs = real_graphs()
    batch = Batch.from_data_list(graphs)
    layout = batch_layout(batch, num_buckets, max_hops)
    places = pair_places(layout, graphs)
    num_rows = batch.num_edges + 1
    expected = []
    first_edge = 0
    for data, place in zip(graphs, places):
        n = data.num_nodes
        spd = data.spd.view(n, n).tolist()
        path_next = data.path_next.view(n, n).tolist()
        edges = {(int(u), int(v)): first_edge + e
                 for e, (u, v) in enumerate(data.edge_index.t())}
        for i in range(n):
            for j in range(n):
                node = i
                for hop in range(min(max(spd[i][j], 0), max_hops)):
                    step = path_next[node][j]
                    expected.append((place(i, j),
                                     edges[(node, step)] + hop * num_rows))
                    node = step
        first_edge += data.num_edges
    got = list(zip(layout.hop_pairs.tolist(), layout.hop_rows.tolist()))
    assert sorted(got) == sorted(expected)
    # Pair by pair, hops in order: the order in which the model adds them.
    assert layout.hop_pairs.tolist() == sorted(layout.hop_pairs.tolist())
    assert layout.multi_hop_max_dist == max_hops


def test_single_edge_encoding_walks_nothing():
    layout = batch_layout(Batch.from_data_list(real_graphs(3)), 1, 0)
    assert layout.hop_pairs.numel() == layout.hop_rows.numel() == 0


def test_degrees_are_pygs():
    batch = Batch.from_data_list(real_graphs())
    layout = batch_layout(batch)
    src, dst = batch.edge_index
    assert torch.equal(layout.in_degree,
                       degree(dst, batch.num_nodes, dtype=torch.long))
    assert torch.equal(layout.out_degree,
                       degree(src, batch.num_nodes, dtype=torch.long))


def test_one_graph_without_batch_vector():
    data = real_graphs(1)[0]
    layout = batch_layout(data)
    assert layout.buckets == [(1, 1 + data.num_nodes)]
    assert layout.node_rows.tolist() == list(range(1, 1 + data.num_nodes))


def test_layout_travels_with_the_batch():
    batch = add_batch_layout(Batch.from_data_list(real_graphs(4)), 2)
    assert isinstance(batch.layout, BatchLayout)
    moved = batch.to('cpu')
    assert isinstance(moved.layout, BatchLayout)
    assert moved.layout.buckets == batch.layout.buckets
    assert all(torch.equal(a, b) for a, b in zip(moved.layout.key_masks,
                                                  batch.layout.key_masks))


def test_missing_preprocessing_is_a_clear_error():
    batch = Batch.from_data_list(load_real_zinc('val', limit=2))
    with pytest.raises(ValueError, match='pre_transform=.*AddShortestPaths'):
        batch_layout(batch)


def test_nodes_changed_after_preprocessing_is_a_clear_error():
    data = AddShortestPaths()(load_real_zinc('val', limit=1)[0])
    data.x = data.x[:-1]
    data.edge_index = data.edge_index[:, (data.edge_index <
                                          data.num_nodes).all(0)]
    with pytest.raises(ValueError, match='Apply AddShortestPaths last'):
        batch_layout(Batch.from_data_list([data]))
