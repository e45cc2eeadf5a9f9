"""What a run shows while it trains (training/console.py,
training/hardware.py): the thread count chosen for the machine, the
processor's name its results record, one progress bar over the whole run
(also after --resume), and no third-party noise."""
import os
import re
import warnings

import pytest
import torch

from graphormer_sepnorm.training import hardware
from graphormer_sepnorm.cli.train import train_main
from training_helpers import TINY_MODEL


@pytest.fixture
def machine(monkeypatch):
    """A machine of 8 cores with a chosen load average; torch's thread
    count is restored after."""
    threads = torch.get_num_threads()
    monkeypatch.setattr(os, 'sched_getaffinity', lambda pid: set(range(8)),
                        raising=False)
    monkeypatch.delenv('OMP_NUM_THREADS', raising=False)
    monkeypatch.delenv('LOCAL_WORLD_SIZE', raising=False)

    def load(value):
        monkeypatch.setattr(os, 'getloadavg', lambda: (value, 0.0, 0.0))
    yield load
    torch.set_num_threads(threads)


@pytest.mark.parametrize('load, environ, requested, threads, warned', [
    (0.2, {}, None, 8, False),     # idle: every core
    (2.6, {}, None, 5, False),     # 8 - 2.6 = 5.4 idle cores
    (7.9, {}, None, 1, False),     # 0.1 idle: still one thread
    (12.0, {}, None, 1, True),     # busier than its cores
    (2.0, {'LOCAL_WORLD_SIZE': '4'}, None, 1, False),  # 6 idle / 4
    (0.0, {'LOCAL_WORLD_SIZE': '2'}, None, 4, False),
    (0.0, {}, 3, 3, False),        # train.num_threads wins
    (0.0, {'LOCAL_WORLD_SIZE': '2'}, 6, 6, True),  # 12 threads on 8 cores
])
def test_thread_choice(machine, load, environ, requested, threads, warned):
    machine(load)
    assert hardware.configure_threads(requested, environ=environ) == threads
    assert torch.get_num_threads() == threads
    warning = hardware.oversubscription(threads, environ=environ)
    assert (warning is not None) == warned
    if warned:
        assert warning.startswith(f'the machine is oversubscribed: load '
                                  f'{load:.1f} on 8 cores')


def test_omp_num_threads_is_kept(machine):
    machine(0.0)
    torch.set_num_threads(2)
    assert hardware.configure_threads(
        None, environ={'OMP_NUM_THREADS': '2'}) == 2
    assert torch.get_num_threads() == 2


def _bar_states(err: str) -> list[tuple[int, int]]:
    """Every (steps, total) the training bar showed."""
    return [(int(n), int(total)) for n, total in
            re.findall(r'Epoch \d+/\d+: +\d+%\|[^|]*\| (\d+)/(\d+) ', err)]


def test_one_bar_over_the_whole_run_and_after_resume(zinc_property_frame,
                                                     tmp_path, capsys,
                                                     monkeypatch):
    """9 steps per epoch: the bar counts to the run's last step across
    epochs (12 of 12, not 3 of 9), and a resumed run counts on from its
    step; nothing of Lightning's noise is printed."""
    monkeypatch.chdir(tmp_path)
    zinc_property_frame[['smiles', 'y']].dropna().to_csv('small.csv',
                                                         index=False)
    argv = ['--csv', 'small.csv', '--targets', 'y', 'data.batch_size=16',
            'train.checkpoint_every_n_steps=5', *TINY_MODEL]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        assert train_main([*argv, 'train.max_steps=5']) == 0
    first = capsys.readouterr()
    shown = ' '.join(str(warning.message) for warning in caught)
    # 9 batches per epoch, fewer than train.log_every_n_steps (50).
    assert 'LeafSpec' not in shown and 'logging interval' not in shown
    # Lightning's bars write to standard output.
    assert _bar_states(first.out)[-1] == (5, 5)
    assert train_main([*argv, '--resume', 'train.max_steps=12']) == 0
    resumed = capsys.readouterr()
    states = _bar_states(resumed.out)
    assert states[0][0] >= 5 and states[-1] == (12, 12)
    assert {total for _, total in states} == {12}
    assert 'Run folder: runs/small_sep_seed0' in resumed.err
    assert re.search(r'best_val=\d', resumed.out)
    for noise in ('litlogger', 'LeafSpec', 'log_every_n_steps'):
        assert noise not in first.err + resumed.err


def test_cpu_model_is_what_lscpu_names():
    # lscpu (util-linux) reads the processor's name its own way: an
    # independent truth where it is installed.
    import shutil
    import subprocess
    if shutil.which('lscpu') is None:
        pytest.skip('lscpu is not installed')
    out = subprocess.run(['lscpu'], capture_output=True, text=True,
                         check=True).stdout
    named = [line.split(':', 1)[1].strip() for line in out.splitlines()
             if line.startswith('Model name:')]
    if not named:
        pytest.skip('lscpu names no model here')
    assert hardware.cpu_model() == named[0]
    assert hardware.hardware_name('cpu') == \
        f"{named[0]} ({os.cpu_count()} cores)"
