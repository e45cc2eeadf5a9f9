"""The Lightning trainer a configuration builds: precision resolved by
device, validation every N steps (train.val_every_n_steps) mapped to
Lightning's val_check_interval, end to end on ZINC."""
import json

import pytest
import torch

from graphormer_sepnorm.training import trainer as trainer_module
from graphormer_sepnorm.training.config import ConfigError, load_config
from graphormer_sepnorm.training.trainer import (build_trainer,
                                                 validation_interval)
from training_helpers import (CONFIGS, TRAIN, metrics_rows, run_script,
                              zinc_args)


def _config(*overrides, name='zinc_subset_sepnorm.yaml'):
    return load_config(CONFIGS / name, list(overrides), env={},
                       check_paths=False)


@pytest.mark.parametrize('bf16,accelerator,expected', [
    (True, 'cuda', 'bf16-mixed'),
    (False, 'cuda', '32-true'),   # a GPU without bf16 (before Ampere)
    (True, 'cpu', '32-true'),
])
def test_auto_precision_is_bf16_mixed_on_a_bf16_gpu_only(
        monkeypatch, bf16, accelerator, expected):
    monkeypatch.setattr(torch.cuda, 'is_bf16_supported', lambda: bf16)
    assert trainer_module._precision(_config(), accelerator) == expected
    assert trainer_module._precision(
        _config('train.precision=64-true'), accelerator) == '64-true'


def test_every_gpu_recipe_resolves_precision_automatically():
    names = [p.relative_to(CONFIGS) for p in CONFIGS.rglob('*.yaml')
             if 'cpu' not in p.parts and p.parent.name != 'base']
    assert len(names) >= 10
    for name in names:
        config = load_config(CONFIGS / name, env={}, check_paths=False)
        assert config['train']['precision'] == 'auto', name


def test_the_400k_step_recipes_validate_every_1000_steps():
    for name in ('zinc_subset_sepnorm.yaml', 'zinc_subset_sharenorm.yaml',
                 'zinc_sepnorm.yaml', 'zinc_sharenorm.yaml'):
        config = _config(name=name)
        assert config['train']['max_steps'] == 400_000
        assert validation_interval(config) == 1000
    # The CPU budget configs keep validating every epoch, as their results
    # were made.
    for name in ('cpu/zinc_subset_sepnorm.yaml',
                 'cpu/zinc_subset_smiles_pretrained_sharenorm.yaml'):
        assert validation_interval(_config(name=name)) is None


def test_validation_interval():
    assert validation_interval(_config('train.val_every_n_steps=null')) \
        is None
    assert validation_interval(_config('train.val_every_n_steps=300')) == 300
    # A run shorter than the interval validates at its end.
    assert validation_interval(_config('train.max_steps=5')) == 5
    assert validation_interval(_config('train.max_steps=null',
                                       'train.max_epochs=3')) == 1000


def test_steps_map_to_lightnings_val_check_interval(tmp_path):
    trainer, _, _ = build_trainer(
        _config('train.val_every_n_steps=300', 'train.progress_bar=false'),
        tmp_path)
    assert trainer.val_check_interval == 300
    assert trainer.check_val_every_n_epoch is None
    trainer, _, _ = build_trainer(
        _config('train.val_every_n_steps=null', 'train.progress_bar=false',
                'train.check_val_every_n_epoch=2'), tmp_path)
    assert trainer.check_val_every_n_epoch == 2


@pytest.mark.parametrize('value', ['0', '-5'])
def test_a_count_below_one_is_refused(value):
    with pytest.raises(ConfigError, match='train.val_every_n_steps'):
        _config(f'train.val_every_n_steps={value}')


def test_pretraining_refuses_the_supervised_key():
    with pytest.raises(ConfigError, match='pretrain.val_every_n_steps'):
        _config('train.val_every_n_steps=100',
                name='pretrain/cpu_sepnorm.yaml')


def test_validation_every_6_steps_mid_epoch(zinc_root, tmp_path):
    # 4 steps per epoch: validations at steps 6 (mid epoch 1) and 12 (end
    # of epoch 2), one metrics.csv row each.
    result = run_script(TRAIN, *zinc_args(
        zinc_root, tmp_path, 'steps', 'train.val_every_n_steps=6',
        'train.max_steps=12'))
    assert result.returncode == 0, result.stderr[-3000:]
    rows = metrics_rows(tmp_path / 'steps')
    assert [(int(r['epoch']), int(r['step'])) for r in rows] == [(1, 6),
                                                                 (2, 12)]


def test_max_minutes_maps_to_lightnings_max_time(tmp_path):
    trainer, _, _ = build_trainer(
        _config('train.max_minutes=1.5', 'train.progress_bar=false'),
        tmp_path)
    timer = next(c for c in trainer.callbacks
                 if type(c).__name__ == 'Timer')
    assert timer._duration == 90.0
    with pytest.raises(ConfigError, match='train.max_minutes'):
        _config('train.max_minutes=0')


def test_a_time_limit_stops_training_and_test_is_still_scored(
        zinc_root, tmp_path):
    # 2 s of training against 100,000 steps: the time limit comes first,
    # and the run ends as usual, with its best validation scored on test.
    result = run_script(TRAIN, *zinc_args(
        zinc_root, tmp_path, 'timed', 'train.max_steps=100000',
        'train.max_minutes=0.033', 'train.val_every_n_steps=2'))
    assert result.returncode == 0, result.stderr[-3000:]
    rows = metrics_rows(tmp_path / 'timed')
    assert rows and int(rows[-1]['step']) < 100000
    results = json.loads((tmp_path / 'timed' / 'results.json').read_text())
    assert results['test_metric_at_best_val'] is not None
