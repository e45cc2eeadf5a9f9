"""Bad input caught before any training work (issue 12, items 1-3): a
data.root or output_dir that cannot be created, a last.ckpt to resume that
is not a training checkpoint of ours, a data root whose raw files differ
from data.raw_source. Each ends in one `error:` line with exit status 2 and
loses nothing."""
import pickle
import shutil
from pathlib import Path

import pytest
import torch

from conftest import shared_path
from graphormer_sepnorm.cli.train import train_main
from graphormer_sepnorm.training.config import dump_config, load_config
from training_helpers import CONFIGS, TRAIN, run_script

CONFIG = str(CONFIGS / 'zinc_subset_sepnorm.yaml')


def _one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('error: '), stderr
    return lines[0]


def _requires_procfs():
    if not Path('/proc/self').is_dir():
        pytest.skip('needs Linux /proc (a folder nobody can create in)')


def test_data_root_that_cannot_be_created(tmp_path):
    """The issue's input, through the real script."""
    _requires_procfs()
    result = run_script(TRAIN, '--config', CONFIG, 'data.root=/proc/nope',
                        f'output_dir={tmp_path}/runs', timeout=120)
    assert result.returncode == 2
    line = _one_error_line(result.stderr)
    assert "'data.root' must be a writable folder" in line
    assert '/proc/nope' in line and 'set data.root=' in line
    assert not (tmp_path / 'runs').exists()  # nothing written


@pytest.mark.parametrize('key,value', [
    ('data.root', '/proc/nope/deeper'),
    ('output_dir', '/proc/nope'),
    ('data.root', '{file}'),
    ('data.root', '{file}/below'),
])
def test_unwritable_folders_name_their_key(tmp_path, capsys, key, value):
    _requires_procfs()
    a_file = tmp_path / 'a_file'
    a_file.write_text('not a folder')
    overrides = {'data.root': f'{tmp_path}/data',
                 'output_dir': f'{tmp_path}/runs'}
    overrides[key] = value.format(file=a_file)
    assert train_main(['--config', CONFIG,
                       *(f'{k}={v}' for k, v in overrides.items())]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"'{key}' must be a writable folder" in line
    assert f'set {key}=' in line
    if 'file' in value:
        assert f'{a_file} is a file' in line
    assert not (tmp_path / 'data').exists()
    assert not (tmp_path / 'runs').exists()
    assert a_file.read_text() == 'not a folder'


class _Payload:
    """Unpickling it would create the file ``marker``."""
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return open, (str(self.marker), 'w')


def _run_dir_with_last_ckpt(tmp_path: Path, content: bytes) -> Path:
    config = load_config(CONFIG, [f'output_dir={tmp_path}/runs',
                                  'run_name=run',
                                  f'data.root={tmp_path}/data'], env={})
    run_dir = tmp_path / 'runs' / 'run'
    (run_dir / 'checkpoints').mkdir(parents=True)
    dump_config(config, run_dir / 'config.yaml')
    (run_dir / 'checkpoints' / 'last.ckpt').write_bytes(content)
    return run_dir


def _assert_nothing_changed(run_dir: Path, content: bytes, tmp_path: Path):
    assert (run_dir / 'checkpoints' / 'last.ckpt').read_bytes() == content
    assert sorted(p.name for p in run_dir.iterdir()) == ['checkpoints',
                                                         'config.yaml']
    assert not (tmp_path / 'data').exists()  # no data touched


def test_resume_from_a_pickle_with_a_payload(tmp_path):
    """The issue's input, through the real script: refused unread, in one
    line that says what to do."""
    marker = tmp_path / 'payload_ran'
    content = pickle.dumps(_Payload(marker))
    run_dir = _run_dir_with_last_ckpt(tmp_path, content)
    result = run_script(TRAIN, '--resume', str(run_dir), timeout=120)
    assert result.returncode == 2
    line = _one_error_line(result.stderr)
    assert 'is not a loadable training checkpoint' in line
    assert 'it was not unpickled' in line and 'Remove it' in line
    assert str(run_dir / 'checkpoints' / 'last.ckpt') in line
    assert not marker.exists()
    _assert_nothing_changed(run_dir, content, tmp_path)


def _torch_bytes(obj, tmp_path: Path) -> bytes:
    path = tmp_path / 'saved.pt'
    torch.save(obj, path)
    return path.read_bytes()


@pytest.mark.parametrize('kind,expected', [
    ('payload_in_torch_file', 'it was not unpickled and nothing in it ran'),
    ('truncated', 'not a complete torch checkpoint'),
    ('empty', 'not a complete torch checkpoint'),
    ('plain_values', "lacks 'state_dict', 'loops'"),
])
def test_resume_refuses_files_train_py_did_not_write(tmp_path, capsys, kind,
                                                     expected):
    marker = tmp_path / 'payload_ran'
    state = {'state_dict': {'w': torch.ones(64)}, 'loops': {},
             'optimizer_states': [], 'graphormer_sepnorm': {}}
    content = {
        'payload_in_torch_file': lambda: _torch_bytes(
            dict(state, graphormer_sepnorm=_Payload(marker)), tmp_path),
        'truncated': lambda: _torch_bytes(state, tmp_path)[:300],
        'empty': lambda: b'',
        'plain_values': lambda: _torch_bytes({'epoch': 3}, tmp_path),
    }[kind]()
    run_dir = _run_dir_with_last_ckpt(tmp_path, content)
    assert train_main(['--resume', str(run_dir)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert 'is not a loadable training checkpoint' in line
    assert expected in line
    assert not marker.exists()
    _assert_nothing_changed(run_dir, content, tmp_path)


def test_data_root_with_raw_files_of_another_copy(tmp_path):
    """The issue's case: a copy of ../shared/data as data.root holds the
    real ZINC index files (which index the full 220k-graph pickles), and
    data.raw_source is ZINC-proxy (10k stand-in graphs). Refused before
    anything is copied or processed, naming the folder to remove."""
    root = tmp_path / 'shared_copy'
    raw = root / 'ZINC' / 'raw'
    shutil.copytree(shared_path('ZINC', 'raw'), raw)
    before = {p.name: p.read_bytes() for p in raw.iterdir()}
    source = shared_path('ZINC-proxy')
    result = run_script(TRAIN, '--config', CONFIG, f'data.root={root}',
                        f'data.raw_source={source}',
                        f'output_dir={tmp_path}/runs', timeout=120)
    assert result.returncode == 2
    line = _one_error_line(result.stderr)
    assert f'remove {raw} or choose another data.root' in line
    for name in ('raw/train.index', 'raw/val.index', 'raw/test.index'):
        assert name in line
    assert str(source) in line
    assert {p.name: p.read_bytes() for p in raw.iterdir()} == before
    assert sorted(p.name for p in (root / 'ZINC').iterdir()) == ['raw']
    assert not (tmp_path / 'runs').exists()


@pytest.mark.parametrize('config,example', [
    ('zinc_subset_sepnorm.yaml', '../shared/data/ZINC-proxy'),
    ('molhiv_sepnorm.yaml', '../shared/data/ogbg_molhiv')])
def test_no_raw_source_and_no_internet(tmp_path, capsys, monkeypatch, config,
                                       example):
    """An empty data root without data.raw_source makes PyG / ogb download;
    offline that is one line naming data.raw_source (it was a urllib
    traceback), exit 2, and no run directory."""
    import urllib.error
    import urllib.request

    def offline(*args, **kwargs):
        raise urllib.error.URLError('[Errno -3] Temporary failure in name '
                                    'resolution')

    monkeypatch.setattr(urllib.request, 'urlopen', offline)
    assert train_main(['--config', str(CONFIGS / config),
                       f'data.root={tmp_path / "data"}',
                       f'output_dir={tmp_path / "runs"}']) == 2
    # The download starts inside Lightning's fit, after its INFO lines
    # (whose logging handlers, in-process, may also complain about streams
    # captured by earlier tests): the error is the last line, and the only
    # one.
    lines = capsys.readouterr().err.strip().splitlines()
    line = lines[-1]
    assert line.startswith('error: ')
    assert [other for other in lines if other.startswith('error')] == [line]
    assert 'downloading it failed' in line and 'name resolution' in line
    assert f'set data.raw_source to a folder holding its raw files (e.g. ' \
        f'{example})' in line
    assert not list((tmp_path / 'runs').glob('*/checkpoints'))
