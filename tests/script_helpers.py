"""Helpers of the tests that run the scripts (training, pretraining):
a subprocess with a clean environment and the metrics.csv rows it wrote."""
import csv
import os
import subprocess
import sys


def metrics_rows(run_dir) -> list[dict]:
    with open(run_dir / 'metrics.csv') as f:
        return list(csv.DictReader(f))


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
