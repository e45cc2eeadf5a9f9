r"""Checks made before any training work, so that a bad path, run directory
or checkpoint ends in one ``error: ...`` line (exit status 2 from
``scripts/train.py``) instead of a traceback after the data is loaded."""
from __future__ import annotations

import pickle
import tempfile
import warnings
from pathlib import Path
from typing import Union

import torch

from ..data.datasets import RawFilesMismatchError, check_raw_files
from .config import ConfigError, run_dir_of

__all__ = ['RunDirError', 'check_run_dir', 'check_writable_folder',
           'check_resumable', 'check_resume', 'check_before_training']

PathLike = Union[str, Path]

#: What a checkpoint written by train.py holds (Lightning's keys and ours).
TRAINING_CHECKPOINT_KEYS = ('state_dict', 'loops', 'optimizer_states',
                            'graphormer_sepnorm')


class RunDirError(ConfigError):
    r"""The run directory does not fit the request (exists without
    --resume, or has nothing to resume)."""


def check_run_dir(config: dict, resume: bool) -> Path:
    r"""The run directory: a fresh run refuses a directory that already
    holds checkpoints; a resume needs ``checkpoints/last.ckpt``."""
    run_dir = run_dir_of(config)
    last = run_dir / 'checkpoints' / 'last.ckpt'
    if resume and not last.is_file():
        raise RunDirError(
            f"Nothing to resume: {last} does not exist; start the run "
            f"without --resume, or pass the run directory that holds "
            f"checkpoints/last.ckpt")
    if not resume and last.is_file() and _is_rank_zero():
        raise RunDirError(
            f"Run directory {run_dir} already holds checkpoints; continue it "
            f"with --resume, or choose another run_name=... / output_dir=...")
    return run_dir


def _is_rank_zero() -> bool:
    from lightning.pytorch.utilities.rank_zero import rank_zero_only
    return getattr(rank_zero_only, 'rank', 0) == 0


def check_writable_folder(key: str, folder: PathLike) -> None:
    r"""Checks that :obj:`folder` is, or can be created as, a folder that
    takes new entries, by creating and removing a temporary folder in it or
    in its nearest existing parent (nothing is left behind; a permission
    check alone would pass for root, and ``/proc`` lets no one create
    anything). Raises :class:`ConfigError` naming the config :obj:`key`."""
    folder = Path(folder)
    existing = folder
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        reason = f"{existing} is a file"
    else:
        try:
            tempfile.TemporaryDirectory(dir=existing).cleanup()
            return
        except OSError as error:
            reason = (f"creating a folder in {existing} fails: "
                      f"{error.strerror or type(error).__name__}")
    raise ConfigError(
        f"'{key}' must be a writable folder, but {folder} cannot be created "
        f"or written ({reason}); set {key}=<a writable folder>")


def check_resumable(path: PathLike) -> None:
    r"""Checks that :obj:`path` loads with :obj:`weights_only=True` (tensors
    and plain values only: nothing in the file can run) and holds what
    train.py writes; raises :class:`RunDirError` otherwise."""
    path = Path(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # torch warns on odd pickles
            state = torch.load(path, map_location='cpu', weights_only=True)
    except pickle.UnpicklingError:
        reason = ('the safe loader (torch.load with weights_only=True, '
                  'tensors and plain values only) refused it, so it was '
                  'not unpickled and nothing in it ran')
    except Exception as error:  # truncated, empty, not a torch file, ...
        reason = (f"it is not a complete torch checkpoint "
                  f"({type(error).__name__}); it was not unpickled")
    else:
        missing = [key for key in TRAINING_CHECKPOINT_KEYS
                   if not isinstance(state, dict) or key not in state]
        if not missing:
            return
        reason = (f"it loads (safely, with weights_only=True) but lacks "
                  f"{', '.join(repr(k) for k in missing)}, so train.py did "
                  f"not write it")
    raise RunDirError(
        f"--resume: {path} is not a loadable training checkpoint: {reason}. "
        f"Remove it and start the run again without --resume (or under "
        f"another run_name=...), or put back the last.ckpt that train.py "
        f"wrote")


def check_resume(config: dict, resume: bool) -> Path:
    r"""The run directory (:func:`check_run_dir`) and, with :obj:`resume`,
    the checkpoint to resume (:func:`check_resumable`) and the settings
    changed since the run started
    (:func:`~graphormer_sepnorm.training.resuming.check_resume_config`);
    nothing is written."""
    from .resuming import check_resume_config
    run_dir = check_run_dir(config, resume)
    if resume:
        check_resumable(run_dir / 'checkpoints' / 'last.ckpt')
        check_resume_config(config, run_dir)
    return run_dir


def check_before_training(config: dict, resume: bool) -> Path:
    r"""Everything about :obj:`config`'s paths that can be checked before
    any work, cheapest first: the run directory and what a resume
    changes (:func:`check_resume`), that
    :obj:`output_dir` and :obj:`data.root` are writable folders, and that
    the raw files already under :obj:`data.root` match
    :obj:`data.raw_source`
    (:func:`~graphormer_sepnorm.data.datasets.check_raw_files`). Returns the
    run directory; raises :class:`ConfigError`."""
    run_dir = check_resume(config, resume)
    check_writable_folder('output_dir', config['output_dir'])
    data = config['data']
    check_writable_folder('data.root', data['root'])
    try:
        check_raw_files(data['name'], data['root'], data['raw_source'])
    except RawFilesMismatchError as error:
        raise ConfigError(f"'data.root': {error}") from None
    return run_dir
