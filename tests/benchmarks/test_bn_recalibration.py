"""benchmarks/bn_recalibration.py: the saved-statistics score against the
validation metric that training logged (the re-estimation itself is
tested in tests/training/test_precise_bn.py)."""
import csv
import json
from pathlib import Path

import numpy as np
import pytest

from benchmark_helpers import script_module
from graphormer_sepnorm.cli.train import train_main

CONFIGS = Path(__file__).resolve().parents[2] / 'configs'


@pytest.fixture(scope='module')
def tiny_run(zinc_root, tmp_path_factory):
    """8 steps (2 epochs of 4) of a 1-layer SepNorm model on ZINC."""
    root, source = zinc_root
    out = tmp_path_factory.mktemp('runs')
    assert train_main([
        '--config', str(CONFIGS / 'zinc_subset_sepnorm.yaml'),
        f'data.root={root}', f'data.raw_source={source}',
        f'output_dir={out}', 'run_name=bn', 'data.limit_train=64',
        'data.limit_val=32', 'data.limit_test=32', 'data.batch_size=16',
        'model.num_layers=1', 'model.hidden_channels=16',
        'model.ffn_channels=16', 'model.num_heads=2', 'optim.lr=1e-2',
        'optim.warmup_steps=2', 'train.max_steps=8', 'optim.total_steps=8',
        'train.progress_bar=false', 'train.eval_test=false',
        'train.val_every_n_steps=null']) == 0
    return out / 'bn'


def test_saved_statistics_score_as_validation_logged_them(tiny_run,
                                                          tmp_path):
    main = script_module('bn_recalibration').main
    assert main(['--config', str(tiny_run / 'config.yaml'),
                 '--checkpoints', str(tiny_run / 'checkpoints/last.ckpt'),
                 '--output-dir', str(tmp_path)]) == 0
    [row] = json.loads((tmp_path / 'bn_recalibration.json').read_text())
    with open(tiny_run / 'metrics.csv', newline='') as f:
        logged = list(csv.DictReader(f))[-1]
    assert (row['epoch'], row['step']) == (int(logged['epoch']), 8)
    assert row['saved_statistics'] == pytest.approx(
        float(logged['val_mae']), rel=1e-5)
    # SepNorm's graph-token BatchNorms: before the one layer's feed-forward
    # block and in the final norm (before its attention the graph token is
    # the same embedding for every graph, so that norm is a LayerNorm).
    assert row['batch_norm_layers'] == 2
    assert np.isfinite(row['recalibrated_statistics'])
    assert row['recalibrated_statistics'] != row['saved_statistics']
    assert str(tmp_path) not in (tmp_path / 'bn_recalibration.md').read_text()


def test_a_file_that_is_not_a_checkpoint_is_named(tiny_run, tmp_path,
                                                  capsys):
    main = script_module('bn_recalibration').main
    bad = tmp_path / 'notes.ckpt'
    bad.write_text('not a checkpoint')
    with pytest.raises(SystemExit) as exit_info:
        main(['--config', str(tiny_run / 'config.yaml'),
              '--checkpoints', str(bad)])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert 'notes.ckpt is not a checkpoint' in error
    assert 'config.yaml' in error
