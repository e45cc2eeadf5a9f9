r"""``--resume`` reads before it writes: the overrides are compared with the
run's saved ``config.yaml`` first, the checkpoint is checked against the
model before Lightning loads it, and ``config.yaml`` is rewritten only once
the checkpoint has loaded, so that a refused or failed resume leaves the run
directory as it was (and a later ``--resume`` with the right settings
continues exactly).

What a resumed run may change is what does not change what it learns from
or what it is: the stopping point, the schedule and optimizer, logging,
checkpointing, hardware, where the data lives and how it is loaded. The
model, the dataset and its split, the pretraining corpus and objective and
the seed are fixed when the run starts. Each accepted change is recorded in
``resumes.yaml`` (step, key, old and new value).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Optional

import torch
import yaml
from lightning.pytorch.callbacks import Callback

from .config import OPTIONS, ConfigError, dump_config, get_dotted, run_dir_of

__all__ = ['RESUME_RECORD', 'resume_changes', 'check_resume_config',
           'check_checkpoint_fits', 'requeued_run', 'ResumedConfig']

#: The file listing each resume of a run and the settings it changed.
RESUME_RECORD = 'resumes.yaml'

#: Sections whose keys a resume may change.
_SAFE_SECTIONS = ('train.', 'optim.')
#: Keys outside those sections that a resume may change (where the data
#: lives and how it is loaded, how often pretraining validates).
_SAFE_KEYS = frozenset({
    'output_dir', 'run_name', 'data.root', 'data.raw_source',
    'data.num_workers', 'data.pin_memory', 'data.eval_batch_size',
    'data.on_device', 'pretrain.val_every_n_steps'})


#: Keys of those sections that a resume may not change: the checkpoint of
#: a run with a weight average holds the average as its weights.
_FIXED_KEYS = frozenset({'optim.ema_decay'})


def _is_safe(key: str) -> bool:
    return ((key.startswith(_SAFE_SECTIONS) or key in _SAFE_KEYS)
            and key not in _FIXED_KEYS)


def resume_changes(saved: Mapping, config: Mapping) -> dict[str, tuple]:
    r"""The keys whose value in :obj:`config` differs from the run's
    :obj:`saved` configuration, as :obj:`{key: (saved value, new value)}`
    (a key the saved file lacks, written by an older version, counts with
    its default)."""
    changes = {}
    for option in OPTIONS:
        old = get_dotted(saved, option.key, option.default)
        new = get_dotted(config, option.key, option.default)
        if old != new:
            changes[option.key] = (old, new)
    return changes


def _read_saved(run_dir: Path) -> Any:
    path = run_dir / 'config.yaml'
    try:
        with open(path) as f:
            return yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(f"--resume: {path} cannot be read "
                          f"({type(error).__name__}); put back the "
                          f"config.yaml the run wrote") from None


def check_resume_config(config: Mapping, run_dir: Path) -> dict[str, tuple]:
    r"""Compares :obj:`config` with :obj:`run_dir/config.yaml` (nothing is
    written) and returns the changes a resume may make; raises
    :class:`ConfigError` naming each key whose change it may not make
    (model, data, corpus, objective, seed) with both values. A run
    directory without a :obj:`config.yaml` is not compared."""
    run_dir = Path(run_dir)
    if not (run_dir / 'config.yaml').is_file():
        return {}
    saved = _read_saved(run_dir)
    if not isinstance(saved, Mapping):
        raise ConfigError(f"--resume: {run_dir / 'config.yaml'} holds no "
                          f"configuration; put back the config.yaml the run "
                          f"wrote")
    changes = resume_changes(saved, config)
    refused = [f"{key} was {old!r} when the run started and is {new!r} now"
               for key, (old, new) in changes.items() if not _is_safe(key)]
    if refused:
        raise ConfigError(
            f"--resume {run_dir}: {'; '.join(refused)}. A resumed run keeps "
            f"its model, data, corpus, objective, seed and weight average: "
            f"drop the override, or start a new run (another run_name=...) "
            f"with it")
    return changes


def check_checkpoint_fits(module: torch.nn.Module, path: Path) -> None:
    r"""Checks that the weights in the training checkpoint :obj:`path` have
    the names and shapes of :obj:`module`'s, so that a mismatch is one
    :class:`ConfigError` line before Lightning loads anything."""
    state = torch.load(path, map_location='cpu', weights_only=True)
    saved = state['state_dict']
    expected = module.state_dict()
    problems = [f"{key} is missing" for key in expected if key not in saved]
    problems += [f"{key} is not in this model" for key in saved
                 if key not in expected]
    problems += [f"{key} has shape {list(saved[key].shape)} there and "
                 f"{list(value.shape)} here" for key, value in expected.items()
                 if key in saved and saved[key].shape != value.shape]
    if problems:
        more = (f" (and {len(problems) - 1} more)" if len(problems) > 1
                else '')
        raise ConfigError(
            f"--resume: {path} does not fit the configured model: "
            f"{problems[0]}{more}; it was written by another version or "
            f"configuration: resume with the run's own config.yaml, or "
            f"start a new run")


def requeued_run(config: Mapping,
                 env: Optional[Mapping[str, str]] = None) -> bool:
    r"""Whether this process is a SLURM job requeued (its
    :obj:`SLURM_RESTART_COUNT` is set and not zero, as after Lightning's
    auto-requeue) whose run directory holds :obj:`checkpoints/last.ckpt`:
    the same command line then resumes the run instead of refusing to
    start it again.

    Args:
        config (dict): The validated configuration.
        env (mapping, optional): The environment (default:
            :obj:`os.environ`).
    """
    env = os.environ if env is None else env
    if env.get('SLURM_RESTART_COUNT', '0').strip() in ('', '0'):
        return False
    return (run_dir_of(config) / 'checkpoints' / 'last.ckpt').is_file()


class ResumedConfig(Callback):
    r"""On a resumed run, once Lightning has loaded the checkpoint (at
    :meth:`on_train_start`, global rank zero): records the changed settings
    in :obj:`run_dir/resumes.yaml` and rewrites :obj:`run_dir/config.yaml`.

    Args:
        config (dict): The validated configuration of the resumed run.
        run_dir (Path): The run directory.
    """
    def __init__(self, config: dict, run_dir: Path) -> None:
        self.config = config
        self.run_dir = Path(run_dir)

    def on_train_start(self, trainer, pl_module) -> None:
        if not trainer.is_global_zero:
            return
        changes = check_resume_config(self.config, self.run_dir)
        record = self.run_dir / RESUME_RECORD
        entries = []
        if record.is_file():
            entries = yaml.safe_load(record.read_text()) or []
        entries.append({'step': int(trainer.global_step), 'changes': {
            key: {'from': old, 'to': new}
            for key, (old, new) in changes.items()}})
        record.write_text(yaml.safe_dump(entries, sort_keys=False))
        dump_config(self.config, self.run_dir / 'config.yaml')
