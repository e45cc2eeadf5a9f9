"""Helpers of the tests that run the scripts (training, pretraining):
a subprocess with a clean environment, the metrics.csv rows it wrote, a
model small enough for CPU tests and a two-step ``train --csv``."""
import csv
import os
import subprocess
import sys
from pathlib import Path

#: A model small enough for CPU tests (about 4k parameters).
TINY_MODEL = ['model.num_layers=1', 'model.hidden_channels=16',
              'model.ffn_channels=16', 'model.num_heads=2']


def metrics_rows(run_dir) -> list[dict]:
    with open(run_dir / 'metrics.csv') as f:
        return list(csv.DictReader(f))


def metric_values(rows) -> list[dict]:
    """metrics.csv rows with each cell read: ``None`` where it is empty
    (the ``test_*`` columns until the test split is scored, once, at the
    end), else a float; ``epoch`` and ``step`` stay strings."""
    return [{k: (v if k in ('epoch', 'step') else
                 None if v == '' else float(v)) for k, v in r.items()}
            for r in rows]


def assert_rows_close(expected, actual, rel: float, abs: float) -> None:
    """The rows of :func:`metric_values` equal: the same keys, ``epoch``,
    ``step`` and empty cells; the numbers within ``rel``/``abs``."""
    import pytest
    assert len(expected) == len(actual)
    for a, b in zip(expected, actual):
        assert a.keys() == b.keys()
        for key, value in a.items():
            if value is None or key in ('epoch', 'step'):
                assert b[key] == value, key
            else:
                assert b[key] == pytest.approx(value, rel=rel, abs=abs), key


def without_time(rows) -> list[dict]:
    """metrics.csv rows without their clock columns."""
    return [{k: v for k, v in r.items()
             if k not in ('wall_time_s', 'cpu_time_s')} for r in rows]


def run_script(script: str, *args: str, cwd=None, timeout: float = 240,
               env=None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop('GRAPHORMER_DATA_ROOT', None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, script, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env=full_env)


def train_csv_two_steps(csv_path: Path, *options: str) -> Path:
    """Two steps of ``train --csv CSV_PATH --targets y`` in batches of 32
    with :data:`TINY_MODEL`, its ``id`` column as the molecule ids, data and
    runs beside the CSV; :obj:`options` come first (e.g.
    ``--molecule-features``, ``data.feature_columns=[...]``). The run
    directory."""
    from graphormer_sepnorm.cli.train import train_main
    folder = csv_path.parent
    status = train_main([
        '--csv', str(csv_path), '--targets', 'y', *options,
        'data.id_column=id', f'data.root={folder / "data"}',
        f'output_dir={folder / "runs"}', 'train.max_steps=2',
        'data.batch_size=32', 'optim.warmup_steps=1',
        'train.progress_bar=false', 'train.num_threads=1', *TINY_MODEL])
    assert status == 0
    return folder / 'runs' / f'{csv_path.stem}_sep_seed0'
