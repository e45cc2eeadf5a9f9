"""benchmarks/chemprop_baseline.py: --help and a clear error without
chemprop (both run in CI, which lacks the [baselines] extra), one-line
errors for bad input."""
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark_helpers import script_main

REPO = Path(__file__).resolve().parents[2]
SCRIPT = str(REPO / 'benchmarks' / 'chemprop_baseline.py')


def _run_cli(*args, cwd):
    return subprocess.run([sys.executable, SCRIPT, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_help():
    result = _run_cli('--help', cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert 'usage: chemprop_baseline.py' in result.stdout
    assert '--max-minutes' in result.stdout


def test_without_chemprop_says_how_to_install(tmp_path):
    # chemprop made unimportable, whether or not it is installed.
    code = ("import runpy, sys; sys.modules['chemprop'] = None; "
            f"sys.argv = ['chemprop_baseline.py', '--dataset', 'zinc_subset',"
            f" '--source', 'data']; runpy.run_path({SCRIPT!r}, "
            "run_name='__main__')")
    result = subprocess.run([sys.executable, '-c', code], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert result.stderr.startswith('error: the chemprop baseline needs')
    assert 'pip install ".[baselines]"' in result.stderr
    assert 'Traceback' not in result.stderr


def test_bad_input_gives_one_line_errors(tmp_path, monkeypatch, capsys):
    pytest.importorskip('chemprop', reason='needs the [baselines] extra')
    main = script_main('chemprop_baseline')
    monkeypatch.chdir(tmp_path)
    for args, message in (
            (['--source', 'nowhere'],
             'nowhere/smiles/train.csv does not exist; pass the dataset '
             'folder as the source (e.g. ../shared/data/ZINC-proxy)'),
            # Arguments are checked before any data is read.
            (['--source', 'nowhere', '--max-epochs', '2'],
             "max_epochs must exceed chemprop's 2 warmup epochs"),
            (['--source', 'nowhere', '--max-minutes', '0'],
             'positive minutes'),
            (['--source', 'nowhere', '--threads', '0'],
             'threads must be at least 1'),
            (['--source', 'nowhere', '--output-dir', '/proc/nope'],
             "'--output-dir' must be a writable folder")):
        assert main(['--dataset', 'zinc_subset', *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith('error: ') and message in err, err
        assert err.count('\n') == 1
    assert not (tmp_path / 'runs').exists()


@pytest.mark.parametrize('args,message', [
    (['--config', 'x.yaml', '--source', 'data'], '--config reads its data'),
    (['--dataset', 'molhiv', '--source', 'd', '--split-seed', '1'],
     '--split-seed applies to --config only'),
    (['--dataset', 'molhiv'], '--dataset needs --source'),
    (['--dataset', 'molhiv', '--config', 'x.yaml'], 'not allowed with'),
    ([], 'one of the arguments --dataset --config is required')])
def test_conflicting_data_arguments_are_usage_errors(args, message):
    result = _run_cli(*args, cwd=REPO)
    assert result.returncode == 2 and message in result.stderr, \
        result.stderr
