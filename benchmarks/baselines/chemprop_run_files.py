r"""The files of a chemprop baseline run directory that
:func:`~benchmarks.baselines.chemprop_dmpnn.train_chemprop` writes besides
its metrics and results: the checkpoints, the test predictions as our runs
write them, and the paths it stores (none of the machine's)."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Optional, Union

import numpy as np
from lightning.pytorch.callbacks import ModelCheckpoint

from graphormer_sepnorm.data.molecule_splits import MoleculeSplit
from graphormer_sepnorm.training.checkpointing import LastCheckpoint

__all__ = ['checkpoint_callbacks', 'neutral_path', 'write_predictions']


def checkpoint_callbacks(folder: Path, monitor: str, higher_is_better: bool,
                         steps_per_epoch: int
                         ) -> tuple[ModelCheckpoint, LastCheckpoint]:
    r"""The run's two checkpoints in :obj:`folder`: ``best.ckpt``, the
    best-validation model, and ``last.ckpt``, the latest state, written at
    the end of every epoch (after the validation) so that a killed run
    continued with ``resume=True`` loses at most the epoch under way.

    Lightning 2.6's ``ModelCheckpoint(save_last=True)`` is not used for
    ``last.ckpt``: it rewrites that file only when the best model changes,
    so a crash would go back to the best epoch, not the latest one.

    Args:
        folder (Path): The run's ``checkpoints`` folder.
        monitor (str): The logged validation metric that selects the best.
        higher_is_better (bool): Whether a larger :obj:`monitor` is better.
        steps_per_epoch (int): Training batches per epoch.
    """
    best = ModelCheckpoint(dirpath=folder, filename='best', monitor=monitor,
                           mode='max' if higher_is_better else 'min',
                           save_top_k=1, auto_insert_metric_name=False,
                           enable_version_counter=False)
    # One save per epoch: the interval falls on an epoch's last batch,
    # which LastCheckpoint defers to after that epoch's validation. Its
    # runs resume from epoch ends only (not tested mid-epoch): no save on a
    # stop signal.
    return best, LastCheckpoint(folder / 'last.ckpt',
                                every_n_steps=steps_per_epoch,
                                stop_on_signals=False)


def neutral_path(path: Union[str, Path]) -> str:
    r"""A path to store in artefacts: as given if relative, else only its
    last component (no absolute paths of the machine that ran it).

    Args:
        path (str or Path): The path, as the caller gave it.
    """
    path = Path(path)
    return path.name if path.is_absolute() else path.as_posix()


def write_predictions(path: Path, part: MoleculeSplit,
                      predictions: np.ndarray,
                      target_names: Optional[list[str]] = None) -> None:
    r"""Writes ``id``, ``smiles``, then ``target`` and ``prediction`` (one
    task) or ``<task>`` and ``<task>_prediction`` per task, as our runs
    write them; a missing label is empty.

    Args:
        path (Path): The CSV file to write.
        part (MoleculeSplit): The split predicted: its ids, SMILES and
            targets (one column per task).
        predictions (np.ndarray): One prediction per molecule of
            :obj:`part` and task, in its order.
        target_names (list[str], optional): The tasks' names, for several
            tasks. (default: :obj:`None`, one task)
    """
    targets = part.targets.reshape(len(part), -1)
    predictions = predictions.reshape(len(part), -1)
    pairs = [('target', 'prediction')] if not target_names else \
        [(name, f'{name}_prediction') for name in target_names]
    with open(path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['id', 'smiles', *(c for pair in pairs
                                           for c in pair)])
        for i, smiles, labels, scores in zip(part.ids, part.smiles, targets,
                                             predictions):
            cells = [int(i), smiles]
            for y, p in zip(labels, scores):
                cells += ['' if y != y else repr(float(y)), repr(float(p))]
            writer.writerow(cells)
