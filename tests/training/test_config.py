"""Configuration: includes, overrides, environment, validation errors, and
the scripts refusing bad configs before any work starts."""
import dataclasses
import inspect
from pathlib import Path

import pytest
import yaml

from graphormer_sepnorm.models import GraphormerConfig, GraphormerSepNorm
from graphormer_sepnorm.training.config import (DATA_ROOT_ENV,
                                                MODEL_KEYS_FROM_DATA,
                                                MODEL_KEYS_NOT_ARGUMENTS,
                                                OPTIONS, ConfigError,
                                                load_config, model_arguments,
                                                options_markdown)
from graphormer_sepnorm.cli.train import evaluate_main, train_main
from training_helpers import REPO, TRAIN, run_script

CONFIGS = REPO / 'configs'
SETTINGS = ['zinc_sepnorm', 'zinc_sharenorm', 'zinc_subset_sepnorm',
            'zinc_subset_sharenorm', 'molhiv_sepnorm', 'molhiv_sharenorm']


@pytest.mark.parametrize('path', sorted(
    p for p in CONFIGS.rglob('*.yaml') if p.parent.name != 'base'),
    ids=lambda p: str(p.relative_to(CONFIGS)))
def test_every_config_file_loads(path):
    # Recipes, CPU budgets, fine-tuning and pretraining configs alike: the
    # defaults chain resolves and every key passes validation (the data
    # files they name are written by the scripts their comments give).
    config = load_config(path, env={}, check_paths=False)
    assert config['model']['norm'] in ('sep', 'share')


@pytest.mark.parametrize('name', SETTINGS)
def test_every_shipped_config_validates(name):
    config = load_config(CONFIGS / f'{name}.yaml', env={})
    dataset = name.rsplit('_', 1)[0]
    assert config['data']['name'] == dataset
    assert config['model']['norm'] == ('sep' if name.endswith('sepnorm')
                                       else 'share')
    GraphormerSepNorm.from_config(dict(model_arguments(config['model']),
                                       atom_vocab_sizes=[28],
                                       bond_vocab_sizes=[4]))


def test_zinc_subset_recipe():
    c = load_config(CONFIGS / 'zinc_subset_sepnorm.yaml', env={})
    m, o = c['model'], c['optim']
    assert (m['num_layers'], m['hidden_channels'], m['ffn_channels'],
            m['num_heads'], m['multi_hop_max_dist']) == (12, 80, 80, 8, 20)
    # microsoft/Graphormer examples/property_prediction/zinc.sh
    assert (o['lr'], o['warmup_steps'], o['total_steps'], o['end_lr'],
            o['weight_decay']) == (2e-4, 60000, 400000, 1e-9, 0.01)
    assert (m['dropout'], m['attention_dropout'],
            m['activation_dropout']) == (0.0, 0.1, 0.1)
    assert c['train']['gradient_clip_val'] == 5.0
    assert c['data']['batch_size'] == 256  # the Graphormer paper
    assert c['train']['max_steps'] == 400000


def test_options_cover_the_model_signature():
    # The model section is the constructor's arguments (but those the data
    # gives) and ModelRunConfig's; the saved ones are GraphormerConfig's
    # fields, the keyword-only ones (runtime settings) are not.
    params = inspect.signature(GraphormerSepNorm).parameters
    keys = {o.key[len('model.'):] for o in OPTIONS
            if o.key.startswith('model.')}
    assert keys == set(params) - {*MODEL_KEYS_FROM_DATA} | set(
        MODEL_KEYS_NOT_ARGUMENTS)
    fields = {f.name for f in dataclasses.fields(GraphormerConfig)}
    assert fields == {name for name, p in params.items()
                      if p.kind != p.KEYWORD_ONLY}
    assert 'attention_buckets' in keys - fields
    by_key = {o.key: o for o in OPTIONS}
    assert by_key['model.num_layers'].doc == 'Transformer blocks.'
    assert by_key['model.num_layers'].range == '> 0'
    assert by_key['model.norm'].choices == ('sep', 'share')
    table = options_markdown()
    for option in OPTIONS:
        assert f'`{option.key}`' in table and option.doc


def _write(path: Path, content: dict) -> Path:
    path.write_text(yaml.safe_dump(content))
    return path


def test_defaults_merge_deeply_and_overrides_parse_yaml(tmp_path):
    (tmp_path / 'base').mkdir()
    _write(tmp_path / 'base' / 'a.yaml',
           {'data': {'name': 'zinc_subset', 'batch_size': 8},
            'train': {'max_steps': 5}, 'optim': {'lr': 0.1}})
    config_file = _write(tmp_path / 'run.yaml',
                         {'defaults': ['base/a.yaml'],
                          'data': {'batch_size': 4}})
    c = load_config(config_file, ['optim.lr=1e-4', 'seed=3',
                                  'optim.betas=[0.8, 0.9]',
                                  'data.limit_train=null',
                                  'train.devices=2'], env={})
    assert c['data']['name'] == 'zinc_subset'  # from the include
    assert c['data']['batch_size'] == 4  # file over include
    assert c['optim']['lr'] == 1e-4  # "1e-4" (a YAML string) as a float
    assert c['seed'] == 3 and c['train']['devices'] == 2
    assert c['optim']['betas'] == [0.8, 0.9]
    assert c['data']['num_workers'] == 'auto'  # default filled in


def test_environment_sets_data_root_unless_overridden(tmp_path):
    config_file = CONFIGS / 'zinc_subset_sepnorm.yaml'
    env = {DATA_ROOT_ENV: str(tmp_path / 'envroot')}
    assert load_config(config_file, [], env=env)['data']['root'] == str(
        tmp_path / 'envroot')
    assert load_config(config_file, ['data.root=/x'],
                       env=env)['data']['root'] == '/x'


@pytest.mark.parametrize('override,expected', [
    ('train.max_step=3', "Unknown config key 'train.max_step'. Did you mean "
     "'train.max_steps'?"),
    ('model.num_layer=3', "Did you mean 'model.num_layers'?"),
    ('optim.learning_rate=1', "Unknown config key 'optim.learning_rate'"),
    ('sed=1', "Did you mean 'seed'?"),
    ('train.max_steps=abc', "'train.max_steps' must be an integer, got 'abc'"),
    ('data.batch_size=1.5', "'data.batch_size' must be an integer"),
    ('model.pre_norm=3', "'model.pre_norm' must be true or false"),
    ('optim.lr=fast', "'optim.lr' must be a number"),
    ('model.norm=seperate', "'model.norm' must be one of 'sep', 'share', got "
     "'seperate'"),
    ('data.name=zinc12k', "'data.name' must be one of 'zinc', 'zinc_subset', "
     "'molhiv'"),
    ('train.precision=fp16', "'train.precision' must be one of"),
    ('data.batch_size=0', "'data.batch_size' must be > 0"),
    ('optim.weight_decay=-1', "'optim.weight_decay' must be >= 0, got -1"),
    ('model.dropout=1.5', "'model.dropout' must be in [0, 1), got 1.5"),
    ('train.max_epochs=0', "'train.max_epochs' must be > 0, got 0"),
    ('data.limit_val=0', "'data.limit_val' must be a positive count"),
    ('data.num_workers=-1', "'data.num_workers' must be a count of "
     "processes"),
    ('data.num_workers=many', "'data.num_workers' must be a count of "
     "processes"),
    ('model.num_heads=3', "must be divisible by 'model.num_heads'"),
    ('data.raw_source=/nonexistent/zinc', "'data.raw_source': raw data "
     "folder /nonexistent/zinc does not exist"),
])
def test_bad_values_name_the_key(override, expected):
    with pytest.raises(ConfigError) as error:
        load_config(CONFIGS / 'zinc_subset_sepnorm.yaml', [override], env={})
    assert expected in str(error.value)


def test_raw_source_without_the_files_names_them(tmp_path):
    with pytest.raises(ConfigError, match=r"lacks the PyG ZINC raw files "
                       r"train\.pickle"):
        load_config(CONFIGS / 'zinc_subset_sepnorm.yaml',
                    [f'data.raw_source={tmp_path}'], env={})
    with pytest.raises(ConfigError, match='RELEASE_v1.txt'):
        load_config(CONFIGS / 'molhiv_sepnorm.yaml',
                    [f'data.raw_source={tmp_path}'], env={})


def test_missing_config_and_include(tmp_path):
    with pytest.raises(ConfigError, match='does not exist; pass an existing'):
        load_config(tmp_path / 'nope.yaml', env={})
    config_file = _write(tmp_path / 'run.yaml', {'defaults': ['missing.yaml']})
    with pytest.raises(ConfigError, match="included file 'missing.yaml'"):
        load_config(config_file, env={})
    with pytest.raises(ConfigError, match="'data.name' is required"):
        load_config(_write(tmp_path / 'empty.yaml', {'train': {
            'max_steps': 1}}), env={})


def test_unknown_key_in_a_file(tmp_path):
    config_file = _write(tmp_path / 'run.yaml', {
        'defaults': [str(CONFIGS / 'zinc_subset_sepnorm.yaml')],
        'trian': {'max_steps': 1}})
    with pytest.raises(ConfigError, match="Unknown config key 'trian'"):
        load_config(config_file, env={})


@pytest.mark.parametrize('args,expected', [
    (['train.max_step=3'], "Did you mean 'train.max_steps'?"),
    (['model.norm=bad'], "'model.norm' must be one of 'sep', 'share'"),
    (['train.max_steps=x'], "'train.max_steps' must be an integer"),
    (['data.raw_source=/no/such/dir'], "/no/such/dir does not exist"),
])
def test_train_cli_rejects_bad_configs_before_any_work(tmp_path, capsys,
                                                       args, expected):
    code = train_main(['--config', str(CONFIGS / 'zinc_subset_sepnorm.yaml'),
                       f'output_dir={tmp_path}/runs',
                       f'data.root={tmp_path}/data', *args])
    assert code == 2
    assert expected in capsys.readouterr().err
    assert not (tmp_path / 'runs').exists()  # nothing written
    assert not (tmp_path / 'data').exists()  # no data touched


def test_train_cli_missing_config_and_nothing_to_resume(tmp_path, capsys):
    assert train_main(['--config', str(tmp_path / 'nope.yaml')]) == 2
    assert 'nope.yaml does not exist' in capsys.readouterr().err
    assert train_main(['--config', str(CONFIGS / 'zinc_subset_sepnorm.yaml'),
                       f'output_dir={tmp_path}', '--resume']) == 2
    assert 'Nothing to resume' in capsys.readouterr().err
    assert train_main(['--resume', str(tmp_path / 'run')]) == 2
    assert 'config.yaml does not exist' in capsys.readouterr().err


def test_train_script_exits_before_any_work(tmp_path):
    """The real script: exit status 2, a one-line error, no traceback, no
    files: neither the run folder nor the data root is made, so no data was
    loaded (a wall-clock bound failed on a loaded machine and proved no
    more)."""
    result = run_script(TRAIN, '--config',
                        str(CONFIGS / 'zinc_subset_sepnorm.yaml'),
                        f'output_dir={tmp_path}/runs',
                        f'data.root={tmp_path}/data', 'train.max_step=3',
                        timeout=60)
    assert result.returncode == 2, result.stderr
    assert "Did you mean 'train.max_steps'?" in result.stderr
    assert 'Traceback' not in result.stderr
    assert not (tmp_path / 'runs').exists()
    assert not (tmp_path / 'data').exists()


def test_scripts_have_help(capsys):
    for main in (train_main, evaluate_main):
        with pytest.raises(SystemExit) as exit_:
            main(['--help'])
        assert exit_.value.code == 0
        assert 'usage:' in capsys.readouterr().out
    assert train_main(['--list-options']) == 0
    assert '| `data.root` |' in capsys.readouterr().out
    result = run_script(str(REPO / 'benchmarks' / 'train_throughput.py'),
                        '--help', timeout=60)
    assert result.returncode == 0, result.stderr
    assert 'usage:' in result.stdout


def test_evaluate_cli_missing_checkpoint(tmp_path, capsys):
    assert evaluate_main(['--checkpoint', str(tmp_path / 'x')]) == 2
    assert 'does not exist' in capsys.readouterr().err
