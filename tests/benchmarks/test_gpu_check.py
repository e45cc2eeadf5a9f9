"""benchmarks/gpu_check.py's dry run (--device cpu --tiny): every step runs
on the CPU and the output folder holds the files a GPU run writes, at most
8, so the script never reaches a lent GPU broken; and its step arithmetic."""
import json
import subprocess
import sys

import pytest
from benchmark_helpers import script_module
from conftest import REPO, SHARED_DATA

gpu_check = script_module('gpu_check')

EXPECTED = {'env.txt', 'tests_gpu.txt', 'throughput.json', 'reference.md',
            'train_results.json', 'train_metrics.csv', 'pipelines.json',
            'gpu_check.json'}


@pytest.mark.slow
def test_dry_run_writes_every_file(tmp_path):
    out = tmp_path / 'out'
    result = subprocess.run(
        [sys.executable, str(REPO / 'benchmarks' / 'gpu_check.py'),
         '--device', 'cpu', '--tiny', '--out', str(out), '--data',
         str(SHARED_DATA)], capture_output=True, text=True, timeout=1200)
    report = json.loads((out / 'gpu_check.json').read_text())
    failed = {name: runs[-1]['output_tail'][-1500:]
              for name, runs in report['steps'].items()
              if runs[-1]['status'] != 'ok'}
    assert result.returncode == 0 and not failed, (failed, result.stdout)
    files = {p.name for p in out.iterdir()}
    assert files == EXPECTED and len(files) <= 8
    throughput = json.loads((out / 'throughput.json').read_text())
    assert {(r['precision'], r['batch_size']) for r in throughput} == {
        ('32-true', 16), ('32-true', 32), ('bf16-mixed', 16),
        ('bf16-mixed', 32)}
    assert all(r['steps_per_s'] > 0 for r in throughput)
    results = json.loads((out / 'train_results.json').read_text())
    assert results['test_metric_at_best_val'] > 0
    pipelines = json.loads((out / 'pipelines.json').read_text())
    assert set(pipelines) == {'pretrain', 'predict_cpu'}


def test_training_steps_come_from_the_measured_rate(tmp_path):
    args = gpu_check.parse_args(['--out', str(tmp_path),
                                 '--train-seconds', '100'])
    check = object.__new__(gpu_check.Check)
    check.args, check.out = args, tmp_path
    assert check._steps_that_fit() == 2000  # Nothing measured.
    rows = [dict(dataset='zinc_subset', batch_size=128, compiled=False,
                 precision='bf16-mixed', steps_per_s=50.0),
            dict(dataset='zinc_subset', batch_size=128, compiled=True,
                 precision='bf16-mixed', steps_per_s=500.0)]
    (tmp_path / 'throughput.json').write_text(json.dumps(rows))
    assert check._steps_that_fit() == 4000  # 50/s x 100 s x 0.8


def test_missing_data_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match='must hold ZINC-proxy'):
        gpu_check.prepare_data(tmp_path, tmp_path)
    with pytest.raises(SystemExit, match='is not a folder'):
        gpu_check.prepare_data(tmp_path / 'none', tmp_path)

