"""GraphAttentionBias against a per-pair loop written from the paper."""
import math

import pytest
import torch
from conftest import bucket_slices, load_real_zinc
from torch_geometric.data import Batch, Data
from torch_geometric.utils import to_dense_batch

from graphormer_sepnorm.nn import GraphAttentionBias, PackedTokens
from graphormer_sepnorm.transforms import AddShortestPaths


def real_batch(limit=6, extra=()):
    graphs = load_real_zinc('val', limit=limit) + list(extra)
    graphs = [AddShortestPaths()(g) for g in graphs]
    batch = Batch.from_data_list(graphs)
    _, node_mask = to_dense_batch(batch.x, batch.batch)
    return graphs, batch, node_mask


def salt_graph():
    """Two fragments (C-C=O and N#C), ZINC-style features."""
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
    return Data(x=torch.tensor([[0], [0], [1], [2], [0]]),
                edge_index=edge_index, edge_attr=torch.tensor([1, 1, 2, 2, 3,
                                                               3]),
                y=torch.tensor([0.0]))


def loop_bias(module, data, max_nodes):
    """Bias of one graph, pair by pair, following path_next."""
    n, heads = data.num_nodes, module.num_heads
    spd = data.spd.view(n, n).long()
    path_next = data.path_next.view(n, n).long()
    edge_attr = {(int(u), int(v)): data.edge_attr[e].view(-1)
                 for e, (u, v) in enumerate(data.edge_index.t())}
    table = module.edge_embedding.embedding.weight
    offsets = module.edge_embedding.offsets

    def edge_embedding(u, v):
        return table[edge_attr[(u, v)] + offsets].mean(0)

    bias = torch.full((heads, 1 + max_nodes, 1 + max_nodes), -math.inf)
    bias[:, :, 0] = module.virtual_distance[:, None]
    bias[:, 0, :1 + n] = module.virtual_distance[:, None]
    for i in range(n):
        for j in range(n):
            d = int(spd[i, j])
            row = (module.unreachable_index if d < 0 else
                   min(d, module.max_distance))
            value = module.spatial_embedding.weight[row].clone()
            if module.edge_encoding == 'single':
                if (i, j) in edge_attr:
                    value += edge_embedding(i, j)
            elif d > 0:
                hops = min(d, module.multi_hop_max_dist)
                node, total = i, torch.zeros(heads)
                for k in range(hops):
                    step = int(path_next[node, j])
                    total += edge_embedding(node, step) @ module.hop_weight[k]
                    node = step
                value += total / hops
            if (module.max_attention_distance is not None
                    and (d < 0 or d > module.max_attention_distance)):
                value = torch.full((heads, ), -math.inf)
            bias[:, 1 + i, 1 + j] = value
    return bias


@pytest.mark.parametrize('edge_encoding, max_hops, max_distance, max_attn', [
    ('multi_hop', 20, 64, None),
    ('multi_hop', 3, 5, None),  # paths cut at 3 hops, distances clamped
    ('single', 20, 64, 4),
])
def test_bias_matches_pair_by_pair_loop(edge_encoding, max_hops, max_distance,
                                        max_attn):
    torch.manual_seed(0)
    module = GraphAttentionBias(4, [4], edge_encoding, max_hops, max_distance,
                                max_attn)
    graphs, batch, node_mask = real_batch(extra=[salt_graph()])
    with torch.no_grad():
        bias = module(batch, node_mask)
        max_nodes = node_mask.size(1)
        assert bias.shape == (len(graphs), 4, 1 + max_nodes, 1 + max_nodes)
        for b, data in enumerate(graphs):
            expected = loop_bias(module, data, max_nodes)
            n = data.num_nodes
            # Rows of padded queries are never read; compare real rows.
            torch.testing.assert_close(bias[b, :, :1 + n], expected[:, :1 + n])


def test_gradients_reach_every_encoding():
    torch.manual_seed(0)
    module = GraphAttentionBias(4, [4], 'multi_hop', 20)
    _, batch, node_mask = real_batch()
    bias = module(batch, node_mask)
    bias[torch.isfinite(bias)].pow(2).sum().backward()
    for name, parameter in module.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, \
            name


def test_missing_preprocessing_is_a_clear_error():
    data = load_real_zinc('val', limit=2)
    batch = Batch.from_data_list(data)
    _, node_mask = to_dense_batch(batch.x, batch.batch)
    with pytest.raises(ValueError, match='AddShortestPaths'):
        GraphAttentionBias(4, [4])(batch, node_mask)


def test_nodes_changed_after_preprocessing_is_a_clear_error():
    data = AddShortestPaths()(load_real_zinc('val', limit=1)[0])
    data.x = data.x[:-1]
    data.edge_index = data.edge_index[:, (data.edge_index < data.num_nodes -
                                          0).all(0)]
    batch = Batch.from_data_list([data])
    _, node_mask = to_dense_batch(batch.x, batch.batch)
    with pytest.raises(ValueError, match='Apply AddShortestPaths last'):
        GraphAttentionBias(4, [4])(batch, node_mask)


def test_out_of_vocabulary_bond_is_a_clear_error():
    graphs, batch, node_mask = real_batch(limit=2)
    batch.edge_attr[0] = 7
    with pytest.raises(ValueError, match='outside the vocabulary'):
        GraphAttentionBias(4, [4])(batch, node_mask)


@pytest.mark.parametrize('max_hops', [1, 3, 20])
def test_compiled_walk_matches_the_tensor_walk(max_hops):
    # The tensor walk runs on GPUs, the compiled one on the CPU.
    from graphormer_sepnorm.nn.graph_attention_bias import (
        _walk_paths, _walk_paths_compiled, dense_edge_ids,
        dense_shortest_paths)
    _, batch, node_mask = real_batch(limit=12, extra=[salt_graph()])
    tokens = PackedTokens(node_mask, num_buckets=3)
    spd, path_next = dense_shortest_paths(batch, tokens)
    edge_ids = dense_edge_ids(batch, tokens)
    hops = spd.clamp(min=0)
    expected = _walk_paths(hops, path_next, edge_ids, tokens.pair_blocks,
                           max_hops, 1000)
    compiled = _walk_paths_compiled(hops, path_next, edge_ids,
                                    tokens.pair_blocks, max_hops, 1000)
    assert compiled[0].numel() == int(hops.clamp(max=max_hops).sum())
    order = torch.argsort(expected[0], stable=True)
    assert torch.equal(compiled[0], expected[0][order])
    assert torch.equal(compiled[1], expected[1][order])


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_no_grad_walk_and_sum_equals_gather_and_index_add(dtype):
    """Without gradients the CPU adds the rows as it walks; the result is
    what the training path's gather and index_add give, bit for bit (same
    rows, added in the same order), and the bias is the same."""
    from graphormer_sepnorm.nn.graph_attention_bias import (
        _walk_and_sum_compiled, _walk_paths_compiled, dense_edge_ids,
        dense_shortest_paths)
    torch.manual_seed(2)
    _, batch, node_mask = real_batch(limit=12, extra=[salt_graph()])
    tokens = PackedTokens(node_mask, num_buckets=3)
    spd, path_next = dense_shortest_paths(batch, tokens)
    edge_ids = dense_edge_ids(batch, tokens)
    hops = spd.clamp(min=0)
    num_rows = int(edge_ids.max()) + 1
    tables = torch.randn(5 * num_rows, 4, dtype=dtype)
    pairs, rows = _walk_paths_compiled(hops, path_next, edge_ids,
                                       tokens.pair_blocks, 5, num_rows)
    expected = tables.new_zeros(spd.numel(), 4).index_add(
        0, pairs, tables[rows])
    summed = _walk_and_sum_compiled(hops, path_next, edge_ids,
                                    tokens.pair_blocks, 5, num_rows, tables)
    assert summed.dtype == dtype and torch.equal(summed, expected)
    module = GraphAttentionBias(4, [4], 'multi_hop', multi_hop_max_dist=5)
    module = module.to(dtype)
    with_grad = module.bucketed(batch, PackedTokens(node_mask, 3))
    with torch.no_grad():
        without = module.bucketed(batch, PackedTokens(node_mask, 3))
    for a, b in zip(with_grad, without):
        assert torch.equal(a.detach(), b)


@pytest.mark.parametrize('edge_encoding', ['multi_hop', 'single'])
def test_bucketed_bias_is_the_padded_bias_of_each_bucket(edge_encoding):
    torch.manual_seed(0)
    _, batch, node_mask = real_batch(limit=12, extra=[salt_graph()])
    module = GraphAttentionBias(4, [4], edge_encoding, multi_hop_max_dist=5,
                                max_attention_distance=6)
    padded = module(batch, node_mask)
    tokens = PackedTokens(node_mask, num_buckets=3)
    biases = module.bucketed(batch, tokens)
    expected = bucket_slices(padded, tokens)
    for bias, padded_bias in zip(biases, expected):
        torch.testing.assert_close(bias, padded_bias)

    def loss(parts):
        return sum(p.nan_to_num(neginf=0).square().sum() for p in parts)

    padded_grads = torch.autograd.grad(loss(expected), module.parameters())
    bucketed_grads = torch.autograd.grad(loss(biases), module.parameters())
    for got, expected in zip(bucketed_grads, padded_grads):
        torch.testing.assert_close(got, expected)
