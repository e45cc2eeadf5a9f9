"""--resume reads before it writes (training/resuming.py), and a stopped run
is never lost (training/checkpointing.py): a refused or failed resume
leaves the run directory byte for byte as it was, and the run then resumes
to the same metrics and weights as an uninterrupted one; SIGTERM and SIGINT
write last.ckpt and exit non-zero; timed checkpoints; earlier Lightning
logs survive a resume (issue 33)."""
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from graphormer_sepnorm.cli.train import train_main
from training_helpers import (TRAIN, max_weight_diff, metrics_rows,
                              run_script, without_time, zinc_args)

STOPPER = str(Path(__file__).with_name('train_until_stopped.py'))
# 4 steps per epoch (ZINC_SMALL), 16 steps in all.
# One torch thread: bit-equal runs need the same thread count (a run
# otherwise takes the idle cores).
RECIPE = ('optim.total_steps=16', 'train.checkpoint_every_n_steps=5',
          'train.num_threads=1')


def _tree(run_dir: Path) -> dict:
    """Every file of a run directory and the SHA-256 of its bytes."""
    return {str(p.relative_to(run_dir)):
            hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run_dir.rglob('*')) if p.is_file()}


@pytest.fixture(scope='module')
def reference(zinc_root, tmp_path_factory):
    # A fresh process, as the signalled runs it is compared with: a pytest
    # worker's state after other tests gave rows that differed in the 7th
    # digit in a loaded CI run.
    out = tmp_path_factory.mktemp('reference')
    result = run_script(TRAIN, *zinc_args(zinc_root, out, 'ref', *RECIPE,
                                          'train.max_steps=16'))
    assert result.returncode == 0, result.stderr[-3000:]
    return out / 'ref'


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith('error:')]
    assert len(lines) == 1, err
    return lines[0]


def test_a_refused_resume_changes_nothing_and_the_run_resumes_exactly(
        zinc_root, reference, tmp_path, capsys):
    run_dir = tmp_path / 'B'
    assert train_main(zinc_args(zinc_root, tmp_path, 'B', *RECIPE,
                                'train.max_steps=6')) == 0
    capsys.readouterr()
    before = _tree(run_dir)
    first_logs = (run_dir / 'logs' / 'metrics.csv').read_text()
    assert first_logs.count('\n') > 1
    # A model key, a data key and the seed: refused, naming both values.
    for override, expected in (
            ('model.hidden_channels=32', 'model.hidden_channels was 16 when '
             'the run started and is 32 now'),
            ('data.limit_train=32', 'data.limit_train was 64 when the run '
             'started and is 32 now'),
            ('seed=5', 'seed was 0 when the run started and is 5 now')):
        assert train_main(['--resume', str(run_dir), override]) == 2
        line = _one_error_line(capsys)
        assert expected in line and 'start a new run' in line, line
        assert _tree(run_dir) == before
    # The same through --config ... --resume (the config file's run dir).
    args = zinc_args(zinc_root, tmp_path, 'B', *RECIPE, 'train.max_steps=16')
    assert train_main([*args, 'model.num_heads=4', '--resume']) == 2
    assert 'model.num_heads was 2' in _one_error_line(capsys)
    assert _tree(run_dir) == before

    # Safe changes are accepted and recorded once the checkpoint loaded.
    assert train_main(['--resume', str(run_dir), 'train.max_steps=16']) == 0
    assert without_time(metrics_rows(run_dir)) == without_time(
        metrics_rows(reference))
    assert max_weight_diff(reference, run_dir) == 0.0
    saved = yaml.safe_load((run_dir / 'config.yaml').read_text())
    assert saved['train']['max_steps'] == 16
    assert yaml.safe_load((run_dir / 'resumes.yaml').read_text()) == [
        {'step': 6, 'changes': {'train.max_steps': {'from': 6, 'to': 16}}}]
    # Lightning's own logs of the first session are kept as they were (it
    # used to delete and rewrite them), the resumed session's beside them.
    assert (run_dir / 'logs' / 'metrics.csv').read_text() == first_logs
    assert (run_dir / 'logs' / 'resume1' / 'metrics.csv').is_file()


def test_a_checkpoint_that_does_not_fit_is_one_line(zinc_root, tmp_path,
                                                    capsys):
    """A config.yaml edited by hand to another width: the checkpoint's
    weights do not fit, one line, nothing written."""
    run_dir = tmp_path / 'C'
    assert train_main(zinc_args(zinc_root, tmp_path, 'C', *RECIPE,
                                'train.max_steps=2')) == 0
    saved = yaml.safe_load((run_dir / 'config.yaml').read_text())
    saved['model']['hidden_channels'] = 32
    (run_dir / 'config.yaml').write_text(yaml.safe_dump(saved))
    capsys.readouterr()
    before = _tree(run_dir)
    assert train_main(['--resume', str(run_dir), 'train.max_steps=4']) == 2
    line = _one_error_line(capsys)
    assert 'does not fit the configured model' in line
    assert 'has shape [16] there and [32] here' in line, line
    assert _tree(run_dir) == before


def _signal_at(step: int, signum: int, args: list, log: Path,
               timeout: float = 240) -> int:
    """Runs train.py until after step ``step`` (SIGSTOP there, see
    train_until_stopped.py), sends ``signum`` and lets it go on; returns
    its exit status."""
    with open(log, 'w') as stderr:
        process = subprocess.Popen(
            [sys.executable, STOPPER, f'step:{step}', *args],
            stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + timeout
    while True:
        pid, status = os.waitpid(process.pid, os.WUNTRACED | os.WNOHANG)
        assert not pid or os.WIFSTOPPED(status), log.read_text()[-3000:]
        if pid:
            break
        assert time.monotonic() < deadline, f"step {step} not reached"
        time.sleep(0.05)
    os.kill(process.pid, signum)
    os.kill(process.pid, signal.SIGCONT)
    return process.wait(timeout=timeout)


def test_sigterm_and_sigint_write_a_checkpoint_and_exit_non_zero(
        zinc_root, reference, tmp_path):
    """SIGTERM after step 5 (mid-epoch 1): last.ckpt at step 6, exit 143;
    resumed, SIGINT after step 9: step 10, exit 130; resumed, SIGTERM after
    step 11: step 12, the end of epoch 2; resumed to the end: the
    uninterrupted run's metrics and weights."""
    run_dir = tmp_path / 'D'
    args = zinc_args(zinc_root, tmp_path, 'D', *RECIPE, 'train.max_steps=16')
    last = run_dir / 'checkpoints' / 'last.ckpt'
    assert _signal_at(5, signal.SIGTERM, args, tmp_path / 'term.log') == 143
    log = (tmp_path / 'term.log').read_text()
    assert torch.load(last, weights_only=True)['global_step'] == 6
    assert f'error: stopped by SIGTERM at step 6: {last} holds that step; ' \
        f'continue with --resume {run_dir}' in log
    assert _signal_at(9, signal.SIGINT, ['--resume', str(run_dir)],
                      tmp_path / 'int.log') == 130
    assert torch.load(last, weights_only=True)['global_step'] == 10
    # After step 11: step 12 ends epoch 2, so the checkpoint is written at
    # the end of the epoch, after its validation (where Lightning resumes
    # an epoch boundary exactly).
    assert _signal_at(11, signal.SIGTERM, ['--resume', str(run_dir)],
                      tmp_path / 'term2.log') == 143
    state = torch.load(last, weights_only=True)
    assert state['global_step'] == 12 and state['epoch'] == 2
    assert [int(r['step']) for r in metrics_rows(run_dir)] == [4, 8, 12]
    resumed = run_script(TRAIN, '--resume', str(run_dir))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert without_time(metrics_rows(run_dir)) == without_time(
        metrics_rows(reference))
    assert max_weight_diff(reference, run_dir) == 0.0


def test_timed_checkpoints_bound_the_work_lost(zinc_root, tmp_path,
                                               monkeypatch):
    """Each training step takes 40 s of a fake clock; with
    train.checkpoint_every_minutes=1 and no step interval before the end, a
    stop at any moment loses at most a minute plus the step under way."""
    from graphormer_sepnorm.training import checkpointing
    from graphormer_sepnorm.training.lit_module import GraphormerLitModule

    clock = {'now': 0.0, 'saves': []}
    monkeypatch.setattr(checkpointing.time, 'monotonic',
                        lambda: clock['now'])
    original_step = GraphormerLitModule.training_step

    def slow_step(self, batch, batch_idx):
        clock['now'] += 40.0
        return original_step(self, batch, batch_idx)

    original_save = checkpointing.LastCheckpoint._save

    def save(self, trainer):
        clock['saves'].append((trainer.global_step, clock['now']))
        original_save(self, trainer)

    monkeypatch.setattr(GraphormerLitModule, 'training_step', slow_step)
    monkeypatch.setattr(checkpointing.LastCheckpoint, '_save', save)
    assert train_main(zinc_args(
        zinc_root, tmp_path, 'E', 'optim.total_steps=16', 'train.max_steps=16',
        'train.checkpoint_every_n_steps=1000',
        'train.checkpoint_every_minutes=1')) == 0
    steps = [step for step, _ in clock['saves']]
    # 40 s a step: a save 60 s after the last, i.e. every second step (the
    # 4th, 8th, 12th and 16th: an epoch's last batch, saved at its end).
    assert steps == [2, 4, 6, 8, 10, 12, 14, 16]
    times = [0.0] + [now for _, now in clock['saves']]
    assert max(b - a for a, b in zip(times, times[1:])) <= 60 + 40


def test_a_requeued_slurm_job_resumes_its_run(tmp_path):
    from graphormer_sepnorm.training.resuming import requeued_run
    config = {'output_dir': str(tmp_path), 'run_name': 'run'}
    requeued = {'SLURM_RESTART_COUNT': '1'}
    assert not requeued_run(config, requeued)  # nothing to resume yet
    (tmp_path / 'run' / 'checkpoints').mkdir(parents=True)
    (tmp_path / 'run' / 'checkpoints' / 'last.ckpt').write_bytes(b'')
    assert requeued_run(config, requeued)
    assert not requeued_run(config, {'SLURM_RESTART_COUNT': '0'})
    assert not requeued_run(config, {})


def test_slurm_requeue_signal_runs_lightnings_requeue_then_stops(
        zinc_root, tmp_path, monkeypatch):
    """Under SLURM (Lightning's auto-requeue), SIGUSR1 after step 5: Lightning
    saves its hpc checkpoint and calls scontrol requeue (absent here: it
    logs the failure), and the run writes last.ckpt at step 6 and exits
    128 + 10; the requeued command line then resumes (SLURM_RESTART_COUNT)."""
    args = zinc_args(zinc_root, tmp_path, 'S', *RECIPE, 'train.max_steps=8')
    env = {'SLURM_NTASKS': '1', 'SLURM_JOB_NAME': 'train',
           'SLURM_JOB_ID': '4242', 'SLURM_NODELIST': 'localhost',
           'SLURM_PROCID': '0', 'SLURM_LOCALID': '0', 'SLURM_NODEID': '0'}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    status = _signal_at(5, signal.SIGUSR1, args, tmp_path / 'usr1.log')
    log = (tmp_path / 'usr1.log').read_text()
    assert status == 128 + signal.SIGUSR1, log[-3000:]
    assert 'error: stopped by SIGUSR1 at step 6' in log
    assert (tmp_path / 'S' / 'hpc_ckpt_1.ckpt').is_file()  # Lightning's
    last = tmp_path / 'S' / 'checkpoints' / 'last.ckpt'
    assert torch.load(last, weights_only=True)['global_step'] == 6


def test_a_sigterm_during_setup_is_handled_as_a_stop(tmp_path):
    """Lightning's own handler took a SIGTERM that came before training
    started (it would end the first step with exit status 0): the
    checkpoint callback takes it over, and its teardown puts the handlers
    back."""
    from types import SimpleNamespace

    from lightning.fabric.plugins.environments import LightningEnvironment

    from graphormer_sepnorm.training.checkpointing import LastCheckpoint
    connector = SimpleNamespace(received_sigterm=True)
    trainer = SimpleNamespace(
        received_sigterm=True, _signal_connector=connector,
        _accelerator_connector=SimpleNamespace(
            cluster_environment=LightningEnvironment()))
    before = signal.getsignal(signal.SIGTERM)
    callback = LastCheckpoint(tmp_path / 'last.ckpt', every_n_steps=10)
    callback.on_train_start(trainer, None)
    try:
        assert callback._signal == signal.SIGTERM
        assert connector.received_sigterm is False
        assert signal.getsignal(signal.SIGTERM) == callback._on_signal
    finally:
        callback.teardown(trainer, None, 'fit')
    assert signal.getsignal(signal.SIGTERM) == before
