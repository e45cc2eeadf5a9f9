"""Helpers and fixtures of the training tests (imported by the test modules;
not a conftest.py, so that ``from conftest import ...`` elsewhere keeps
finding tests/conftest.py): data roots prepared once per session.

ZINC-subset: the stand-in of ../shared/data/ZINC-proxy (real val/test),
processed once (about 15 s) into a session folder that every test and
subprocess shares through ``data.root``.

MolHIV: processing all 41,127 molecules takes about a minute on two cores,
too slow for CI, so the tests use a small copy in OGB's layout
(200/100/100 molecules of the real scaffold splits, at least 5 positives per
split) written by ``write_molhiv_subset`` from the shared raw files.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_path  # tests/conftest.py (skips without data)

REPO = Path(__file__).resolve().parents[2]
TRAIN = str(REPO / 'scripts' / 'train.py')
EVALUATE = str(REPO / 'scripts' / 'evaluate.py')

#: A model small enough for CPU tests (about 4k parameters).
TINY_MODEL = ['model.num_layers=1', 'model.hidden_channels=16',
              'model.ffn_channels=16', 'model.num_heads=2']


def session_data_root(tmp_path_factory) -> Path:
    """One data root per test session, shared with tests/data."""
    root = tmp_path_factory.getbasetemp() / 'graphormer_data'
    root.mkdir(exist_ok=True)
    return root


@pytest.fixture(scope='session')
def zinc_root(tmp_path_factory):
    from graphormer_sepnorm.data.datasets import load_splits
    source = shared_path('ZINC-proxy')
    root = session_data_root(tmp_path_factory)
    load_splits('zinc_subset', root, raw_source=source)
    return root, source


@pytest.fixture(scope='session')
def molhiv_root(tmp_path_factory):
    from graphormer_sepnorm.data.datasets import write_molhiv_subset
    source = shared_path('ogbg_molhiv')
    root = tmp_path_factory.getbasetemp() / 'molhiv_small'
    if not (root / 'ogbg_molhiv').is_dir():
        write_molhiv_subset(source, root)
    return root


def run_script(script: str, *args: str, cwd=None, timeout: float = 240,
               env=None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop('GRAPHORMER_DATA_ROOT', None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, script, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env=full_env)
