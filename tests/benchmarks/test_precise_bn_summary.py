"""benchmarks/precise_bn_summary.py on hand-made trial folders: the largest
rise, the means and the files written."""
import json

import pytest

from benchmark_helpers import script_module


def _trial(folder, trial, seed, curve, cpu_minutes):
    folder.mkdir(parents=True)
    best = min(range(len(curve)), key=curve.__getitem__)
    (folder / 'results.json').write_text(json.dumps({
        'dataset': 'zinc_subset', 'norm': 'sep', 'seed': seed,
        'metric': 'mae', 'best_val_metric': curve[best], 'best_epoch': best,
        'cpu_time_s': cpu_minutes * 60, 'protocol': {'trial': trial}}))
    (folder / 'metrics.csv').write_text(
        'epoch,train_loss,val_mae\n' + ''.join(
            f'{k},1.0,{value}\n' for k, value in enumerate(curve)))


def test_rises_means_and_files(tmp_path, capsys):
    module = script_module('precise_bn_summary')
    assert module.largest_rise([1.0, 0.5, 1.2, 0.4, 0.6]) == pytest.approx(
        0.7)
    assert module.largest_rise([3.0, 2.0, 1.0]) == 0.0
    _trial(tmp_path / 'q_running' / 'sep_seed0', 'q_running', 0,
           [1.0, 0.5, 1.3, 0.4], 6.0)
    _trial(tmp_path / 'q_precise16' / 'sep_seed0', 'q_precise16', 0,
           [0.8, 0.6, 0.5, 0.45], 6.6)
    assert module.main(['--trials', str(tmp_path)]) == 0
    text = (tmp_path / 'SUMMARY.md').read_text()
    # Running statistics: best 0.4 at epoch 3, rise 0.8, mean 0.8.
    assert '| q_running | 0 | 0.4000 (3) | 0.800 | 0.800 | 6.0 |' in text
    assert '| q_precise16 | 0 | 0.4500 (3) | 0.000 | 0.588 | 6.6 |' in text
    assert (tmp_path / 'validation_curves.png').stat().st_size > 1000
    assert module.main(['--trials', str(tmp_path / 'missing')]) == 2
