r"""Registry of the trained models that can ship inside the package.

A bundled model is a checkpoint written by
:func:`graphormer_sepnorm.checkpoint.save_model` and dropped into this folder
under the file name registered below (``setup.cfg`` installs
``bundled/*.safetensors`` as package data). Nothing else needs to change: a
registered model whose file is present is available to
:meth:`graphormer_sepnorm.predict.Predictor.from_bundled` and to
``scripts/predict.py --model NAME``; one whose file is absent raises
:class:`BundledModelNotInstalled`, which says how to train it.

The folder searched can be overridden with the environment variable
``GRAPHORMER_SEPNORM_BUNDLED_DIR`` (or the :obj:`directory` arguments below),
for example to use models kept outside the installation.
"""
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from ..checkpoint import CheckpointError

__all__ = ['BundledModel', 'BUNDLED_MODELS', 'BundledModelNotInstalled',
           'bundled_dir', 'bundled_model_path', 'get_bundled_model',
           'available_bundled_models']

#: Environment variable that replaces this folder as the place searched.
ENV_VAR = 'GRAPHORMER_SEPNORM_BUNDLED_DIR'


@dataclass(frozen=True)
class BundledModel:
    r"""One registered model.

    Args:
        name (str): Name used by :obj:`--model` and
            :meth:`~graphormer_sepnorm.predict.Predictor.from_bundled`.
        filename (str): File name of the checkpoint in the bundled folder.
        featurizer (str): Featurizer its model card must name.
        task (str): Task its model card must name.
        description (str): What it predicts, for help texts.
        train_config (str): Training configuration that produces it.
    """
    name: str
    filename: str
    featurizer: str
    task: str
    description: str
    train_config: str


#: The registered bundled models, by name.
BUNDLED_MODELS: dict[str, BundledModel] = {
    'zinc': BundledModel(
        name='zinc', filename='zinc_subset_sepnorm.safetensors',
        featurizer='zinc', task='regression',
        description='penalized logP (ZINC subset, regression, in the units '
        'of the dataset)', train_config='configs/zinc_subset_sepnorm.yaml'),
    'molhiv': BundledModel(
        name='molhiv', filename='molhiv_sepnorm.safetensors',
        featurizer='ogb', task='binary',
        description='probability of HIV replication inhibition '
        '(ogbg-molhiv, binary)', train_config='configs/molhiv_sepnorm.yaml'),
}


class BundledModelNotInstalled(CheckpointError):
    r"""A registered bundled model whose checkpoint file is not installed."""


def bundled_dir(directory: Optional[Union[str, Path]] = None) -> Path:
    r"""The folder searched for bundled checkpoints: :obj:`directory` if
    given, else ``$GRAPHORMER_SEPNORM_BUNDLED_DIR`` if set, else this
    package folder."""
    if directory is not None:
        return Path(directory)
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else Path(__file__).resolve().parent


def get_bundled_model(name: str) -> BundledModel:
    r"""The registry entry of :obj:`name` (case-insensitive); a
    :class:`ValueError` naming the valid names otherwise."""
    key = name.strip().lower() if isinstance(name, str) else name
    if key not in BUNDLED_MODELS:
        raise ValueError(f"Unknown bundled model {name!r}; valid names: "
                         f"{', '.join(sorted(BUNDLED_MODELS))}")
    return BUNDLED_MODELS[key]


def bundled_model_path(name: str,
                       directory: Optional[Union[str, Path]] = None) -> Path:
    r"""Path of the installed checkpoint of the bundled model :obj:`name`.

    Raises:
        ValueError: If :obj:`name` is not registered.
        BundledModelNotInstalled: If its file is not there (the message says
            how to train the model and use it).
    """
    entry = get_bundled_model(name)
    path = bundled_dir(directory) / entry.filename
    if not path.is_file():
        raise BundledModelNotInstalled(
            f"No bundled '{entry.name}' model is installed yet (expected "
            f"{path}). Train one with `python scripts/train.py --config "
            f"{entry.train_config}`, then predict with `--checkpoint "
            f"runs/<run>/model.safetensors` (or copy that file to {path} to "
            f"make `--model {entry.name}` work)")
    return path


def available_bundled_models(
        directory: Optional[Union[str, Path]] = None) -> list[str]:
    r"""Names of the registered models whose checkpoint file is present."""
    folder = bundled_dir(directory)
    return [name for name, entry in BUNDLED_MODELS.items()
            if (folder / entry.filename).is_file()]
