"""Attention in size buckets computes what one padded batch computes."""
import pytest
import torch
from conftest import load_real_zinc
from torch_geometric.data import Batch

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm
from graphormer_sepnorm.nn import BiasedMultiheadAttention, BucketedBias
from graphormer_sepnorm.nn.bucketed_bias import size_order


def test_buckets_sort_by_size_and_cut_padding():
    node_mask = torch.tensor([[1, 1, 1, 1], [1, 0, 0, 0], [1, 1, 0, 0],
                              [1, 1, 1, 0]], dtype=torch.bool)
    bias = torch.randn(4, 2, 5, 5)
    order = size_order(node_mask, num_buckets=2)
    assert order.tolist() == [1, 2, 3, 0]
    buckets = BucketedBias(bias[order], node_mask[order], num_buckets=2)
    assert buckets.groups == [(0, 2, 3), (2, 4, 5)]  # lengths 1 + nodes
    torch.testing.assert_close(buckets.biases[0], bias[[1, 2], :, :3, :3])
    assert size_order(node_mask, num_buckets=1) is None


def test_unsorted_graphs_are_refused():
    node_mask = torch.tensor([[1, 1], [1, 0]], dtype=torch.bool)
    with pytest.raises(ValueError, match='sorted by size'):
        BucketedBias(torch.zeros(2, 1, 3, 3), node_mask, num_buckets=2)


@pytest.mark.parametrize('num_buckets', [2, 3, 7])
def test_bucketed_attention_equals_padded_attention(num_buckets):
    torch.manual_seed(0)
    sizes = [1, 2, 3, 5, 7, 9, 9]  # sorted, as the model sorts its batch
    longest = max(sizes)
    node_mask = torch.arange(longest)[None] < torch.tensor(sizes)[:, None]
    key_mask = torch.cat([torch.ones(len(sizes), 1, dtype=torch.bool),
                          node_mask], 1)
    bias = torch.randn(len(sizes), 4, 1 + longest, 1 + longest)
    bias = bias.masked_fill(~key_mask[:, None, None, :], float('-inf'))
    x = torch.randn(len(sizes), 1 + longest, 16, requires_grad=True)
    attention = BiasedMultiheadAttention(16, 4).eval()
    padded = attention(x, bias)
    (padded_grad, ) = torch.autograd.grad(padded[key_mask].sum(), x)
    bucketed = attention(x, BucketedBias(bias, node_mask, num_buckets))
    (bucketed_grad, ) = torch.autograd.grad(bucketed[key_mask].sum(), x)
    torch.testing.assert_close(bucketed[key_mask], padded[key_mask])
    torch.testing.assert_close(bucketed_grad[key_mask], padded_grad[key_mask])


def test_model_outputs_do_not_depend_on_buckets():
    graphs = [AddShortestPaths()(g) for g in load_real_zinc('val', limit=40)]
    batch = Batch.from_data_list(graphs)
    outputs = []
    for buckets in (1, 4):
        torch.manual_seed(0)
        model = GraphormerSepNorm(num_layers=2, hidden_channels=32,
                                  ffn_channels=32, num_heads=4, max_degree=8,
                                  attention_buckets=buckets).eval()
        with torch.no_grad():
            outputs.append(model(batch))
    torch.testing.assert_close(outputs[0], outputs[1], rtol=1e-5, atol=1e-6)
