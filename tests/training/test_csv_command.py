"""train --csv FILE --targets COLS [--pretrained] (cli/train_csv.py):
the settings of the shipped CSV configs with the CSV's path and columns,
the run named after the CSV, bad combinations refused in one line, and a
short run end to end that warns of its missing validation and still
predicts."""
import json
import re

import pytest

from graphormer_sepnorm.cli.train import train_main, train_parser
from graphormer_sepnorm.training.config import ConfigError, load_config
from graphormer_sepnorm.cli.train import resolve_train_args
from training_helpers import CONFIGS, TINY_MODEL


@pytest.fixture
def csv_file(zinc_property_frame, tmp_path):
    path = tmp_path / 'My Molecules.v2.csv'
    zinc_property_frame[['smiles', 'y']].rename(
        columns={'smiles': 'SMILES', 'y': 'plogp: real'}).to_csv(
        path, index=False)
    return path


def _config(*argv):
    return resolve_train_args(train_parser().parse_args(list(argv)))


@pytest.mark.parametrize('pretrained', [False, True])
def test_csv_takes_the_shipped_configs_with_the_files_columns(
        csv_file, pretrained, monkeypatch):
    monkeypatch.delenv('GRAPHORMER_DATA_ROOT', raising=False)
    argv = ['--csv', str(csv_file), '--smiles-column', 'SMILES',
            '--targets', 'plogp: real', 'seed=2']
    config, resume = _config(*argv, *(['--pretrained'] * pretrained))
    shipped = 'csv_zinc_properties' + '_pretrained' * pretrained
    expected = load_config(CONFIGS / f'{shipped}.yaml', [
        f'data.path={csv_file}', 'data.smiles_column=SMILES',
        'data.target_columns=["plogp: real"]', 'seed=2'], env={})
    # The CSV's name (up to its first dot), the norm and the seed.
    expected['run_name'] = ('My Molecules' + '_pretrained' * pretrained +
                            '_sep_seed2')
    assert config == expected and resume is False
    assert (config['model']['init_from'] == 'bundled:pretrained-sepnorm') \
        == pretrained


def test_csv_run_name_override_wins(zinc_property_frame, tmp_path):
    path = tmp_path / 'two.csv'
    zinc_property_frame.rename(columns={'y': 'a', 'logp': 'b'}).to_csv(
        path, index=False)
    config, _ = _config('--csv', str(path), '--targets', 'a,b',
                        'run_name=mine')
    assert config['run_name'] == 'mine'
    assert config['data']['target_columns'] == ['a', 'b']


@pytest.mark.parametrize('argv, message', [
    (['--csv', 'CSV', '--targets', 'y', '--config', 'zinc_subset_sepnorm'],
     'either --config or --csv'),
    (['--csv', 'CSV'], '--csv needs --targets'),
    (['--csv', 'absent.csv', '--targets', 'y'],
     '--csv absent.csv does not exist'),
    (['--config', 'zinc_subset_sepnorm', '--targets', 'y', '--pretrained'],
     '--targets, --pretrained go(es) with --csv'),
    (['--config', 'zinc_subset_sepnorm', '--forest-trees', '50'],
     '--forest-trees go(es) with --csv'),
    (['--csv', 'CSV', '--smiles-column', 'SMILES', '--targets',
      'plogp: real', '--forest-trees', '50'],
     'no molecule features for the forest to read'),
])
def test_bad_csv_arguments(csv_file, argv, message, capsys):
    argv = [str(csv_file) if arg == 'CSV' else arg for arg in argv]
    with pytest.raises(ConfigError, match=re.escape(message)):
        _config(*argv)
    assert train_main(argv) == 2
    error = capsys.readouterr().err
    assert error.count('\n') == 1 and message in error


def test_short_csv_run_warns_and_keeps_final_weights(zinc_property_frame,
                                                     tmp_path, capsys,
                                                     monkeypatch):
    """Two steps of a 9-step epoch: no validation falls within the run,
    which says so at its start and at its end; the warmup of 4 steps is
    longer than the run, which says so too."""
    monkeypatch.chdir(tmp_path)
    zinc_property_frame[['smiles', 'y']].dropna().to_csv('small.csv',
                                                         index=False)
    status = train_main(['--csv', 'small.csv', '--targets', 'y',
                         'train.max_steps=2', 'data.batch_size=16',
                         'optim.warmup_ratio=null', 'optim.warmup_steps=4',
                         'train.progress_bar=false', *TINY_MODEL])
    assert status == 0
    captured = capsys.readouterr()
    results = json.loads(captured.out)
    assert results['run_dir'] == 'runs/small_sep_seed0'
    assert results['steps'] == 2 and results['best_val_metric'] is None
    warnings = [line for line in captured.err.splitlines()
                if line.startswith('warning: ')]
    # 171 labelled molecules, 80% of them in training: 9 batches of 16.
    assert ('warning: the learning rate warms up over 4 steps but the run '
            'trains 2') in captured.err
    assert ('warning: no validation falls within this run: the first '
            'comes after 9 steps and the run trains 2') in captured.err
    assert ('warning: no validation ran in 2 steps: best_val_metric is '
            'null and model.safetensors holds the final weights') in \
        captured.err
    assert len(warnings) >= 3
    assert 'Run folder: runs/small_sep_seed0 (torch threads: ' in \
        captured.err
    # Refused runs print their error alone: the notices come once training
    # starts (test_init_from.py checks such a one-line error).
    assert (tmp_path / 'runs' / 'small_sep_seed0' /
            'model.safetensors').is_file()
