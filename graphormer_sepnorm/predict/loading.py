r"""Predictors built from checkpoint files: one model, or the ensemble of
several, and the bundled models.

:meth:`Predictor.from_checkpoints` and :meth:`Predictor.from_bundled` are
defined here and added to :class:`~graphormer_sepnorm.predict.Predictor` on
import, because they may return an
:class:`~graphormer_sepnorm.predict.EnsemblePredictor`, a subclass of
:class:`~graphormer_sepnorm.predict.Predictor`: defined in
:mod:`~graphormer_sepnorm.predict.predictor`, they would make it import
:mod:`~graphormer_sepnorm.predict.ensemble`, which imports it. Importing
:mod:`graphormer_sepnorm.predict` (as any import of its modules does)
loads this module.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, Union

import torch

from ..bundled import bundled_model_paths, get_bundled_model
from ..checkpoint import CheckpointError, read_card
from .ensemble import EnsemblePredictor
from .prediction import PredictionError
from .predictor import Predictor

__all__ = ['from_checkpoints', 'from_bundled']

PathLike = Union[str, Path]


def from_checkpoints(cls: type, paths: Sequence[PathLike],
                     device: Union[str, torch.device] = 'cpu') -> Predictor:
    r"""Loads one checkpoint or an ensemble of several, each a file or
    a run directory as for :meth:`from_checkpoint`.

    One path gives the same :class:`Predictor` as
    :meth:`from_checkpoint`; several give an
    :class:`~graphormer_sepnorm.predict.EnsemblePredictor` that averages
    their predictions and reports their spread.

    Args:
        paths (list of str or Path): The checkpoints, at least one, each
            once.
        device (str or torch.device, optional): Where the models run.
            (default: :obj:`"cpu"`)

    Raises:
        CheckpointError: If a checkpoint cannot be loaded, or several
            do not fit together (see
            :class:`~graphormer_sepnorm.predict.EnsemblePredictor`).
    """
    if isinstance(paths, (str, Path)):
        raise PredictionError(
            "from_checkpoints() takes a list of checkpoints; wrap a "
            "single path in a list or use from_checkpoint()")
    if not paths:
        raise PredictionError('Give at least one checkpoint')
    # Members are single models, whichever class this is called on.
    members = [Predictor.from_checkpoint(path, device) for path in paths]
    return members[0] if len(members) == 1 else EnsemblePredictor(members)


def from_bundled(cls: type, name: str,
                 device: Union[str, torch.device] = 'cpu',
                 directory: Optional[PathLike] = None) -> Predictor:
    r"""Loads a bundled model, :obj:`"zinc"` (penalized logP) or
    :obj:`"molhiv"` (probability of HIV activity); see
    :mod:`graphormer_sepnorm.bundled`. A model of several members (one
    per training seed) loads as their ensemble, as
    :meth:`from_checkpoints` does.

    Args:
        name (str): The registered name.
        device (str or torch.device, optional): Where the models run.
            (default: :obj:`"cpu"`)
        directory (str or Path, optional): Folder of the member files
            instead of the installed one (see
            :func:`~graphormer_sepnorm.bundled.bundled_dir`).
            (default: :obj:`None`)

    Raises:
        ValueError: If :obj:`name` is not a registered model.
        BundledModelNotInstalled: If none of its members is installed
            (the message says how to train and bundle one).
        CheckpointError: If a member's card does not name the
            registered featurizer and task.
    """
    entry = get_bundled_model(name)
    paths = bundled_model_paths(entry.name, directory)
    # Checked from the cards alone, before any weights are loaded.
    for path in paths:
        card, _ = read_card(path)
        if (card.featurizer.strip().lower() != entry.featurizer
                or card.task != entry.task):
            raise CheckpointError(
                f"{path} is installed as a member of the bundled "
                f"'{entry.name}' model but its card says "
                f"featurizer={card.featurizer!r}, task={card.task!r} "
                f"(expected {entry.featurizer!r}, {entry.task!r}); "
                f"replace it with the right checkpoint")
    return cls.from_checkpoints(paths, device=device)


Predictor.from_checkpoints = classmethod(from_checkpoints)
Predictor.from_bundled = classmethod(from_bundled)
