"""GraphormerDataLoader on real ZINC graphs: PyG's batches with the layout
add_batch_layout gives them, a new order every epoch, the same batches
from worker processes, and a forward pass that then computes no layout
(counted); a per-graph add_batch_layout is refused naming the loader."""
import functools
import pickle

import pytest
import torch
from conftest import load_real_zinc
from torch_geometric.loader import DataLoader

import graphormer_sepnorm
from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm
from graphormer_sepnorm.data import GraphormerDataLoader, LayoutCollater
from graphormer_sepnorm.models import graphormer_sepnorm as model_module
from graphormer_sepnorm.transforms import add_batch_layout, batch_layout

LAYOUT = dict(num_buckets=3, multi_hop_max_dist=5)


@pytest.fixture(scope='module')
def graphs():
    return [AddShortestPaths()(g) for g in load_real_zinc('val', limit=60)]


def same_layout(got, want) -> bool:
    for a, b in zip(got, want):
        if isinstance(b, tuple):
            if not all(torch.equal(x, y) for x, y in zip(a, b)):
                return False
        elif isinstance(b, torch.Tensor):
            if not torch.equal(a, b):
                return False
        elif a != b:
            return False
    return True


def test_exported_at_the_top_and_in_data():
    assert graphormer_sepnorm.GraphormerDataLoader is GraphormerDataLoader
    assert 'GraphormerDataLoader' in graphormer_sepnorm.__all__
    assert isinstance(pickle.loads(pickle.dumps(LayoutCollater([], LAYOUT))),
                      LayoutCollater)


def test_batches_are_pyg_batches_with_their_layout(graphs):
    ours = list(GraphormerDataLoader(graphs, 16, layout=LAYOUT))
    theirs = list(DataLoader(graphs, 16))
    assert len(ours) == len(theirs) == 4
    for a, b in zip(ours, theirs):
        for key in ('x', 'edge_index', 'edge_attr', 'y', 'spd', 'batch'):
            assert torch.equal(a[key], b[key])
        assert same_layout(a.layout, batch_layout(b, **LAYOUT))


def test_a_new_order_every_epoch(graphs):
    loader = GraphormerDataLoader(graphs, 16, shuffle=True, layout=LAYOUT,
                                  generator=torch.Generator().manual_seed(0))
    positions = {float(g.y): i for i, g in enumerate(graphs)}
    orders = [[positions[float(y)] for b in loader for y in b.y]
              for _ in range(3)]
    assert all(sorted(order) == list(range(60)) for order in orders)
    assert len({tuple(order) for order in orders}) == 3


def test_model_options_or_model(graphs):
    model = GraphormerSepNorm(num_layers=1, hidden_channels=8,
                              ffn_channels=8, num_heads=2,
                              multi_hop_max_dist=4, attention_buckets=2)
    loader = GraphormerDataLoader(graphs, 8, layout=model)
    assert loader.layout == model.layout_options() == dict(
        num_buckets=2, multi_hop_max_dist=4)
    with pytest.raises(TypeError, match='no collate_fn'):
        GraphormerDataLoader(graphs, 8, layout=LAYOUT, collate_fn=list)
    with pytest.raises(TypeError, match='model.layout_options'):
        GraphormerDataLoader(graphs, 8, layout=4)


def test_with_workers_the_forward_pass_computes_no_layout(graphs,
                                                          monkeypatch):
    torch.manual_seed(0)
    model = GraphormerSepNorm(num_layers=1, hidden_channels=16,
                              ffn_channels=16, num_heads=2,
                              multi_hop_max_dist=5).eval()
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return batch_layout(*args, **kwargs)

    # The model's own call; worker processes start from this process's
    # modules but count in their own memory, not in `calls`.
    monkeypatch.setattr(model_module, 'batch_layout', counted)
    loader = GraphormerDataLoader(graphs, 16, num_workers=2,
                                  layout=model.layout_options())
    with torch.no_grad():
        laid_out = [(model(batch), batch.layout) for batch in loader]
        assert calls == []
        # The control: PyG's loader leaves every layout to the forward pass.
        plain = [model(batch) for batch in DataLoader(graphs, 16)]
    assert len(calls) == len(plain) == 4
    for (out, layout), expected, batch in zip(laid_out, plain,
                                              DataLoader(graphs, 16)):
        torch.testing.assert_close(out, expected, rtol=0, atol=1e-6)
        assert same_layout(layout, batch_layout(batch,
                                                **model.layout_options()))


def test_a_per_graph_layout_is_refused_naming_the_loader():
    dataset = load_real_zinc('val', limit=4)
    transform = functools.partial(add_batch_layout, **LAYOUT)
    with pytest.raises(ValueError, match='layout is per batch') as error:
        transform(AddShortestPaths()(dataset[0]))
    assert 'GraphormerDataLoader(' in str(error.value)
