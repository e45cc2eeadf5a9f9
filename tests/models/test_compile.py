"""torch.compile(fullgraph=True, dynamic=True) compiles the training forward
and backward of GraphormerSepNorm in one graph (no graph break), for both
norms and both featurizers, gives the eager outputs and gradients within
float tolerance, and takes a batch of other sizes without recompiling."""
import copy

import pytest
import torch
from conftest import laid_out, load_real_zinc
from torch_geometric.data import Batch

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm
from graphormer_sepnorm.data.featurize import smiles_to_ogb_graph


def zinc_batches():
    graphs = [AddShortestPaths()(g) for g in load_real_zinc('val', limit=40)]
    return graphs[:24], graphs[24:]


def ogb_batches(molhiv_smiles):
    graphs = [AddShortestPaths()(smiles_to_ogb_graph(s))
              for s in molhiv_smiles[:40]]
    return graphs[:24], graphs[24:]


def build(featurizer, norm):
    if featurizer == 'zinc':
        vocab = dict(atom_vocab_sizes=[28], bond_vocab_sizes=[4])
    else:
        from ogb.utils.features import (get_atom_feature_dims,
                                        get_bond_feature_dims)
        vocab = dict(atom_vocab_sizes=get_atom_feature_dims(),
                     bond_vocab_sizes=get_bond_feature_dims())
    torch.manual_seed(0)
    # No dropout: eager and compiled draw random numbers differently.
    return GraphormerSepNorm(**vocab, num_layers=2, hidden_channels=32,
                             ffn_channels=32, num_heads=4, norm=norm,
                             attention_dropout=0.0, activation_dropout=0.0,
                             multi_hop_max_dist=5, attention_buckets=1)


def step(model, batch):
    model.zero_grad()
    out = model(batch)
    out.square().sum().backward()
    return out.detach(), [p.grad.clone() for p in model.parameters()]


def assert_steps_match(eager, compiled, first, second):
    """One training step of :obj:`compiled` on each batch of graphs equals
    one of :obj:`eager`; the second batch (other sizes) reuses the graphs
    the first compiled (fullgraph=True raises on any graph break)."""
    for graphs in (first, second):
        batch, _ = laid_out(Batch.from_data_list(graphs),
                            **eager.layout_options())
        eager_out, eager_grads = step(eager, batch)
        with torch.compiler.set_stance(
                'fail_on_recompile' if graphs is second else 'default'):
            out, grads = step(compiled, batch)
        torch.testing.assert_close(out, eager_out, rtol=1e-4, atol=1e-5)
        # Relative to the gradients' scale: fused kernels add in another
        # order, and some gradients are zero but for rounding (the biases
        # just before a norm that removes their shift).
        scale = max(float(g.abs().max()) for g in eager_grads)
        for got, expected in zip(grads, eager_grads):
            torch.testing.assert_close(got, expected, rtol=1e-3,
                                       atol=1e-4 * scale)


# Every setting is traced whole (Dynamo with fullgraph=True, AOT autograd
# for the backward); one is also compiled by Inductor into machine code
# (minutes on two cores, so once).
@pytest.mark.parametrize('featurizer, norm, backend', [
    ('zinc', 'sep', 'aot_eager'), ('zinc', 'share', 'aot_eager'),
    ('ogb', 'share', 'aot_eager'), ('ogb', 'sep', 'inductor')])
def test_full_graph_compile_matches_eager(featurizer, norm, backend,
                                          molhiv_smiles):
    torch._dynamo.reset()
    first, second = (zinc_batches() if featurizer == 'zinc' else
                     ogb_batches(molhiv_smiles))
    model = build(featurizer, norm).train()
    compiled = torch.compile(model, fullgraph=True, dynamic=True,
                             backend=backend)
    assert_steps_match(model, compiled, first, second)


@pytest.mark.parametrize('norm', ['sep', 'share'])
def test_compiled_regions_match_eager_and_compile_once(norm):
    """compile_regions: the node encoder, the attention bias and the layers
    compiled apart, each whole, equal to eager; the four layers share one
    graph (SepNorm's first layer has its own: it normalizes the constant
    graph token with a LayerNorm), so 3 graphs or 4, not 6 or 7; a batch of
    other sizes recompiles nothing."""
    from torch._dynamo.utils import counters
    torch._dynamo.reset()
    counters.clear()
    first, second = zinc_batches()
    torch.manual_seed(0)
    model = GraphormerSepNorm(num_layers=4, hidden_channels=32,
                              ffn_channels=32, num_heads=4, norm=norm,
                              attention_dropout=0.0, activation_dropout=0.0,
                              multi_hop_max_dist=5, attention_buckets=1)
    eager = copy.deepcopy(model).train()
    model.train().compile_regions(fullgraph=True, dynamic=True,
                                  backend='aot_eager')
    names = [name for name, _ in model.named_parameters()]
    assert names == [name for name, _ in eager.named_parameters()]
    assert_steps_match(eager, model, first, second)
    assert counters['stats']['unique_graphs'] == (4 if norm == 'sep' else 3)


def test_training_with_dropout_compiles_in_one_graph():
    """Dropout on (the recipe's): compiled graphs draw with PyTorch's own
    dropout (the CPU's 32-bit draw viewed from 64-bit words broke AOT
    autograd), so the numbers differ from eager but the step runs whole and
    drops about the given fraction."""
    torch._dynamo.reset()
    first, _ = zinc_batches()
    torch.manual_seed(0)
    model = GraphormerSepNorm(num_layers=1, hidden_channels=16,
                              ffn_channels=16, num_heads=2, dropout=0.5,
                              attention_dropout=0.1, activation_dropout=0.1,
                              attention_buckets=4).train()
    compiled = torch.compile(model, fullgraph=True, dynamic=True,
                             backend='aot_eager')
    batch, _ = laid_out(Batch.from_data_list(first),
                        **model.layout_options())
    out, grads = step(compiled, batch)
    assert torch.isfinite(out).all()
    assert all(torch.isfinite(g).all() for g in grads)
    dropped = torch.compile(model.input_dropout, fullgraph=True,
                            backend='aot_eager')(torch.ones(100_000))
    assert abs(float((dropped == 0).float().mean()) - 0.5) < 0.01


def test_a_batch_without_layout_is_refused_naming_the_loader():
    """Under torch.compile the layout cannot be computed in the forward
    pass (its shapes are data-dependent): the error says how to prepare it,
    instead of Dynamo's guard on a data-dependent expression."""
    torch._dynamo.reset()
    first, _ = zinc_batches()
    model = build('zinc', 'sep').eval()
    compiled = torch.compile(model, fullgraph=True, dynamic=True,
                             backend='eager')
    with pytest.raises(Exception) as error:
        compiled(Batch.from_data_list(first[:4]))
    message = str(error.value)
    assert ('prepare the layout with GraphormerDataLoader(dataset, '
            'batch_size, layout=model.layout_options())') in message
    assert 'data-dependent' not in message
