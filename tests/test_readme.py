"""The README documents every config key and every script, and every script
answers --help."""
import subprocess
import sys
from pathlib import Path

import pytest

from graphormer_sepnorm.training.config import options_markdown

REPO = Path(__file__).resolve().parents[1]
README = (REPO / 'README.md').read_text()
SCRIPTS = sorted((REPO / 'scripts').glob('*.py'))


def test_every_config_key_is_documented():
    """The README's table of configuration keys is the schema's table
    (OPTIONS, every key), row for row: a key added, or a type, default or
    meaning changed in the code, shows here."""
    assert options_markdown() in README, (
        "the README's key table differs from the config schema; paste the "
        "output of `python scripts/train.py --list-options` under "
        "'Configuration keys'")


@pytest.mark.parametrize('script', SCRIPTS, ids=lambda p: p.name)
def test_every_script_is_documented_and_has_help(script):
    assert f'scripts/{script.name}' in README
    result = subprocess.run([sys.executable, str(script), '--help'],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert 'usage:' in result.stdout


def test_quick_start_has_the_two_commands_ci_runs():
    ci = (REPO / '.ci' / 'run').read_text()
    test_command = 'pip install -e ".[test,reference]" && python -m pytest -q tests'
    assert test_command in README and test_command in ci
    assert 'pip install -e . && python scripts/train.py --config' in README


def test_python_example_runs(tmp_path):
    # The README's example, with the ZINC raw files of the shared stand-in
    # in place of PyG's download (no internet here).
    from conftest import shared_path
    raw = tmp_path / 'data' / 'ZINC' / 'raw'
    raw.mkdir(parents=True)
    for source in shared_path('ZINC-proxy', 'raw').iterdir():
        (raw / source.name).symlink_to(source)
    code = README.split('```python\n', 1)[1].split('```', 1)[0]
    code += '\nassert prediction.shape == (32, 1)\n'
    code += 'assert graph_token.shape == (32, 80)\n'
    result = subprocess.run([sys.executable, '-c', code], cwd=tmp_path,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
