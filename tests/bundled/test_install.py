"""A non-editable install ships the bundled models: the wheel holds them and
``scripts/predict.py --model zinc`` (and ``--model molhiv``) predicts with
the installed package, not the source tree."""
import shutil
import zipfile
from pathlib import Path

import pytest

from graphormer_sepnorm.bundled import (BundledModelNotInstalled,
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


@pytest.mark.slow
def test_wheel_ships_the_bundled_models(installed_package):
    shipped = {}
    for name in ('zinc', 'molhiv'):
        try:
            shipped[name] = bundled_model_paths(name, PACKAGE_DIR / 'bundled')
        except BundledModelNotInstalled:
            continue
    if 'zinc' not in shipped:
        pytest.skip('no bundled ZINC model in the source tree')
    with zipfile.ZipFile(installed_package.wheel) as archive:
        for member in (m for members in shipped.values() for m in members):
            assert archive.read(f'graphormer_sepnorm/bundled/{member.name}') \
                == member.read_bytes()

    # The script outside the checkout (it puts its parent folder first on
    # sys.path, so that it also runs from a checkout without installation).
    scripts = installed_package.outside / 'scripts'
    scripts.mkdir(exist_ok=True)
    shutil.copy(REPO / 'scripts' / 'predict.py', scripts)
    for name, members in shipped.items():
        result = installed_package.run(
            'python', '-c', RUN_SCRIPT, 'scripts/predict.py', '--model',
            name, '--smiles', 'CCO')
        imported = Path(result.stdout.splitlines()[-1].split(' ', 1)[1])
        assert imported == installed_package.site_packages / \
            'graphormer_sepnorm' / '__init__.py'
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
