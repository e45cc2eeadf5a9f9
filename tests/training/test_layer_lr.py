"""optim.layer_lr_decay (graphormer_sepnorm/training/layer_lr.py): each
parameter's depth and rate by hand, every parameter in one group, the rates
a training run's optimizer holds, and a decay that all but freezes the
embeddings of a fine-tuned encoder while the head learns."""
import pytest
import torch

from graphormer_sepnorm import GraphormerSepNorm
from graphormer_sepnorm.training.config import ConfigError, load_config
from graphormer_sepnorm.training.layer_lr import layer_depths, \
    layer_lr_groups
from training_helpers import (CONFIGS, REPO, TRAIN, max_weight_diff,
                              run_script, zinc_args)
from safetensors.torch import load_file


def _model():
    return GraphormerSepNorm(num_layers=3, hidden_channels=16,
                             ffn_channels=16, num_heads=2,
                             graph_feature_channels=5, embedding_norm=True)


def test_depths_by_hand():
    depths = layer_depths(_model())
    expected = {'head.weight': 0, 'head_norm.bias': 0,
                'head_transform.weight': 0, 'final_norm.node_norm.weight': 0,
                'graph_feature_encoder.projection.weight': 0,
                'layers.2.fc1.weight': 1, 'layers.1.attention.qkv.bias': 2,
                'layers.0.ffn_norm.graph_norm.weight': 3,
                'node_encoder.in_degree_embedding.weight': 4,
                'node_encoder.graph_token': 4,
                'embedding_norm.node_norm.weight': 4}
    assert {name: depths.get(name) for name in expected} == expected
    assert {d for n, d in depths.items() if n.startswith('attention_bias')
            } == {4}
    assert set(depths.values()) == {0, 1, 2, 3, 4}


def test_groups_hold_every_parameter_once_at_its_rate():
    model = _model()
    groups = layer_lr_groups(model, lr=1e-3, decay=0.5)
    assert [g['depth'] for g in groups] == [0, 1, 2, 3, 4]
    assert [g['lr'] for g in groups] == [1e-3, 5e-4, 2.5e-4, 1.25e-4,
                                         6.25e-5]
    ids = [id(p) for g in groups for p in g['params']]
    assert len(ids) == len(set(ids))
    assert set(ids) == {id(p) for p in model.parameters()}
    depths = layer_depths(model)
    by_id = {id(p): depths[n] for n, p in model.named_parameters()}
    assert all(by_id[id(p)] == g['depth'] for g in groups
               for p in g['params'])
    (one, ) = layer_lr_groups(model, lr=1e-3, decay=1.0)
    assert one['lr'] == 1e-3 and len(one['params']) == len(ids)
    with pytest.raises(ValueError, match=r'in \(0, 1\]'):
        layer_lr_groups(model, 1e-3, 0.0)


def test_an_unknown_submodule_is_a_clear_error():
    model = _model()
    model.extra = torch.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="'extra.weight' has no depth"):
        layer_depths(model)


@pytest.mark.parametrize('value,message', [
    ('0', r"'optim.layer_lr_decay' must be in \(0, 1\]"),
    ('1.5', r"'optim.layer_lr_decay' must be in \(0, 1\]")])
def test_bad_values_are_refused(value, message):
    with pytest.raises(ConfigError, match=message):
        load_config(CONFIGS / 'zinc_subset_sepnorm.yaml',
                    [f'optim.layer_lr_decay={value}'], env={},
                    check_paths=False)


def test_pretraining_refuses_it():
    with pytest.raises(ConfigError, match='pretraining trains one from '
                       'scratch: leave it at 1'):
        load_config(REPO / 'graphormer_sepnorm' / 'configs' / 'pretrain' /
                    'cpu_sepnorm.yaml', ['optim.layer_lr_decay=0.5'],
                    env={}, check_paths=False)


def test_a_fine_tuning_run_learns_at_the_layer_rates(zinc_root, tmp_path):
    # Two layers: depths 0 (head), 1 and 2 (the layers), 3 (embeddings).
    two = ['model.num_layers=2', 'train.max_steps=4']
    base = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'base', *two))
    assert base.returncode == 0, base.stderr[-2000:]
    runs = {}
    for name, decay in (('decayed', '1e-3'), ('plain', '1')):
        done = run_script(TRAIN, *zinc_args(
            zinc_root, tmp_path, name, *two,
            f'model.init_from={tmp_path / "base"}',
            f'optim.layer_lr_decay={decay}'))
        assert done.returncode == 0, done.stderr[-2000:]
        runs[name] = tmp_path / name
    state = torch.load(runs['decayed'] / 'checkpoints' / 'last.ckpt',
                       map_location='cpu', weights_only=True)
    groups = state['optimizer_states'][0]['param_groups']
    assert [g['depth'] for g in groups] == [0, 1, 2, 3]
    rates = [g['lr'] / groups[0]['lr'] for g in groups]
    assert rates == pytest.approx([1.0, 1e-3, 1e-6, 1e-9], rel=1e-9)

    def change(run, prefix):
        a = load_file(str(tmp_path / 'base' / 'model.safetensors'))
        b = load_file(str(run / 'model.safetensors'))
        # Parameters only: batch norm's statistics follow the data.
        return max((a[k] - b[k]).abs().max().item() for k in a
                   if k.startswith(prefix) and 'running_' not in k
                   and 'num_batches' not in k)

    # Adam moves a parameter by at most about its rate per step (here 4
    # steps at most 1e-3 each): the embeddings at 1e-9 of it stay put,
    # within float32 rounding, where the plain run moves them; the last
    # layer, at 1e-3 of it, moves far less than in the plain run.
    assert change(runs['decayed'], 'node_encoder.') < 1e-6
    assert change(runs['plain'], 'node_encoder.') > 1e-4
    assert change(runs['decayed'], 'layers.1.') < \
        change(runs['plain'], 'layers.1.') / 10
    assert max_weight_diff(runs['decayed'], runs['plain']) > 1e-4
