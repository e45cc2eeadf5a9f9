"""Weight import from the reference Graphormer (Hugging Face transformers) and
numerical equivalence on real MolHIV molecules (issue 5).

The reference is a test-only dependency: without transformers these tests
skip (CI installs it with ``pip install -e .[reference]``).
"""
import math

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch

from graphormer_sepnorm import GraphormerSepNorm
from graphormer_sepnorm.checkpoint import load_model
from graphormer_sepnorm.convert import (ConversionError, convert_graphormer,
                                        reference_inputs, to_sepnorm)
from graphormer_sepnorm.data.featurize import (FeaturizationError,
                                               smiles_to_ogb_graph)
from graphormer_sepnorm.transforms import AddShortestPaths

try:
    from transformers.models.deprecated.graphormer.configuration_graphormer \
        import GraphormerConfig
    from transformers.models.deprecated.graphormer.modeling_graphormer import \
        GraphormerForGraphClassification
except ImportError:  # pragma: no cover - depends on the environment
    pytest.skip(
        "the reference Graphormer (transformers>=4.41,<4.58 with its "
        "deprecated Graphormer model) is not installed; install it with "
        "pip install -e .[reference] to run the equivalence tests",
        allow_module_level=True)

HIDDEN, HEADS, LAYERS, HOPS = 32, 4, 3, 5
TOLERANCE = 1e-5


@pytest.fixture(scope='module')
def molecules(molhiv_smiles):
    """The first 60 MolHIV molecules, 12 salts / disconnected ones, the 4
    largest of the first 3000 and 2 single-atom ones, featurized as OGB and
    preprocessed by AddShortestPaths."""
    chosen = list(molhiv_smiles[:60])
    chosen += [s for s in molhiv_smiles if '.' in s][:12]
    chosen += sorted(molhiv_smiles[:3000], key=len)[-4:]
    chosen += ['C', '[Na+].[Cl-]']
    transform = AddShortestPaths()
    graphs = []
    for smiles in chosen:
        try:
            graph = smiles_to_ogb_graph(smiles)
        except FeaturizationError:
            continue
        graphs.append(transform(graph))
    assert len(graphs) >= 70
    sizes = [g.num_nodes for g in graphs]
    assert min(sizes) == 1 and max(sizes) > 60
    assert any((g.spd < 0).any() for g in graphs)  # Disconnected ones.
    return graphs


def random_reference(pre_ln: bool, edge_type: str, num_classes: int = 1,
                     embedding_norm: bool = True, seed: int = 0):
    """A randomly initialised small reference model in float64 whose norms
    have non-trivial affines and whose biases are not zero."""
    torch.manual_seed(seed)
    config = GraphormerConfig(
        num_classes=num_classes, num_hidden_layers=LAYERS,
        embedding_dim=HIDDEN, ffn_embedding_dim=48,
        num_attention_heads=HEADS, multi_hop_max_dist=HOPS,
        edge_type=edge_type, pre_layernorm=pre_ln,
        encoder_normalize_before=embedding_norm, dropout=0.1,
        attention_dropout=0.1, activation_dropout=0.1)
    model = GraphormerForGraphClassification(config).double()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if 'layer_norm' in name or 'emb_layer_norm' in name:
                if name.endswith('weight'):
                    param.copy_(1 + 0.3 * torch.randn_like(param))
                else:
                    param.normal_(0, 0.3)
            elif name.endswith('bias'):
                param.normal_(0, 0.1)
            elif 'encoder.weight' in name or 'graph_token' in name:
                # Embeddings large enough for the bias terms to matter.
                param.normal_(0, 0.5)
                if 'edge_encoder' in name or 'spatial_pos' in name:
                    param[0] = 0  # padding_idx rows stay zero.
            elif 'edge_dis_encoder' in name:
                param.normal_(0, 0.5)
            else:
                param.normal_(0, 0.2)
    return model.eval()


def relative_error(ours: torch.Tensor, reference: torch.Tensor) -> float:
    return float(((ours - reference).abs() /
                  reference.abs().clamp(min=1e-3)).max())


def ours_output(model: GraphormerSepNorm, graphs) -> torch.Tensor:
    with torch.no_grad():
        return model.double()(Batch.from_data_list(graphs))


CONFIGS = [(pre_ln, edge_type, spatial_pos_max)
           for pre_ln in (True, False)
           for edge_type in ('multi_hop', 'single')
           for spatial_pos_max in (None, 6)]


@pytest.mark.parametrize('pre_ln,edge_type,spatial_pos_max', CONFIGS)
def test_same_outputs_with_same_paths(molecules, pre_ln, edge_type,
                                      spatial_pos_max):
    reference = random_reference(pre_ln, edge_type)
    model = convert_graphormer(reference, spatial_pos_max=spatial_pos_max)
    assert model.config['final_norm'] is False
    assert model.config['norm'] == 'share'
    inputs = reference_inputs(molecules, spatial_pos_max, dtype=torch.float64)
    with torch.no_grad():
        expected = reference(**inputs).logits
    got = ours_output(model, molecules)
    error = relative_error(got, expected)
    print(f'pre_ln={pre_ln} edge_type={edge_type} spatial_pos_max='
          f'{spatial_pos_max}: max relative error {error:.2e}')
    assert error < TOLERANCE


def test_multi_class_head_and_post_ln_without_embedding_norm(molecules):
    reference = random_reference(False, 'multi_hop', num_classes=3,
                                 embedding_norm=False, seed=1)
    model = convert_graphormer(reference, spatial_pos_max=20)
    assert model.embedding_norm is None
    with torch.no_grad():
        expected = reference(**reference_inputs(
            molecules, 20, dtype=torch.float64)).logits
    got = ours_output(model, molecules)
    assert got.shape == expected.shape == (len(molecules), 3)
    assert relative_error(got, expected) < TOLERANCE


def test_state_dict_and_plain_config(molecules):
    reference = random_reference(True, 'multi_hop')
    state = reference.state_dict()
    model = convert_graphormer(state, reference.config.to_dict())
    same = convert_graphormer(reference)
    for key, value in model.state_dict().items():
        assert torch.equal(value, same.state_dict()[key]), key


def test_directed_keeps_both_degree_tables(molecules):
    reference = random_reference(True, 'single')
    model = convert_graphormer(reference, directed=True)
    assert model.node_encoder.out_degree_embedding is not None
    with torch.no_grad():
        expected = reference(**reference_inputs(
            molecules, dtype=torch.float64)).logits
    # Undirected molecules: in-degree equals out-degree, same outputs.
    assert relative_error(ours_output(model, molecules), expected) < TOLERANCE


def test_new_head_for_other_outputs(molecules):
    reference = random_reference(True, 'multi_hop')
    model = convert_graphormer(reference, out_channels=2)
    assert model.head.weight.shape == (2, HIDDEN)
    assert torch.equal(model.head_transform.weight,
                       reference.encoder.lm_head_transform_weight.weight)


def test_unsupported_options_raise():
    reference = random_reference(True, 'multi_hop')
    for change, words in [({'activation_fn': 'relu'}, 'activation_fn'),
                          ({'embed_scale': 2.0}, 'embed_scale'),
                          ({'multi_hop_max_dist': 0}, 'multi_hop_max_dist'),
                          ({'q_noise': 0.1}, 'q_noise'),
                          ({'layerdrop': 0.1}, 'layerdrop')]:
        config = dict(reference.config.to_dict(), **change)
        with pytest.raises(ConversionError, match=words):
            convert_graphormer(reference.state_dict(), config)
    config = dict(reference.config.to_dict(), layerdrop=0.1)
    with pytest.warns(UserWarning, match='layerdrop'):
        convert_graphormer(reference.state_dict(), config, strict=False)
    with pytest.raises(ConversionError, match='atom_vocab_sizes'):
        convert_graphormer(reference, atom_vocab_sizes=[600])
    with pytest.raises(ConversionError, match='atom_vocab_sizes'):
        convert_graphormer(reference, atom_vocab_sizes=[5] * 10)


def test_to_sepnorm(molecules):
    reference = random_reference(True, 'multi_hop')
    model = convert_graphormer(reference)
    expected = ours_output(model, molecules)
    # Layer norm on both token kinds: the same function.
    layer = to_sepnorm(model, graph_token_norm='layer')
    assert layer.config['norm'] == 'sep'
    assert relative_error(ours_output(layer, molecules), expected) < 1e-10
    # Batch norm on graph tokens: affine copied, fresh running statistics.
    sep = to_sepnorm(model)
    norm = sep.layers[1].attention_norm
    share = model.layers[1].attention_norm.norm
    assert torch.equal(norm.graph_norm.weight, share.weight)
    assert torch.equal(norm.node_norm.bias, share.bias)
    assert torch.equal(norm.graph_norm.running_var,
                       torch.ones_like(share.weight))
    sep.train()
    out = sep.double()(Batch.from_data_list(molecules))
    out.sum().backward()
    assert torch.isfinite(out).all()


def test_own_preprocessing(molecules):
    """The reference's own preprocess_item: same distances, same path lengths;
    outputs agree where the chosen shortest paths do (they may not on ties)."""
    from transformers.models.deprecated.graphormer.collating_graphormer \
        import GraphormerDataCollator, preprocess_item

    items = []
    for graph in molecules:
        item = preprocess_item({
            'edge_index': graph.edge_index.numpy(),
            'edge_attr': graph.edge_attr.numpy(),
            'node_feat': graph.x.numpy(),
            'num_nodes': graph.num_nodes, 'y': [0.0]})
        n = graph.num_nodes
        spd = graph.spd.view(n, n).numpy().astype(np.int64)
        ours_spatial = np.where(spd >= 0, spd, 510) + 1
        np.testing.assert_array_equal(item['spatial_pos'], ours_spatial)
        hops = (item['input_edges'][..., 0] > 0).sum(-1)
        np.testing.assert_array_equal(hops, np.clip(spd, 0, None))
        # Only the hops the model reads (the reference keeps up to 510 for
        # disconnected graphs, which the collator would pad for all).
        item['input_edges'] = item['input_edges'][:, :, :HOPS]
        items.append(item)
    batch = GraphormerDataCollator(spatial_pos_max=20)(items)
    batch.pop('labels')
    batch['attn_bias'] = batch['attn_bias'].double()
    rates = {}
    for edge_type in ('multi_hop', 'single'):
        reference = random_reference(True, edge_type)
        model = convert_graphormer(reference, spatial_pos_max=20)
        with torch.no_grad():
            expected = reference(**batch).logits
        got = ours_output(model, molecules)
        errors = ((got - expected).abs() /
                  expected.abs().clamp(min=1e-3)).amax(-1)
        rates[edge_type] = float((errors < TOLERANCE).double().mean())
    print(f'agreement with own preprocessing: {rates}')
    assert rates['single'] == 1.0  # No path involved.
    assert rates['multi_hop'] >= 0.5


def test_cli(tmp_path, molecules):
    from graphormer_sepnorm.cli.convert import convert_main
    reference = random_reference(True, 'multi_hop').float()
    reference.save_pretrained(tmp_path / 'hf')
    out = tmp_path / 'model.safetensors'
    convert_main(['--input', str(tmp_path / 'hf'), '--output', str(out),
                  '--featurizer', 'ogb', '--task', 'binary',
                  '--spatial-pos-max', '20'])
    model, card = load_model(out)
    assert card.featurizer == 'ogb' and card.task == 'binary'
    with torch.no_grad():
        expected = reference.double()(**reference_inputs(
            molecules, 20, dtype=torch.float64)).logits
    got = ours_output(model, molecules)
    assert relative_error(got, expected) < 1e-4  # Saved in float32.
    sep_out = tmp_path / 'sep.safetensors'
    convert_main(['--input', str(tmp_path / 'hf'), '--output',
                  str(sep_out), '--task', 'binary', '--sepnorm'])
    sep, _ = load_model(sep_out)
    assert sep.config['norm'] == 'sep'
    assert not math.isnan(float(ours_output(sep, molecules).sum()))
