"""train.precise_bn_batches in a run: training unchanged, only the
statistics validation uses; exact resume kept (the re-estimate itself:
tests/nn/test_batch_norm_statistics.py)."""
import pytest
import torch

from training_helpers import (TRAIN, metrics_rows, run_script, without_time,
                              zinc_args)


def _state(run_dir) -> dict:
    return torch.load(run_dir / 'checkpoints' / 'last.ckpt',
                      weights_only=True)['state_dict']


def test_precise_statistics_change_validation_not_training(zinc_root,
                                                           tmp_path):
    common = ('train.max_steps=8', 'optim.total_steps=8', 'optim.lr=1e-2')
    plain = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'plain',
                                         *common))
    assert plain.returncode == 0, plain.stderr[-3000:]
    precise = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'precise',
                                           *common,
                                           'train.precise_bn_batches=2'))
    assert precise.returncode == 0, precise.stderr[-3000:]
    a, b = _state(tmp_path / 'plain'), _state(tmp_path / 'precise')
    statistics = [k for k in a if k.endswith(('running_mean', 'running_var',
                                              'num_batches_tracked'))]
    assert statistics
    for key in a:
        if key not in statistics:  # the same training, weight for weight
            assert torch.equal(a[key], b[key]), key
    assert any(not torch.equal(a[k], b[k]) for k in statistics)
    rows_a, rows_b = metrics_rows(tmp_path / 'plain'), metrics_rows(
        tmp_path / 'precise')
    assert [r['train_loss'] for r in rows_a] == [r['train_loss']
                                                 for r in rows_b]
    assert [r['val_mae'] for r in rows_a] != [r['val_mae'] for r in rows_b]


def test_resume_stays_exact_with_precise_statistics(zinc_root, tmp_path):
    common = ('optim.total_steps=8', 'train.precise_bn_batches=2',
              'train.checkpoint_every_n_steps=2')
    straight = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'a',
                                            'train.max_steps=8', *common))
    assert straight.returncode == 0, straight.stderr[-3000:]
    first = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'b',
                                         'train.max_steps=6', *common))
    assert first.returncode == 0, first.stderr[-3000:]
    second = run_script(TRAIN, '--resume', str(tmp_path / 'b'),
                        'train.max_steps=8')
    assert second.returncode == 0, second.stderr[-3000:]
    assert without_time(metrics_rows(tmp_path / 'a')) == without_time(
        metrics_rows(tmp_path / 'b'))


@pytest.mark.parametrize('value', ['0', '-3'])
def test_a_count_below_one_is_refused(zinc_root, tmp_path, value):
    result = run_script(TRAIN, *zinc_args(zinc_root, tmp_path, 'bad',
                                          f'train.precise_bn_batches={value}'))
    assert result.returncode == 2
    assert "'train.precise_bn_batches' must be > 0" in result.stderr
