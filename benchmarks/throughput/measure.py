r"""Measuring a command and the machine it runs on, for the throughput
benchmarks (``benchmarks/predict_throughput.py``,
``benchmarks/ensemble_throughput.py``): wall time, CPU time and peak
memory of a process tree (:func:`run_measured`), and what a report says
of the machine and the code (:func:`memory_gb`, :func:`commit`,
:func:`portable`; the processor's name is
:func:`graphormer_sepnorm.training.hardware.cpu_model`)."""
from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def memory_gb() -> str:
    r"""The machine's memory (MemTotal)."""
    total = _kb_field('/proc/meminfo', 'MemTotal')
    return f'{total / 1024 ** 2:.0f} GiB' if total else 'unknown'


def portable(argument: str) -> str:
    r"""An absolute path (alone or after ``--option=``) written relative to
    the repository, so that a report names no folder of the machine that
    wrote it (``../shared/data/...`` for the shared data beside the
    checkout); other arguments as they are."""
    option, sep, value = argument.rpartition('=')
    if not value.startswith('/'):
        return argument
    relative = Path(os.path.relpath(value, REPO)).as_posix()
    return f'{option}{sep}{relative}'


def commit() -> str:
    r"""The repository's short commit hash (``unknown`` outside git)."""
    try:
        return subprocess.run(['git', 'rev-parse', '--short', 'HEAD'],
                              cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return 'unknown'


def _tree(pid: int) -> list[int]:
    r""":obj:`pid` and all its descendants (from ``/proc``)."""
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        path = Path(f'/proc/{current}/task/{current}/children')
        try:
            todo += [int(c) for c in path.read_text().split()]
        except OSError:
            pass
    return pids


def _kb_field(path: str, field: str) -> int:
    r"""A field in kB of a ``/proc`` file such as ``/proc/meminfo`` (0 if
    it cannot be read)."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(f'{field}:'):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_measured(cmd: list[str], env: dict) -> dict:
    r"""Runs :obj:`cmd` and returns its wall time, its CPU time (the process
    and the children it waited for, as :func:`os.wait4` reports them) and
    the peak resident memory of the main process and of its largest child,
    polled from ``/proc`` (VmHWM)."""
    with tempfile.TemporaryFile(mode='w+') as errors:
        started = time.perf_counter()
        process = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                   stderr=errors)
        peaks: dict[int, int] = {}
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            for child in _tree(process.pid):
                peak = _kb_field(f'/proc/{child}/status', 'VmHWM')
                peaks[child] = max(peaks.get(child, 0), peak)
            time.sleep(0.2)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        stderr = errors.read()
    if process.returncode != 0:
        raise RuntimeError(f'{cmd} failed: {stderr[-2000:]}')
    main_peak = peaks.pop(process.pid, 0)
    return {'wall': wall, 'cpu': usage.ru_utime + usage.ru_stime,
            'main_mb': main_peak / 1024,
            'child_mb': max(peaks.values(), default=0) / 1024,
            'children': len(peaks), 'stderr': stderr}


def env_with(threads: int) -> dict:
    r"""This environment with the repository importable and
    :obj:`threads` OpenMP and MKL threads."""
    return {**os.environ, 'PYTHONPATH': str(REPO), 'OMP_NUM_THREADS':
            str(threads), 'MKL_NUM_THREADS': str(threads)}
