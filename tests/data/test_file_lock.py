"""Processes preparing the same data root take turns: folder_lock excludes
other processes (as other nodes on a shared file system), and the training
data module prepares its data under it."""
import fcntl
import multiprocessing
import time

import pytest

from graphormer_sepnorm.data import datamodule as datamodule_module
from graphormer_sepnorm.data.datamodule import GraphDataModule
from graphormer_sepnorm.data.file_lock import LOCK_FILE, folder_lock


def _prepare(folder, log, name):
    with folder_lock(folder):
        with open(log, 'a') as f:
            f.write(f'{name} start\n')
        time.sleep(0.3)
        with open(log, 'a') as f:
            f.write(f'{name} end\n')


def test_processes_take_turns(tmp_path):
    log = tmp_path / 'log.txt'
    folder = tmp_path / 'data'
    context = multiprocessing.get_context('fork')
    workers = [context.Process(target=_prepare, args=(folder, log, name))
               for name in 'ab']
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    lines = log.read_text().split('\n')[:-1]
    # Never interleaved: each start is followed by its own end.
    assert len(lines) == 4
    for start, end in zip(lines[::2], lines[1::2]):
        assert start.endswith('start') and end == start.replace('start',
                                                                'end')


def _held(folder) -> bool:
    with open(folder / LOCK_FILE, 'a') as other:
        try:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(other, fcntl.LOCK_UN)
        return False


def test_the_lock_is_released_after_an_error(tmp_path):
    with pytest.raises(KeyError):
        with folder_lock(tmp_path):
            assert _held(tmp_path)
            raise KeyError('x')
    assert not _held(tmp_path)


def test_the_data_module_prepares_under_the_lock(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(datamodule_module, 'prepare_raw',
                        lambda *args: seen.append(('raw', _held(tmp_path))))
    monkeypatch.setattr(datamodule_module, 'load_data_splits',
                        lambda cfg: seen.append(('splits', _held(tmp_path))))
    module = GraphDataModule({'name': 'zinc_subset', 'root': str(tmp_path),
                              'raw_source': None})
    module.prepare_data()
    assert seen == [('raw', True), ('splits', True)]
    assert not _held(tmp_path)
