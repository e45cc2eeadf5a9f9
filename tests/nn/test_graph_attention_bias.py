"""GraphAttentionBias against a per-pair loop written from the paper."""
import math

import pytest
import torch
from conftest import bucket_slices, laid_out, load_real_zinc
from torch_geometric.data import Batch, Data

from graphormer_sepnorm.nn import GraphAttentionBias
from graphormer_sepnorm.transforms import AddShortestPaths


def real_batch(limit=6, extra=()):
    graphs = load_real_zinc('val', limit=limit) + list(extra)
    graphs = [AddShortestPaths()(g) for g in graphs]
    return graphs, Batch.from_data_list(graphs)


def padded_bias(module, batch):
    """The bias of the padded batch: one bucket, graphs in their order."""
    batch, tokens = laid_out(batch, 1, _hops(module))
    return module(batch, tokens)[0]


def _hops(module):
    return (module.multi_hop_max_dist if module.edge_encoding == 'multi_hop'
            else 0)


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
    graphs, batch = real_batch(extra=[salt_graph()])
    with torch.no_grad():
        bias = padded_bias(module, batch)
        max_nodes = max(g.num_nodes for g in graphs)
        assert bias.shape == (len(graphs), 4, 1 + max_nodes, 1 + max_nodes)
        for b, data in enumerate(graphs):
            expected = loop_bias(module, data, max_nodes)
            n = data.num_nodes
            # Rows of padded queries are never read; compare real rows.
            torch.testing.assert_close(bias[b, :, :1 + n], expected[:, :1 + n])


def test_gradients_reach_every_encoding():
    torch.manual_seed(0)
    module = GraphAttentionBias(4, [4], 'multi_hop', 20)
    _, batch = real_batch()
    bias = padded_bias(module, batch)
    bias[torch.isfinite(bias)].pow(2).sum().backward()
    for name, parameter in module.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, \
            name


def test_out_of_vocabulary_bond_is_a_clear_error():
    graphs, batch = real_batch(limit=2)
    batch.edge_attr[0] = 7
    with pytest.raises(ValueError, match='outside the vocabulary'):
        padded_bias(GraphAttentionBias(4, [4]), batch)


def test_a_layout_walked_for_other_hops_is_a_clear_error():
    _, batch = real_batch(limit=2)
    batch, tokens = laid_out(batch, 1, multi_hop_max_dist=3)
    with pytest.raises(ValueError, match="walks 3 hops.*layout_options"):
        GraphAttentionBias(4, [4], multi_hop_max_dist=5)(batch, tokens)


@pytest.mark.parametrize('edge_encoding', ['multi_hop', 'single'])
def test_bucketed_bias_is_the_padded_bias_of_each_bucket(edge_encoding):
    torch.manual_seed(0)
    _, batch = real_batch(limit=12, extra=[salt_graph()])
    module = GraphAttentionBias(4, [4], edge_encoding, multi_hop_max_dist=5,
                                max_attention_distance=6)
    padded = padded_bias(module, batch)
    batch, tokens = laid_out(batch, 3, _hops(module))
    biases = module(batch, tokens)
    expected = bucket_slices(padded, tokens)
    for bias, bucket_of_padded in zip(biases, expected):
        torch.testing.assert_close(bias, bucket_of_padded)

    def loss(parts):
        return sum(p.nan_to_num(neginf=0).square().sum() for p in parts)

    padded_grads = torch.autograd.grad(loss(expected), module.parameters())
    bucketed_grads = torch.autograd.grad(loss(biases), module.parameters())
    for got, expected in zip(bucketed_grads, padded_grads):
        torch.testing.assert_close(got, expected)
