"""benchmarks/predict_throughput.py at tiny sizes: the report says how it was
run (the command as given, absolute paths written relative to the
repository; the hardware) and the peak memory of each run; a
--chemprop-python that cannot import chemprop stops before any
measurement."""
import os
import re
import shlex
from pathlib import Path

from benchmark_helpers import script_main
from conftest import shared_path


REPO = Path(__file__).resolve().parents[2]


def test_memory_report_records_command_and_hardware(tmp_path):
    out = tmp_path / 'report.md'
    checkpoint = REPO / 'graphormer_sepnorm' / 'bundled' / 'zinc_seed0.safetensors'
    smiles_dir = shared_path('zinc250k')
    argv = ['--sections', 'memory', '--memory-rows', '40', '80',
            '--smiles-dir', str(smiles_dir), f'--checkpoint={checkpoint}',
            '--output', str(out)]
    assert script_main('predict_throughput')(argv) == 0
    text = out.read_text()
    # Paths as the repository sees them, not where this machine keeps them.
    written = ['--sections', 'memory', '--memory-rows', '40', '80',
               '--smiles-dir', os.path.relpath(smiles_dir, REPO),
               '--checkpoint=graphormer_sepnorm/bundled/zinc_seed0.safetensors',
               '--output', os.path.relpath(out, REPO)]
    assert (f'- Command: `python benchmarks/predict_throughput.py '
            f'{shlex.join(written)}`') in text
    assert ('- Model: `graphormer_sepnorm/bundled/zinc_seed0.safetensors` '
            '(the file at the commit above)') in text
    assert not re.search(r'[ =`(]/[A-Za-z]', text)  # no absolute path anywhere
    memory = os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE')
    assert f'{os.cpu_count()} CPU cores' in text
    assert f'{memory / 2 ** 30:.0f} GiB of memory' in text
    # One table row per size: rows, wall time, rate, main and worker peaks
    # (one chunk: no worker process). A process that imported torch holds
    # over 100 MB.
    rows = re.findall(r'^\| (\d+) \| \d+ \| [\d,]+ \| (\d+) \| (\d+) \|$',
                      text, re.MULTILINE)
    assert [(size, worker) for size, _, worker in rows] == [('40', '0'),
                                                            ('80', '0')]
    assert all(int(main) > 100 for _, main, _ in rows)


def test_chemprop_python_without_chemprop_stops_at_once(tmp_path, capsys):
    missing = tmp_path / 'no-python'
    main = script_main('predict_throughput')
    assert main(['--sections', 'chemprop', '--chemprop-python', str(missing),
                 '--output', str(tmp_path / 'report.md')]) == 2
    err = capsys.readouterr().err
    assert err == (f'error: --chemprop-python {missing} cannot import '
                   f'chemprop; name a Python interpreter that has it (pip '
                   f'install -e ".[baselines]" in its environment)\n')
    assert not (tmp_path / 'report.md').exists()


def test_stages_time_the_featurizer_of_the_model(tmp_path):
    """The bundled ZINC model reads OGB features: its featurization rows
    time the OGB featurizer, not the ZINC one."""
    out = tmp_path / 'report.md'
    checkpoint = (REPO / 'graphormer_sepnorm' / 'bundled' /
                  'zinc_seed0.safetensors')
    argv = ['--sections', 'stages', '--stage-molecules', '16', '--repeats',
            '1', '--smiles-dir', str(shared_path('zinc250k')),
            f'--checkpoint={checkpoint}', '--output', str(out)]
    assert script_main('predict_throughput')(argv) == 0
    stages = re.findall(r'^\| (featurize: [^|]+) \| [\d,]+ \| [\d,]+ \|$',
                        out.read_text(), re.MULTILINE)
    assert stages == ['featurize: SMILES -> arrays, ogb (predictor path)',
                      'featurize: smiles_to_ogb_graph (public, PyG Data)']
