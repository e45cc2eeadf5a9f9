"""GraphormerSepNorm: invariances, what the head reads, SepNorm hazards,
parameter count, and a short overfit on real ZINC graphs."""
import dataclasses
import inspect

import pytest
import torch
import torch.nn.functional as F
from conftest import load_real_zinc
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm, SepNorm
from graphormer_sepnorm.models import GraphormerConfig

SMALL = dict(num_layers=3, hidden_channels=32, ffn_channels=32, num_heads=4,
             max_degree=8)
VARIANTS = [
    dict(norm='sep', pre_norm=True),
    dict(norm='sep', pre_norm=False),
    dict(norm='share', pre_norm=True),
    dict(norm='sep', pre_norm=True, node_token_norm='batch',
         embedding_norm=True),
    dict(norm='sep', pre_norm=True, edge_encoding='single'),
]


def preprocessed(graphs):
    return [AddShortestPaths()(g.clone()) for g in graphs]


@pytest.fixture(scope='module')
def graphs():
    return preprocessed(load_real_zinc('val', limit=64))


def randomize_running_stats(model):
    gen = torch.Generator().manual_seed(1)
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm1d):
            module.running_mean.copy_(torch.randn(module.num_features,
                                                  generator=gen))
            module.running_var.copy_(torch.rand(module.num_features,
                                                generator=gen) + 0.5)


def eval_model(seed=0, **kwargs):
    torch.manual_seed(seed)
    model = GraphormerSepNorm(**{**SMALL, **kwargs})
    randomize_running_stats(model)
    return model.eval()


def permute_nodes(data, seed):
    perm = torch.randperm(data.num_nodes,
                          generator=torch.Generator().manual_seed(seed))
    new_id = torch.empty_like(perm)
    new_id[perm] = torch.arange(data.num_nodes)
    return Data(x=data.x[perm], edge_index=new_id[data.edge_index],
                edge_attr=data.edge_attr, y=data.y)


@pytest.mark.parametrize('variant', VARIANTS)
def test_output_is_invariant_to_node_relabelling(graphs, variant):
    model = eval_model(**variant)
    originals = graphs[:16]
    permuted = preprocessed(
        [permute_nodes(g, seed) for seed, g in enumerate(originals)])
    with torch.no_grad():
        out = model(Batch.from_data_list(originals))
        out_permuted = model(Batch.from_data_list(permuted))
    torch.testing.assert_close(out, out_permuted, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize('variant', VARIANTS)
def test_output_is_invariant_to_padding(graphs, variant):
    model = eval_model(**variant)
    smallest = min(graphs, key=lambda g: g.num_nodes)
    larger = sorted(graphs, key=lambda g: -g.num_nodes)[:7]
    with torch.no_grad():
        alone = model(Batch.from_data_list([smallest]))
        padded = model(Batch.from_data_list(larger[:3] + [smallest] +
                                            larger[3:]))
    assert padded.size(0) == 8
    torch.testing.assert_close(alone[0], padded[3], atol=1e-5, rtol=1e-4)


def test_head_reads_only_the_graph_token(graphs):
    model = eval_model()
    batch = Batch.from_data_list(graphs[:8])

    # The final norm's output: packed tokens; inputs[1] is their layout.
    def scramble(module, inputs, output):
        graph_rows = inputs[1].graph_index
        out = 100 * torch.randn_like(output)
        out[graph_rows] = output[graph_rows]
        return out

    def shift_graph_token(module, inputs, output):
        out = output.clone()
        out[inputs[1].graph_index] += 1.0
        return out

    with torch.no_grad():
        reference = model(batch)
        handle = model.final_norm.register_forward_hook(scramble)
        scrambled_nodes = model(batch)
        handle.remove()
        handle = model.final_norm.register_forward_hook(shift_graph_token)
        shifted_graph_token = model(batch)
        handle.remove()
    torch.testing.assert_close(reference, scrambled_nodes)
    assert not torch.allclose(reference, shifted_graph_token)
    assert model.graph_embedding(batch).shape == (8, SMALL['hidden_channels'])


def graph_token_batch_norms(model):
    return [
        m.graph_norm for m in model.modules()
        if isinstance(m, SepNorm) and isinstance(m.graph_norm,
                                                 torch.nn.BatchNorm1d)
    ]


def train_steps(model, graphs, steps=30, lr=1e-3):
    loader = DataLoader(graphs, batch_size=16, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    step = 0
    while step < steps:
        for batch in loader:
            loss = F.l1_loss(model(batch).squeeze(-1), batch.y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
    return model


def test_pre_ln_first_norm_avoids_constant_graph_token_batch_norm(graphs):
    # Hazard (a): with pre-LN the first block's norm sees the same learned
    # graph-token embedding for every graph (dropout on, as in the recipes).
    torch.manual_seed(0)
    model = GraphormerSepNorm(**SMALL, dropout=0.1)
    assert model.layers[0].attention_norm.graph_token_norm == 'layer'
    inputs = []
    for norm in graph_token_batch_norms(model):
        norm.register_forward_pre_hook(
            lambda module, args: inputs.append(args[0].detach()))
    train_steps(model, graphs, steps=20)
    # Every graph-token batch norm saw graph tokens that differ between
    # graphs (small differences early in training, around 1e-6 in variance,
    # but never the exact zero of the naive design below).
    assert len(inputs) == 20 * len(graph_token_batch_norms(model))
    assert all(x.var(0).min() > 1e-9 for x in inputs)
    model.eval()
    with torch.no_grad():
        out = model(Batch.from_data_list(graphs[:32]))
    assert torch.isfinite(out).all() and out.std() < 10


def test_hazard_is_real_for_a_naive_first_block_batch_norm(graphs):
    # The same model with batch norm on the first block's graph token: its
    # running variance collapses, so evaluation would divide by ~sqrt(eps).
    torch.manual_seed(0)
    model = GraphormerSepNorm(**SMALL)
    naive = SepNorm(SMALL['hidden_channels'])
    model.layers[0].attention_norm = naive
    inputs = []
    naive.graph_norm.register_forward_pre_hook(
        lambda module, args: inputs.append(args[0].detach()))
    train_steps(model, graphs, steps=20)
    assert max(x.var(0).max() for x in inputs) < 1e-12
    # Zero batch variance: the running variance decays geometrically to 0.
    torch.testing.assert_close(naive.graph_norm.running_var,
                               torch.full_like(naive.graph_norm.running_var,
                                               0.9**20), rtol=1e-3,
                               atol=1e-6)


def test_eval_matches_train_when_running_stats_are_the_batch_stats(graphs):
    torch.manual_seed(0)
    model = train_steps(GraphormerSepNorm(**SMALL, attention_dropout=0.0,
                                          activation_dropout=0.0), graphs)
    batch = Batch.from_data_list(graphs)
    for norm in graph_token_batch_norms(model):
        norm.reset_running_stats()
        norm.momentum = None  # cumulative: one pass gives exact statistics
    with torch.no_grad():
        train_out = model.train()(batch)
        eval_out = model.eval()(batch)
    # Only the unbiased (eval) vs biased (train) variance differs: 1/(2B).
    torch.testing.assert_close(eval_out, train_out, rtol=0.05, atol=0.05)


def test_single_graph_batch_trains(graphs):
    # Hazard (b): batch norm has no statistics over one graph.
    torch.manual_seed(0)
    model = GraphormerSepNorm(**SMALL).train()
    batch = Batch.from_data_list(graphs[:1])
    loss = model(batch).sum()
    loss.backward()
    assert torch.isfinite(loss)


def test_zinc_slim_parameter_count():
    hidden, heads, layers, atoms, bonds = 80, 8, 12, 28, 4
    max_degree, max_distance, hops = 64, 64, 20
    linear = lambda i, o: i * o + o  # noqa: E731
    norm = 2 * hidden + 2 * hidden  # graph-token + node-token affine
    expected = (
        atoms * hidden + (max_degree + 1) * hidden + hidden  # tokens
        + bonds * heads + (max_distance + 2) * heads + heads  # bias tables
        + hops * heads * heads  # per-hop matrices
        + layers * (linear(hidden, 3 * hidden) + linear(hidden, hidden) +
                    linear(hidden, 80) + linear(80, hidden) + 2 * norm) +
        norm  # final norm
        + linear(hidden, hidden) + 2 * hidden + linear(hidden, 1))  # head
    model = GraphormerSepNorm(atom_vocab_sizes=[atoms],
                              bond_vocab_sizes=[bonds])
    count = sum(p.numel() for p in model.parameters())
    assert count == expected
    assert count < 500_000


def test_short_overfit_on_real_graphs(graphs):
    torch.manual_seed(0)
    model = GraphormerSepNorm(**SMALL, attention_dropout=0.0,
                              activation_dropout=0.0)
    batch = Batch.from_data_list(graphs[:24])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    model.train()
    for _ in range(60):
        loss = F.l1_loss(model(batch).squeeze(-1), batch.y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert min(losses[-5:]) < 0.3 * losses[0], losses[::5]


def test_config_round_trip():
    model = eval_model(norm='share', pre_norm=False)
    clone = GraphormerSepNorm.from_config(model.config)
    assert clone.config == model.config
    assert {k: v.shape for k, v in clone.state_dict().items()} == {
        k: v.shape for k, v in model.state_dict().items()}


def test_attention_buckets_is_a_runtime_setting_not_a_saved_option():
    # Configs saved with it (older checkpoints, the bundled models) load.
    model = GraphormerSepNorm.from_config(dict(eval_model().config,
                                               attention_buckets=2))
    assert 'attention_buckets' not in model.config
    assert model.layout_options()['num_buckets'] == 2
    assert model.layout_options(num_buckets=1)['num_buckets'] == 1


def test_the_arguments_are_the_fields_of_the_config():
    fields = dataclasses.fields(GraphormerConfig)
    params = inspect.signature(GraphormerSepNorm).parameters
    assert list(params) == [f.name for f in fields] + ['attention_buckets']
    for f in fields:
        assert params[f.name].default == f.default
        assert f'{f.name} (' in GraphormerSepNorm.__doc__
    config = GraphormerConfig(num_heads=4)
    assert GraphormerSepNorm(num_heads=4).config == dataclasses.asdict(
        config) == GraphormerSepNorm.from_config(config).config


def test_unknown_config_key_suggests_the_right_one():
    with pytest.raises(ValueError, match="Did you mean 'num_heads'"):
        GraphormerSepNorm.from_config({'num_head': 8})
    with pytest.raises(TypeError) as error:
        GraphormerSepNorm(hidden_channel=64)
    assert str(error.value) == (
        "Unknown model option 'hidden_channel'. Did you mean "
        "'hidden_channels'? Valid options: " +
        ', '.join(inspect.signature(GraphormerSepNorm).parameters))
    with pytest.raises(TypeError, match="Did you mean 'norm'"):
        GraphormerSepNorm(nrom='sep')


@pytest.mark.parametrize('kwargs, message', [
    (dict(norm='batch'), "norm must be one of 'sep', 'share'"),
    (dict(hidden_channels=30, num_heads=4), 'divisible by num_heads'),
    (dict(edge_encoding='double'), "edge_encoding must be one of "
     "'multi_hop', 'single', got 'double'"),
])
def test_invalid_options_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GraphormerSepNorm(**{**SMALL, **kwargs})


def test_bad_inputs_are_clear_errors(graphs):
    model = eval_model()
    batch = Batch.from_data_list(graphs[:2])
    bad_atom = batch.clone()
    bad_atom.x[0, 0] = 28
    with pytest.raises(ValueError, match=r"'x'\[0, 0\] = 28 is outside"):
        model(bad_atom)
    float_x = batch.clone()
    float_x.x = float_x.x.float()
    with pytest.raises(ValueError, match='integer category ids'):
        model(float_x)
    raw = Batch.from_data_list(load_real_zinc('val', limit=2))
    with pytest.raises(ValueError, match='pre_transform=.*AddShortestPaths'):
        model(raw)
    small = GraphormerSepNorm(**SMALL, max_nodes=10).eval()
    with pytest.raises(ValueError, match='more than the model.s max_nodes=10'):
        small(batch)


def test_sync_batch_norm_conversion_keeps_the_model_working(graphs):
    model = eval_model()
    converted = torch.nn.SyncBatchNorm.convert_sync_batchnorm(
        eval_model()).eval()
    assert any(isinstance(m, torch.nn.SyncBatchNorm)
               for m in converted.modules())
    batch = Batch.from_data_list(graphs[:4])
    with torch.no_grad():
        torch.testing.assert_close(model(batch), converted(batch))
