"""A non-editable install ships the bundled models: the wheel holds them and
``scripts/predict.py --model zinc`` (and ``--model molhiv``) predicts with
the installed package, not the source tree."""
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from graphormer_sepnorm.bundled import (ENV_VAR, BundledModelNotInstalled,
                                        bundled_model_paths)
from graphormer_sepnorm.predict import Predictor

from conftest import REPO

PACKAGE_DIR = REPO / 'graphormer_sepnorm'
# Runs the script as `python scripts/predict.py ...` would, then names the
# package it imported.
RUN_SCRIPT = """\
import os, runpy, sys
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(script))
try:
    runpy.run_path(script, run_name='__main__')
finally:
    print('imported', sys.modules['graphormer_sepnorm'].__file__)
"""


def _run(*args: str, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True,
                            timeout=300, **kwargs)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.mark.slow
def test_wheel_ships_the_bundled_models(tmp_path):
    shipped = {}
    for name in ('zinc', 'molhiv'):
        try:
            shipped[name] = bundled_model_paths(name, PACKAGE_DIR / 'bundled')
        except BundledModelNotInstalled:
            continue
    if 'zinc' not in shipped:
        pytest.skip('no bundled ZINC model in the source tree')
    # Build from a copy of what setup.cfg packages, so that the build
    # leaves no build/ or *.egg-info in the checkout.
    source = tmp_path / 'source'
    source.mkdir()
    for name in ('setup.cfg', 'pyproject.toml', 'README.md'):
        shutil.copy(REPO / name, source)
    shutil.copytree(PACKAGE_DIR, source / 'graphormer_sepnorm',
                    ignore=shutil.ignore_patterns('__pycache__'))
    _run(sys.executable, '-m', 'pip', 'wheel', '--no-deps',
         '--no-build-isolation', '--quiet', '-w', str(tmp_path / 'wheels'),
         str(source))
    wheel, = (tmp_path / 'wheels').glob('graphormer_sepnorm-*.whl')
    with zipfile.ZipFile(wheel) as archive:
        for member in (m for members in shipped.values() for m in members):
            assert archive.read(f'graphormer_sepnorm/bundled/{member.name}') \
                == member.read_bytes()

    venv = tmp_path / 'venv'
    _run(sys.executable, '-m', 'venv', '--system-site-packages',
         '--without-pip', str(venv))
    python = venv / 'bin' / 'python'
    _run(sys.executable, '-m', 'pip', '--python', str(python), 'install',
         '--no-deps', '--quiet', str(wheel))
    # The dependencies (torch, PyG, ...) are in this interpreter's
    # environment, which is itself often a venv that --system-site-packages
    # does not see: a .pth file adds its site-packages after the new venv's
    # own (its .pth files, such as an editable install, are not run).
    site_packages = _run(str(python), '-c', 'import sysconfig; print('
                         'sysconfig.get_paths()["purelib"])').stdout.strip()
    outer = {sysconfig.get_paths()[key] for key in ('purelib', 'platlib')}
    (Path(site_packages) / 'outer_environment.pth').write_text(
        '\n'.join(sorted(outer)) + '\n')

    # The script outside the checkout (it puts its parent folder first on
    # sys.path, so that it also runs from a checkout without installation).
    outside = tmp_path / 'elsewhere'
    (outside / 'scripts').mkdir(parents=True)
    shutil.copy(REPO / 'scripts' / 'predict.py', outside / 'scripts')
    env = {key: value for key, value in os.environ.items()
           if key not in ('PYTHONPATH', ENV_VAR)}
    for name, members in shipped.items():
        result = _run(str(python), '-c', RUN_SCRIPT, 'scripts/predict.py',
                      '--model', name, '--smiles', 'CCO', cwd=outside,
                      env=env)
        imported = Path(result.stdout.splitlines()[-1].split(' ', 1)[1])
        assert imported == Path(site_packages) / 'graphormer_sepnorm' / \
            '__init__.py'
        header, row = result.stdout.splitlines()[:2]
        predictor = Predictor.from_bundled(name,
                                           directory=members[0].parent)
        expected = predictor.predict(['CCO'], num_workers=0)[0]
        columns = ['smiles', 'prediction'] + (
            ['prediction_std'] if len(members) > 1 else []) + ['error']
        assert header.split() == columns, name
        cells = row.split()
        assert cells[0] == 'CCO'
        assert float(cells[1]) == pytest.approx(expected.value, abs=1e-5)
