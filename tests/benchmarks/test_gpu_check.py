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
    # The recipe's batch size (256), eager, bf16, one bucket as the
    # trainer's GPU loader makes: not the compiled, four-bucket or other
    # batch size rows.
    row = dict(dataset='zinc_subset', batch_size=256, compiled=False,
               buckets=1, precision='bf16-mixed', steps_per_s=50.0)
    rows = [row, dict(row, compiled=True, steps_per_s=500.0),
            dict(row, buckets=4, steps_per_s=70.0),
            dict(row, batch_size=128, steps_per_s=90.0),
            dict(row, precision='32-true', steps_per_s=30.0)]
    (tmp_path / 'throughput.json').write_text(json.dumps(rows))
    assert check._steps_that_fit() == 4000  # 50/s x 100 s x 0.8


@pytest.mark.parametrize('tiny, step, datasets', [
    (True, 'throughput', ['zinc_subset']),
    (False, 'throughput', ['zinc_subset', 'molhiv']),
    (False, 'throughput_compiled', ['zinc_subset']),
    (False, 'throughput_large', ['zinc_subset', 'molhiv'])])
def test_throughput_steps_name_their_datasets_once(tmp_path, tiny, step,
                                                   datasets):
    """Each throughput step gives train_throughput.py one --datasets list
    (not a default overridden by a later one)."""
    check = object.__new__(gpu_check.Check)
    check.out = check.work = tmp_path
    check.tiny, check.device, check.workers = tiny, 'cpu', 0
    check.data = {'zinc': tmp_path / 'z', 'molhiv': tmp_path / 'm'}
    commands = []
    check.run = lambda name, command, timeout: commands.append(command)
    getattr(check, step)()
    (command, ) = commands
    assert command.count('--datasets') == 1
    start = command.index('--datasets') + 1
    end = next(i for i in range(start, len(command))
               if command[i].startswith('--'))
    assert command[start:end] == datasets


def test_a_skipped_test_fails_the_step_on_a_gpu():
    # The first GPU run's tests step passed with 17 of 18 tests skipped
    # (no shared data there).
    output = '1 passed, 17 skipped, 2 warnings in 1.65s'
    assert '17 tests skipped' in gpu_check.skipped_tests(output)
    assert gpu_check.skipped_tests('18 passed in 80.1s') is None


def test_the_data_archive_is_unpacked_and_checked(tmp_path):
    import tarfile
    source = tmp_path / 'source'
    for name in gpu_check.DATA_PATHS:
        path = source / name
        if name.endswith('.npz'):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b'x')
        else:
            path.mkdir(parents=True)
    carried = tmp_path / 'carried'
    carried.mkdir()
    with tarfile.open(carried / gpu_check.DATA_ARCHIVE, 'w:gz') as tar:
        for name in gpu_check.DATA_PATHS:
            tar.add(source / name, arcname=name)
    work = tmp_path / 'work'
    paths = gpu_check.prepare_data(carried, work)
    assert paths['shared'] == work / 'shared'
    assert paths['molhiv'].is_dir() and paths['smiles'].is_dir()
    (source / 'ogbg_molhiv').rmdir()
    with pytest.raises(SystemExit, match='Missing ogbg_molhiv'):
        gpu_check.prepare_data(source, work)


def test_missing_data_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match='must hold ZINC-proxy/raw'):
        gpu_check.prepare_data(tmp_path, tmp_path)
    with pytest.raises(SystemExit, match='is not a folder'):
        gpu_check.prepare_data(tmp_path / 'none', tmp_path)

