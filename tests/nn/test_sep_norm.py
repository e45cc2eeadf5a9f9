"""SepNorm statistics: graph token vs node tokens, padding excluded."""
import pytest
import torch
import torch.nn.functional as F

from graphormer_sepnorm.nn import SepNorm, ShareNorm


def padded_tokens(sizes, channels=6, seed=0):
    """Random token sequences [B, 1 + max(sizes), C] whose padding holds
    large garbage, with the matching node mask."""
    gen = torch.Generator().manual_seed(seed)
    batch, longest = len(sizes), max(sizes)
    x = torch.randn(batch, 1 + longest, channels, generator=gen) * 3 + 1
    mask = torch.arange(longest)[None, :] < torch.tensor(sizes)[:, None]
    garbage = 1e4 * torch.randn(batch, longest, channels, generator=gen)
    x[:, 1:][~mask] = garbage[~mask]
    return x, mask


def test_graph_token_batch_norm_uses_graph_tokens_only():
    x, mask = padded_tokens([3, 5, 2, 4])
    norm = SepNorm(6, 'batch', 'layer', momentum=1.0).train()
    out = norm(x, mask)
    graph_tokens = x[:, 0]
    mean = graph_tokens.mean(0)
    var = graph_tokens.var(0, unbiased=False)
    torch.testing.assert_close(out[:, 0],
                               (graph_tokens - mean) / torch.sqrt(var + 1e-5))
    # momentum=1: running statistics are this batch's (unbiased variance).
    torch.testing.assert_close(norm.graph_norm.running_mean, mean)
    torch.testing.assert_close(norm.graph_norm.running_var,
                               graph_tokens.var(0, unbiased=True))


def test_node_token_layer_norm_is_per_token():
    x, mask = padded_tokens([3, 5])
    out = SepNorm(6, 'batch', 'layer')(x, mask)
    nodes = x[:, 1:][mask]
    expected = (nodes - nodes.mean(-1, keepdim=True)) / torch.sqrt(
        nodes.var(-1, unbiased=False, keepdim=True) + 1e-5)
    torch.testing.assert_close(out[:, 1:][mask], expected)


def test_node_token_batch_norm_ignores_padding():
    x, mask = padded_tokens([3, 5, 1])
    norm = SepNorm(6, 'layer', 'batch', momentum=1.0).train()
    out = norm(x, mask)
    nodes = x[:, 1:][mask]  # 9 real nodes; padding holds 1e4-sized garbage
    mean, var = nodes.mean(0), nodes.var(0, unbiased=False)
    torch.testing.assert_close(out[:, 1:][mask],
                               (nodes - mean) / torch.sqrt(var + 1e-5))
    torch.testing.assert_close(norm.node_norm.running_mean, mean)
    assert (out[:, 1:][~mask] == 0).all()


def test_padding_never_changes_real_outputs():
    x, mask = padded_tokens([3, 5, 2])
    other = x.clone()
    other[:, 1:][~mask] = -7.0
    for graph_norm in ('batch', 'layer'):
        for node_norm in ('batch', 'layer'):
            norm = SepNorm(6, graph_norm, node_norm).train()
            first = norm(x, mask)
            norm = SepNorm(6, graph_norm, node_norm).train()
            second = norm(other, mask)
            torch.testing.assert_close(first[:, 0], second[:, 0])
            torch.testing.assert_close(first[:, 1:][mask],
                                       second[:, 1:][mask])


def test_graph_and_node_tokens_are_normalized_separately():
    # Graph tokens far from the nodes: a shared norm mixes them up, SepNorm
    # normalizes each group with its own statistics.
    x, mask = padded_tokens([4, 4, 4, 4])
    x[:, 0] += 100.0
    sep = SepNorm(6, 'batch', 'batch').train()(x, mask)
    assert sep[:, 0].mean(0).abs().max() < 1e-5
    assert sep[:, 1:][mask].mean(0).abs().max() < 1e-5


def test_share_norm_is_one_layer_norm_over_all_tokens():
    x, mask = padded_tokens([2, 3])
    norm = ShareNorm(6)
    torch.testing.assert_close(norm(x, mask), F.layer_norm(x, (6, )))


def test_single_graph_training_batch_uses_running_statistics():
    norm = SepNorm(6, 'batch', 'layer').train()
    x, mask = padded_tokens([3, 4, 5, 2])
    norm(x, mask)  # Some running statistics.
    before_mean = norm.graph_norm.running_mean.clone()
    before_var = norm.graph_norm.running_var.clone()
    one, one_mask = padded_tokens([4], seed=1)
    out = norm(one, one_mask)  # BatchNorm1d alone would raise here.
    assert torch.isfinite(out).all()
    assert torch.equal(norm.graph_norm.running_mean, before_mean)
    assert torch.equal(norm.graph_norm.running_var, before_var)
    expected = norm.eval()(one, one_mask)
    torch.testing.assert_close(out, expected)


def test_graph_token_batch_norm_converts_to_sync_batch_norm():
    model = torch.nn.Sequential(SepNorm(6))
    converted = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[0].graph_norm, torch.nn.SyncBatchNorm)


def test_invalid_choice_names_the_options():
    with pytest.raises(ValueError, match="'batch' or 'layer'"):
        SepNorm(6, graph_token_norm='group')


def test_sync_batch_norm_node_tokens_still_ignore_padding():
    # SyncBatchNorm is no BatchNorm1d subclass; the masking must still apply.
    x, mask = padded_tokens([3, 5, 1])
    norm = torch.nn.SyncBatchNorm.convert_sync_batchnorm(
        torch.nn.Sequential(SepNorm(6, 'layer', 'batch'))).eval()[0]
    norm.node_norm.running_mean.fill_(1.0)
    out = norm(x, mask)
    assert (out[:, 1:][~mask] == 0).all()
    nodes = x[:, 1:][mask]
    torch.testing.assert_close(out[:, 1:][mask],
                               (nodes - 1.0) / torch.sqrt(torch.tensor(1 +
                                                                       1e-5)))
