"""benchmarks/throughput/measure.py: run_measured reads the peak memory of
the main process and of a child it starts, and the CPU time of both, against
what the command itself does (a child that holds 200 MB, a busy loop); a
failing command raises with its standard error."""
import sys
import textwrap

import pytest

from benchmark_helpers import REPO
from benchmarks.throughput.measure import env_with, portable, run_measured

# The child fills 200 MB and holds it long enough for the 0.2 s polling to
# see it; the parent spends about 0.5 CPU-s in a loop before it waits.
_PARENT = textwrap.dedent('''
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, '-c',
        'import time; b = bytearray(200 * 2 ** 20); time.sleep(1.5)'])
    start = time.process_time()
    while time.process_time() - start < 0.5:
        pass
    child.wait()
''')


def test_peak_memory_and_cpu_time_of_a_process_and_its_child():
    run = run_measured([sys.executable, '-c', _PARENT], env_with(1))
    assert run['children'] == 1
    assert 200 <= run['child_mb'] < 260      # the bytearray, and Python
    assert run['main_mb'] < 100              # the parent allocates little
    assert run['cpu'] >= 0.5                 # its loop, and the child's start
    assert run['wall'] >= 1.5


def test_a_failing_command_raises_with_its_error():
    with pytest.raises(RuntimeError, match='no such thing'):
        run_measured([sys.executable, '-c',
                      'import sys; sys.exit("no such thing")'], env_with(1))


def test_portable_writes_absolute_paths_relative_to_the_repository():
    assert portable(str(REPO / 'runs' / 'x')) == 'runs/x'
    assert portable(f'--checkpoint={REPO}/a.safetensors') == (
        '--checkpoint=a.safetensors')
    assert portable(str(REPO.parent / 'shared' / 'data')) == '../shared/data'
    assert portable('--repeats=3') == '--repeats=3'
