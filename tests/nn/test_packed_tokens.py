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


def test_layout_sorts_by_size_and_cuts_padding():
    node_mask = mask_of([4, 1, 2, 3])
    tokens = PackedTokens(node_mask, num_buckets=2)
    assert tokens.order.tolist() == [1, 2, 3, 0]
    # Bucket 1: graphs 1 and 2, length 1 + 2; bucket 2: graphs 3 and 0,
    # length 1 + 4.
    assert tokens.buckets == [(2, 3), (2, 5)]
    assert tokens.num_tokens == 16
    # Graph tokens, per graph in the original order, in the packed rows.
    assert tokens.graph_index.tolist() == [11, 0, 3, 6]
    # Node pairs: blocks [2, 2, 2] and [2, 4, 4].
    assert tokens.pair_blocks == [(2, 2), (2, 4)]
    assert tokens.num_pairs == 2 * 4 + 2 * 16
    assert tokens.pair_offset.tolist() == [24, 0, 4, 8]
    assert tokens.pair_stride.tolist() == [4, 2, 2, 4]
    padded = torch.arange(4 * 5).view(4, 5)  # Row 5g + t: token t of graph g.
    assert tokens.pack(padded).tolist() == [5, 6, 7, 10, 11, 12,
                                            15, 16, 17, 18, 19,
                                            0, 1, 2, 3, 4]
    # Node tokens: every real token but the graph tokens (padding excluded).
    assert sorted(tokens.node_index.tolist()) == [1, 4, 5, 7, 8, 9,
                                                  12, 13, 14, 15]


@pytest.mark.parametrize('num_buckets', [1, 2, 3, 7])
def test_unpack_inverts_pack_and_zeroes_padding(num_buckets):
    node_mask = mask_of([5, 1, 3, 9, 2, 9, 4])
    x = torch.randn(7, 10, 6)
    tokens = PackedTokens(node_mask, num_buckets)
    out = tokens.unpack(tokens.pack(x))
    real = torch.cat([torch.ones(7, 1, dtype=torch.bool), node_mask], 1)
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
    tokens = PackedTokens(node_mask, num_buckets)
    tokens.biases = bucket_slices(bias, tokens)
    packed = tokens.unpack(attention(tokens.pack(x), tokens))
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
    tokens = PackedTokens(node_mask, num_buckets=3)
    packed = tokens.unpack(norm(tokens.pack(x), tokens))
    torch.testing.assert_close(packed[real], padded[real])


def test_attend_needs_a_bias():
    tokens = PackedTokens(mask_of([2, 1]), num_buckets=2)
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
    torch.testing.assert_close(outputs[0], outputs[1], rtol=1e-5, atol=1e-6)
    (first, mask), (second, _) = encodings
    torch.testing.assert_close(first, second, rtol=1e-5, atol=1e-6)
    assert (first[:, 1:][~mask] == 0).all()
