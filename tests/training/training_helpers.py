"""Helpers of the training tests (imported by the test modules; not a
conftest.py, so that ``from conftest import ...`` elsewhere keeps finding
tests/conftest.py, which holds the data-root fixtures)."""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TRAIN = str(REPO / 'scripts' / 'train.py')
EVALUATE = str(REPO / 'scripts' / 'evaluate.py')

#: A model small enough for CPU tests (about 4k parameters).
TINY_MODEL = ['model.num_layers=1', 'model.hidden_channels=16',
              'model.ffn_channels=16', 'model.num_heads=2']


def run_script(script: str, *args: str, cwd=None, timeout: float = 240,
               env=None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop('GRAPHORMER_DATA_ROOT', None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, script, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env=full_env)
