"""Results aggregation: hand-computed means and standard deviations."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphormer_sepnorm.analysis.results import (load_runs, markdown_table,
                                                 mean_std, summarize)

REPO = Path(__file__).resolve().parents[2]


def write_run(root, name, dataset, norm, seed, test, val, metric='mae'):
    run = root / name
    run.mkdir(parents=True)
    (run / 'results.json').write_text(json.dumps({
        'dataset': dataset, 'norm': norm, 'seed': seed, 'metric': metric,
        'test_metric_at_best_val': test, 'best_val_metric': val,
        'num_parameters': 489_000, 'steps': 1000, 'wall_time_s': 120.0,
        'hardware': {'device_name': 'NVIDIA H100'}}))
    (run / 'metrics.csv').write_text(
        f'epoch,step,val_{metric}\n0,10,{val + 0.1}\n1,20,{val}\n')


@pytest.fixture
def runs(tmp_path):
    write_run(tmp_path, 'a', 'zinc_subset', 'sep', 0, 0.14, 0.15)
    write_run(tmp_path, 'b', 'zinc_subset', 'sep', 1, 0.16, 0.17)
    write_run(tmp_path, 'c', 'zinc_subset', 'share', 0, 0.20, 0.21)
    write_run(tmp_path, 'd', 'molhiv', 'sep', 0, 0.75, 0.80, 'rocauc')
    return tmp_path


def test_mean_and_sample_std():
    assert mean_std([0.14, 0.16]) == '0.150 ± 0.014'  # std = 0.02/sqrt(2)
    assert mean_std([0.2]) == '0.200'
    assert mean_std([]) == 'n/a'


def test_table_groups_by_dataset_and_norm(runs):
    summaries = summarize(load_runs(runs))
    assert [(s.dataset, s.norm, len(s.seeds)) for s in summaries] == [
        ('molhiv', 'sep', 1), ('zinc_subset', 'sep', 2),
        ('zinc_subset', 'share', 1)]
    table = markdown_table(summaries)
    assert '| zinc_subset | sep | mae | 0.150 ± 0.014 | 0.144 | 2 |' in table
    assert '| molhiv | sep | rocauc (%) | 75.00 | 75.64 | 1 |' in table


def test_script_writes_table_and_plot(runs, tmp_path):
    output, plot = tmp_path / 'RESULTS.md', tmp_path / 'curves.png'
    subprocess.run([sys.executable, str(REPO / 'scripts/results_table.py'),
                    '--runs', str(runs), '--output', str(output), '--plot',
                    str(plot)], check=True, capture_output=True)
    assert '0.150 ± 0.014' in output.read_text()
    assert plot.stat().st_size > 1000


def test_missing_runs_folder_is_a_clear_error(tmp_path):
    result = subprocess.run(
        [sys.executable, str(REPO / 'scripts/results_table.py'), '--runs',
         str(tmp_path / 'none')], capture_output=True, text=True)
    assert result.returncode == 2 and 'No run directory' in result.stderr
