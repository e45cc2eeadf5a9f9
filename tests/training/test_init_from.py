"""Fine-tuning from a pretrained backbone (model.init_from): the encoder is
the backbone's tensor for tensor (read back from the file), the head is the
fresh one of the run's seed, every mismatch and bad file is one error line
naming both sides, bundled:<name> resolves, a resumed run keeps its own
weights, a tiny CSV run starts from the backbone and records it, and a
backbone is refused as a predictor."""
import hashlib
import json
import pickle
import re
import warnings

import pytest
import torch
import yaml
from safetensors.torch import load_file

from graphormer_sepnorm import bundled
from graphormer_sepnorm.checkpoint import (BACKBONE_TASK, CheckpointError,
                                           ModelCard, load_model, read_card,
                                           save_model)
from graphormer_sepnorm.data.csv_dataset import CSVDataWarning
from graphormer_sepnorm.data.datasets import data_info
from graphormer_sepnorm.models import GraphormerSepNorm
from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.cli.train import evaluate_main, train_main
from graphormer_sepnorm.training.config import (ConfigError, load_config,
                                                model_arguments)
from graphormer_sepnorm.training.evaluate import load_checkpoint_split
from graphormer_sepnorm.training.init_from import (HEAD_MODULES, RECORD_FILE,
                                                   initialize_from,
                                                   load_encoder)
from graphormer_sepnorm.training.lit_module import GraphormerLitModule
from training_helpers import REPO, TINY_MODEL

CONFIG = REPO / 'configs' / 'csv_zinc_properties.yaml'
PRETRAINING = {'objective': 'descriptors', 'targets': ['a', 'b', 'c'],
               'steps': 10}


def _config(init_from=None, *overrides):
    return load_config(CONFIG, ['data.path=molecules.csv',
                                'data.target_columns=[y,logp]', *TINY_MODEL,
                                f'model.init_from={init_from or "null"}',
                                *overrides], env={}, check_paths=False)


def _run_model(config, seed=7):
    """The model of a training run of ``config``, as train() builds it."""
    torch.manual_seed(seed)
    return GraphormerLitModule(config).model


def _backbone(path, featurizer='ogb', task=BACKBONE_TASK, config=None,
              seed=123, **changes):
    """A backbone for the tiny config (three outputs, as three pretraining
    targets), every float tensor (batch-norm statistics too) drawn at
    random so that nothing equals a fresh initialization."""
    config = config or _config()
    info = data_info(config['data'])
    torch.manual_seed(seed)
    model = GraphormerSepNorm.from_config({
        **model_arguments(config['model']),
        'atom_vocab_sizes': list(info.atom_vocab_sizes),
        'bond_vocab_sizes': list(info.bond_vocab_sizes), 'out_channels': 3,
        **changes})
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if name.endswith('running_var'):
                tensor.uniform_(0.5, 1.5)
            elif tensor.is_floating_point():
                tensor.normal_(0.0, 0.1)
            else:  # batch norm's num_batches_tracked
                tensor.fill_(17)
    card = ModelCard(model_config={}, featurizer=featurizer, task=task,
                     dataset='descriptors.csv',
                     extra=dict(PRETRAINING) if task == BACKBONE_TASK
                     else {})
    return save_model(path, model, card)


def _head(name):
    return name.split('.', 1)[0] in HEAD_MODULES


def test_the_head_is_what_the_graph_embedding_does_not_run():
    """HEAD_MODULES are the model's top-level modules none of whose
    parts graph_embedding (the encoder's output) runs."""
    from conftest import load_real_zinc
    from torch_geometric.data import Batch

    from graphormer_sepnorm import AddShortestPaths
    model = GraphormerSepNorm(num_layers=2, hidden_channels=16,
                              ffn_channels=16, num_heads=2,
                              embedding_norm=True)
    children = dict(model.named_children())
    assert {name.split('.')[0] for name in model.state_dict()} <= \
        set(children)
    ran = set()
    for name, module in model.named_modules():
        if name:  # hooked: every part, named by its top-level module
            module.register_forward_hook(
                lambda *_, top=name.split('.')[0]: ran.add(top))
    batch = Batch.from_data_list(
        [AddShortestPaths()(g) for g in load_real_zinc('val', limit=4)])
    model.graph_embedding(batch)
    assert set(children) - ran == set(HEAD_MODULES)
    model(batch)
    assert ran == set(children)


def test_encoder_from_the_file_head_fresh_and_recorded(tmp_path):
    path = _backbone(tmp_path / 'backbone.safetensors')
    config = _config(path)
    fresh = _run_model(config).state_dict()
    model = _run_model(config)
    rng = torch.get_rng_state()
    record = initialize_from(model, config, tmp_path / 'run', resume=False)
    # Dropout and the rest of the run draw what they would without it
    assert torch.equal(torch.get_rng_state(), rng)
    state, stored = model.state_dict(), load_file(str(path))
    encoder = [name for name in state if not _head(name)]
    head = [name for name in state if _head(name)]
    assert set(stored) == set(state)
    assert len(head) == 6 and len(encoder) == len(state) - 6
    assert any(name.endswith('running_mean') for name in encoder)
    assert any(name.endswith('num_batches_tracked') for name in encoder)
    for name in encoder:
        assert torch.equal(state[name], stored[name]), name
    for name in head:
        assert torch.equal(state[name], fresh[name]), name
        if name != 'head_norm.weight':  # 1.0 in both
            assert not torch.equal(state[name][:stored[name].shape[0]],
                                   stored[name][:state[name].shape[0]])
    assert state['head.weight'].shape == (2, 16)  # the run's two targets
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    written = json.loads((tmp_path / 'run' / RECORD_FILE).read_text())
    assert written == record
    assert record == {'source': str(path), 'file': 'backbone.safetensors',
                      'sha256': digest, 'task': 'pretraining',
                      'dataset': 'descriptors.csv',
                      'pretraining': PRETRAINING, 'init_from': None}


def test_a_trained_model_or_run_directory_relative_to_the_cwd(
        tmp_path, monkeypatch):
    _backbone(tmp_path / 'runs' / 'reg' / 'model.safetensors',
              task='regression')
    monkeypatch.chdir(tmp_path)
    config = _config('runs/reg')
    model = _run_model(config)
    record = initialize_from(model, config, tmp_path / 'run', resume=False)
    assert record['file'] == 'model.safetensors'
    assert record['task'] == 'regression' and record['pretraining'] is None
    stored = load_file('runs/reg/model.safetensors')
    assert torch.equal(model.state_dict()['layers.0.ffn_norm.graph_norm'
                                          '.running_mean'],
                       stored['layers.0.ffn_norm.graph_norm.running_mean'])


def test_a_pretraining_run_directory(tmp_path):
    # scripts/pretrain.py writes backbone.safetensors, not model.safetensors.
    path = _backbone(tmp_path / 'pretrain_run' / 'backbone.safetensors')
    config = _config(tmp_path / 'pretrain_run')
    record = initialize_from(_run_model(config), config, tmp_path / 'run',
                             resume=False)
    assert record['file'] == 'backbone.safetensors'
    assert record['sha256'] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_dropouts_and_layout_settings_may_differ(tmp_path):
    path = _backbone(tmp_path / 'backbone.safetensors', dropout=0.2,
                     attention_dropout=0.0, activation_dropout=0.3,
                     max_nodes=600, attention_buckets=1)
    config = _config(path)
    model = _run_model(config)
    initialize_from(model, config, tmp_path / 'run', resume=False)
    assert torch.equal(model.node_encoder.graph_token,
                       load_file(str(path))['node_encoder.graph_token'])
    assert model.config['dropout'] == config['model']['dropout'] == 0.0


def test_fewer_hops_take_the_backbones_first_hop_matrices(tmp_path):
    # MolHIV's recipe (5 hops) from a backbone of ZINC's (20): here 5 of 7.
    path = _backbone(tmp_path / 'backbone.safetensors', multi_hop_max_dist=7)
    config = _config(path, 'model.multi_hop_max_dist=5')
    model = _run_model(config)
    initialize_from(model, config, tmp_path / 'run', resume=False)
    stored = load_file(str(path))
    hops = model.state_dict()['attention_bias.hop_weight']
    assert stored['attention_bias.hop_weight'].shape[0] == 7
    assert hops.shape[0] == 5
    assert torch.equal(hops, stored['attention_bias.hop_weight'][:5])
    assert torch.equal(model.state_dict()['node_encoder.graph_token'],
                       stored['node_encoder.graph_token'])


def _error(config, tmp_path) -> str:
    with pytest.raises(ConfigError) as info:
        initialize_from(_run_model(config), config, tmp_path / 'run',
                        resume=False)
    message = str(info.value)
    assert '\n' not in message and message.startswith('model.init_from: ')
    assert not (tmp_path / 'run' / RECORD_FILE).exists()
    return message


@pytest.mark.parametrize('key, backbone, run', [
    ('num_layers', '2', '1'), ('hidden_channels', '32', '16'),
    ('ffn_channels', '32', '16'), ('num_heads', '4', '2'),
    ('multi_hop_max_dist', '3', '5'), ('norm', 'share', 'sep'),
    ('graph_token_norm', 'layer', 'batch'), ('pre_norm', 'false', 'true'),
    ('edge_encoding', 'single', 'multi_hop'), ('max_degree', '10', '64'),
    ('max_attention_distance', '4', 'null'), ('directed', 'true', 'false')])
def test_a_mismatch_names_both_sides(tmp_path, key, backbone, run):
    path = _backbone(tmp_path / 'b.safetensors',
                     **{key: yaml.safe_load(backbone)})
    message = _error(_config(path), tmp_path)
    assert message == (
        f'model.init_from: the backbone {path} has {key}={backbone} but this '
        f'config has model.{key}={run}; use a config that matches the '
        f'backbone (model.{key}: {backbone}) or another backbone')


def test_load_encoder_refuses_another_layout():
    small, large = (GraphormerSepNorm(num_layers=1, hidden_channels=h,
                                      ffn_channels=16, num_heads=2)
                    for h in (16, 32))
    with pytest.raises(ConfigError, match=r"does not fit this model's \(e.g. "
                       r"\['final_norm.graph_norm.bias'"):
        load_encoder(small, large)


def test_every_mismatch_in_one_line(tmp_path):
    path = _backbone(tmp_path / 'b.safetensors', num_layers=2,
                     hidden_channels=32)
    message = _error(_config(path), tmp_path)
    assert ('has hidden_channels=32, num_layers=2 but this config has '
            'model.hidden_channels=16, model.num_layers=1;') in message


def test_featurizer_and_vocabulary_mismatches(tmp_path):
    zinc = _config(None, 'data.featurizer=zinc')
    path = _backbone(tmp_path / 'b.safetensors', featurizer='zinc',
                     config=zinc)
    message = _error(_config(path), tmp_path)
    assert re.search(r"featurizer 'zinc' but this config's data uses "
                     r"featurizer 'ogb'", message)
    # The same featurizer with another vocabulary (another version)
    path = _backbone(tmp_path / 'v.safetensors', atom_vocab_sizes=[5] * 9)
    message = _error(_config(path), tmp_path)
    ogb = data_info(_config()['data']).atom_vocab_sizes
    assert f"has atom_vocab_sizes={[5] * 9} but" in message
    assert f"gives atom_vocab_sizes={list(ogb)};" in message


class _Marker:
    """Unpickling this creates a file: proof that something was
    unpickled."""
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), 'w'))


def test_training_checkpoints_and_missing_files(tmp_path, monkeypatch):
    marker = tmp_path / 'unpickled'
    ckpt = tmp_path / 'run0' / 'checkpoints' / 'last.ckpt'
    ckpt.parent.mkdir(parents=True)
    ckpt.write_bytes(pickle.dumps({'state_dict': _Marker(marker)}))
    message = _error(_config(ckpt), tmp_path)
    assert f'{ckpt} is a Lightning training checkpoint' in message
    assert 'not loaded' in message and not marker.exists()
    # pickle.loads would have created it
    pickle.loads(ckpt.read_bytes())['state_dict'].close()
    assert marker.exists()
    torch.save({'state_dict': {}}, ckpt)  # a zip archive, as Lightning's
    message = _error(_config(ckpt), tmp_path)
    assert f'{ckpt} is a Lightning training checkpoint' in message
    assert 'pass the model.safetensors that scripts/train.py writes' in \
        message
    _backbone(tmp_path / 'run0' / 'model.safetensors')
    message = _error(_config(ckpt), tmp_path)
    assert f"pass the run directory {tmp_path / 'run0'} (its " in message

    monkeypatch.chdir(tmp_path)
    message = _error(_config('nothing.safetensors'), tmp_path)
    assert "'nothing.safetensors' does not exist" in message
    assert f'working directory, {tmp_path})' in message
    (tmp_path / 'empty_run').mkdir()
    message = _error(_config('empty_run'), tmp_path)
    assert 'folder without model.safetensors' in message


def test_bundled_backbones(tmp_path, monkeypatch):
    monkeypatch.setattr(bundled, 'BUNDLED_BACKBONES', {})
    message = _error(_config('bundled:tiny'), tmp_path)
    assert "Unknown bundled backbone 'tiny'; bundled backbones: none yet" \
        in message
    path = _backbone(tmp_path / 'store' / 'tiny_backbone.safetensors')
    monkeypatch.setattr(bundled, 'BUNDLED_BACKBONES',
                        {'tiny': path.name, 'other': 'other.safetensors'})
    monkeypatch.setenv(bundled.ENV_VAR, str(tmp_path / 'store'))
    message = _error(_config('bundled:huge'), tmp_path)
    assert "'huge'; bundled backbones: other, tiny" in message
    message = _error(_config('bundled:other'), tmp_path)
    assert f"its file {tmp_path / 'store' / 'other.safetensors'} is not " \
        f"installed" in message
    config = _config('bundled:tiny')
    model = _run_model(config)
    record = initialize_from(model, config, tmp_path / 'run', resume=False)
    assert record['source'] == 'bundled:tiny'
    assert record['file'] == 'tiny_backbone.safetensors'
    assert torch.equal(model.node_encoder.graph_token,
                       load_file(str(path))['node_encoder.graph_token'])


def test_resume_keeps_the_run_weights(tmp_path):
    path = _backbone(tmp_path / 'b.safetensors')
    run_dir = tmp_path / 'run'
    config = _config(path)
    record = initialize_from(_run_model(config), config, run_dir, False)
    model = _run_model(config)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    path.unlink()  # not needed any more
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert initialize_from(model, config, run_dir, resume=True) is None
    assert all(torch.equal(before[k], v)
               for k, v in model.state_dict().items())
    assert json.loads((run_dir / RECORD_FILE).read_text()) == record
    # A value set only when resuming is ignored, and said so
    with pytest.warns(UserWarning, match='is ignored: the resumed run'):
        initialize_from(model, _config('other.safetensors'), run_dir, True)
    # A fresh run without init_from in the same folder drops the record
    initialize_from(model, _config(), run_dir, resume=False)
    assert not (run_dir / RECORD_FILE).exists()


def test_a_backbone_is_not_a_predictor(tmp_path):
    path = _backbone(tmp_path / 'b.safetensors')
    for call in (lambda: Predictor.from_checkpoint(path),
                 lambda: Predictor(*load_model(path), source=str(path)),
                 lambda: load_checkpoint_split(path)):
        with pytest.raises(CheckpointError) as info:
            call()
        message = str(info.value)
        assert '\n' not in message
        assert message.startswith(f'{path} is a pretrained backbone')
        assert f'fine-tune it with model.init_from: {path}' in message
    assert read_card(path)[0].task == BACKBONE_TASK  # the card reads


def test_csv_run_starts_from_the_backbone_and_records_it(
        zinc_property_frame, tmp_path, capsys):
    """With a learning rate of 1e-30 training changes no parameter (in
    float32), so the saved model shows where the run started: the encoder
    parameters of the backbone, and the head of a run without init_from
    (same seed). Resumed with another file at the backbone's path, the run
    continues from its checkpoint."""
    csv = tmp_path / 'zinc.csv'
    zinc_property_frame.to_csv(csv, index=False)
    path = _backbone(tmp_path / 'backbone.safetensors')

    def train(name, *extra):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', CSVDataWarning)
            return train_main([
                '--config', str(CONFIG), f'data.path={csv}',
                f'data.root={tmp_path / "data"}', f'output_dir={tmp_path}',
                f'run_name={name}', 'data.target_columns=[y,logp]',
                'train.max_epochs=1', 'data.batch_size=64', 'optim.lr=1e-30',
                'optim.end_lr=0', 'train.progress_bar=false', *TINY_MODEL,
                *extra])

    # scripts/train.py: one error line, exit status 2
    assert train('bad', 'model.init_from=missing.safetensors') == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: model.init_from: 'missing.safetensors' "
                          "does not exist") and '\n' not in err

    assert train('tuned', f'model.init_from={path}') == 0
    assert train('scratch') == 0
    scratch, _ = load_model(tmp_path / 'scratch' / 'model.safetensors')
    stored = load_file(str(path))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()

    def check_tuned():
        tuned, card = load_model(tmp_path / 'tuned' / 'model.safetensors')
        for name, param in tuned.named_parameters():
            expected = (scratch.state_dict()[name] if _head(name)
                        else stored[name])
            assert torch.allclose(param, expected, rtol=0, atol=1e-20), name
        results = json.loads(
            (tmp_path / 'tuned' / 'results.json').read_text())
        for record in (results['init_from'], card.extra['init_from']):
            assert record['sha256'] == digest
            assert record['file'] == 'backbone.safetensors'
            assert record['pretraining'] == PRETRAINING
        return results

    assert check_tuned()['epochs_completed'] == 1
    _backbone(path, seed=5)
    assert train_main(['--resume', str(tmp_path / 'tuned'),
                       'train.max_epochs=2']) == 0
    assert check_tuned()['epochs_completed'] == 2
    assert json.loads((tmp_path / 'scratch' / 'results.json').read_text())[
        'init_from'] is None


def test_a_pretraining_run_is_named_wherever_a_path_is_taken(tmp_path):
    """A pretraining run (scripts/pretrain.py) passed where a predictor or
    its checkpoint is expected: the message says it is a backbone and how
    to fine-tune it (issue 33)."""
    run = tmp_path / 'pre'
    (run / 'checkpoints').mkdir(parents=True)
    (run / 'config.yaml').write_text(yaml.safe_dump(
        {'data': {'name': 'pretraining'}}))
    torch.save({'state_dict': {}}, run / 'checkpoints' / 'last.ckpt')
    for written in (False, True):
        if written:
            _backbone(run / 'backbone.safetensors')
        expected = (f'{run} is a pretraining run (scripts/pretrain.py): it '
                    f'holds a backbone to fine-tune, not a predictor; '
                    f'fine-tune it with model.init_from: {run} (or '
                    f"{run / 'backbone.safetensors'}")
        for call in (lambda: Predictor.from_checkpoint(run),
                     lambda: load_checkpoint_split(run)):
            with pytest.raises(CheckpointError) as info:
                call()
            assert expected in str(info.value) and '\n' not in str(info.value)
            assert ('at its first validation' in str(info.value)) != written
        message = _error(_config(run / 'checkpoints' / 'last.ckpt'), tmp_path)
        assert 'is a Lightning training checkpoint' in message
        assert expected in message and 'scripts/train.py --resume' not in \
            message
    assert evaluate_main(['--checkpoint', str(run)]) == 2


def test_bundled_without_a_name(tmp_path, capsys):
    config = load_config(CONFIG, ['data.path=molecules.csv',
                                  'data.target_columns=[y,logp]',
                                  'model.init_from=bundled:'], env={},
                         check_paths=False)
    assert config['model']['init_from'] == 'bundled:'
    message = _error(config, tmp_path)
    assert "Unknown bundled backbone ''; bundled backbones: " in message


def test_molecule_feature_projection_starts_fresh_from_a_backbone_without_it(
        tmp_path, capsys):
    """A run with molecule features (model.graph_feature_channels from
    data.molecule_features) starts from a backbone that has no projection:
    the encoder is the backbone's, the projection keeps the run's fresh
    initialization, and the record and the console say so."""
    path = _backbone(tmp_path / 'backbone.safetensors')
    config = _config(path, 'data.molecule_features=[rdkit2d]')
    fresh = _run_model(config).state_dict()
    model = _run_model(config)
    assert model.config['graph_feature_channels'] == 39
    record = initialize_from(model, config, tmp_path / 'run', resume=False)
    assert record['fresh_modules'] == ['graph_feature_encoder']
    written = json.loads((tmp_path / 'run' / RECORD_FILE).read_text())
    assert written['fresh_modules'] == ['graph_feature_encoder']
    assert 'graph_feature_encoder starts fresh' in capsys.readouterr().err
    backbone = load_file(path)
    for name, tensor in model.state_dict().items():
        if name.startswith('graph_feature_encoder.'):
            assert name not in backbone
            assert torch.equal(tensor, fresh[name])
        elif not _head(name):
            assert torch.equal(tensor, backbone[name]), name
