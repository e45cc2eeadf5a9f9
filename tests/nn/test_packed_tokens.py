"""Packed tokens (size buckets, each padded to its own longest graph) compute
what one padded batch computes."""
import pytest
import torch
from conftest import bucket_slices, load_real_zinc
from torch_geometric.data import Batch

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm
from graphormer_sepnorm.nn import BiasedMultiheadAttention, PackedTokens
from graphormer_sepnorm.nn import SepNorm


def mask_of(sizes):
    return torch.arange(max(sizes))[None] < torch.tensor(sizes)[:, None]


def pack_padded(tokens, x):
    """The packed rows of a padded [batch_size, 1 + N, C] tensor, whatever
    its graph tokens (each graph's own), by hand from the layout."""
    node_mask = tokens.unpack(torch.zeros(tokens.num_tokens, 1))[1]
    packed = x.new_zeros(tokens.num_tokens, x.size(-1))
    packed[tokens.node_index] = x[:, 1:][node_mask]
    packed[tokens.graph_index] = x[:, 0]
    return packed


def test_layout_sorts_by_size_and_cuts_padding():
    node_mask = mask_of([4, 1, 2, 3])
    tokens = PackedTokens.from_node_mask(node_mask, num_buckets=2)
    # Bucket 1: graphs 1 and 2, length 1 + 2; bucket 2: graphs 3 and 0,
    # length 1 + 4.
    assert tokens.buckets == [(2, 3), (2, 5)]
    assert tokens.num_tokens == 16 and tokens.max_nodes == 4
    # Graph tokens, per graph in the original order, in the packed rows.
    assert tokens.graph_index.tolist() == [11, 0, 3, 6]
    # Node pairs: blocks [2, 2, 2] and [2, 4, 4].
    assert tokens.pair_blocks == [(2, 2), (2, 4)]
    assert tokens.num_pairs == 2 * 4 + 2 * 16
    # Node tokens in batch order: graph 0's four, graph 1's one, ...
    assert tokens.node_index.tolist() == [12, 13, 14, 15, 1, 4, 5,
                                          7, 8, 9]
    assert tokens.real_mask.tolist() == [
        True, True, False, True, True, True,
        True, True, True, True, False, True, True, True, True, True]
    nodes = torch.arange(1, 11)  # Node i (batch order) is i + 1.
    assert tokens.pack(nodes, torch.tensor(-1)).tolist() == [
        -1, 5, 0, -1, 6, 7, -1, 8, 9, 10, 0, -1, 1, 2, 3, 4]


@pytest.mark.parametrize('num_buckets', [1, 2, 3, 7])
def test_unpack_inverts_pack_and_zeroes_padding(num_buckets):
    sizes = [5, 1, 3, 9, 2, 9, 4]
    node_mask = mask_of(sizes)
    x = torch.randn(7, 10, 6)
    real = torch.cat([torch.ones(7, 1, dtype=torch.bool), node_mask], 1)
    x[:, 0] = x[0, 0]  # One graph token, shared by every graph.
    tokens = PackedTokens.from_node_mask(node_mask, num_buckets)
    out, mask = tokens.unpack(tokens.pack(x[:, 1:][node_mask], x[0, 0]))
    assert torch.equal(mask, node_mask)
    torch.testing.assert_close(out[real], x[real])
    assert (out[~real] == 0).all()


@pytest.mark.parametrize('num_buckets', [2, 3, 7])
def test_bucketed_attention_equals_padded_attention(num_buckets):
    torch.manual_seed(0)
    sizes = [7, 1, 9, 3, 5, 2, 9]  # Unsorted: the layout sorts them.
    longest = max(sizes)
    node_mask = mask_of(sizes)
    key_mask = torch.cat([torch.ones(len(sizes), 1, dtype=torch.bool),
                          node_mask], 1)
    bias = torch.randn(len(sizes), 4, 1 + longest, 1 + longest)
    bias = bias.masked_fill(~key_mask[:, None, None, :], float('-inf'))
    bias.requires_grad_()
    x = torch.randn(len(sizes), 1 + longest, 16, requires_grad=True)
    attention = BiasedMultiheadAttention(16, 4).eval()
    padded = attention(x, bias)
    padded_grads = torch.autograd.grad(padded[key_mask].square().sum(),
                                       (x, bias))
    tokens = PackedTokens.from_node_mask(node_mask, num_buckets)
    tokens.biases = bucket_slices(bias, tokens)
    packed, _ = tokens.unpack(attention(pack_padded(tokens, x), tokens))
    packed_grads = torch.autograd.grad(packed[key_mask].square().sum(),
                                       (x, bias))
    torch.testing.assert_close(packed[key_mask], padded[key_mask])
    torch.testing.assert_close(packed_grads[0][key_mask],
                               padded_grads[0][key_mask])
    finite = bias.isfinite()
    torch.testing.assert_close(packed_grads[1][finite],
                               padded_grads[1][finite])


@pytest.mark.parametrize('node_norm', ['layer', 'batch'])
def test_sep_norm_on_packed_tokens_equals_padded(node_norm):
    node_mask = mask_of([4, 1, 2, 3, 6])
    real = torch.cat([torch.ones(5, 1, dtype=torch.bool), node_mask], 1)
    x = torch.randn(5, 7, 6)
    norm = SepNorm(6, 'batch', node_norm).train()
    padded = norm(x, node_mask)
    tokens = PackedTokens.from_node_mask(node_mask, num_buckets=3)
    packed, _ = tokens.unpack(norm(pack_padded(tokens, x), tokens))
    torch.testing.assert_close(packed[real], padded[real])


def test_attend_needs_a_bias():
    tokens = PackedTokens.from_node_mask(mask_of([2, 1]), num_buckets=2)
    with pytest.raises(ValueError, match='no attention bias'):
        tokens.attend(lambda x, bias: x, torch.zeros(5, 4))


def test_model_outputs_do_not_depend_on_buckets():
    graphs = [AddShortestPaths()(g) for g in load_real_zinc('val', limit=40)]
    batch = Batch.from_data_list(graphs)
    outputs, encodings = [], []
    for buckets in (1, 4):
        torch.manual_seed(0)
        model = GraphormerSepNorm(num_layers=2, hidden_channels=32,
                                  ffn_channels=32, num_heads=4, max_degree=8,
                                  attention_buckets=buckets).eval()
        with torch.no_grad():
            outputs.append(model(batch))
            encodings.append(model.encode(batch))
        assert getattr(batch, 'layout', None) is None  # Not written into.
    torch.testing.assert_close(outputs[0], outputs[1], rtol=1e-5, atol=1e-6)
    (first, mask), (second, _) = encodings
    torch.testing.assert_close(first, second, rtol=1e-5, atol=1e-6)
    assert (first[:, 1:][~mask] == 0).all()
