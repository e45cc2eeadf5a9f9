r"""Registry of the trained models that ship inside the package.

A bundled model is one or more checkpoints, its *members*, written by
:func:`graphormer_sepnorm.checkpoint.save_model` into this folder as
``<name>_seed<seed>.safetensors`` (``setup.cfg`` installs
``bundled/*.safetensors`` as package data): one member is one model, several
are an ensemble, one per training seed. A *single* model
(:attr:`BundledModel.single_of`) is the member of another's ensemble with
the best validation score in its model card: faster, without the
ensemble's uncertainty. ``scripts/bundle_model.py``
(:func:`benchmarks.bundling.build.bundle_runs`) writes them from
training run directories, stored as float16, with a model card saying what
each member is and what it scores. Nothing else needs to change: a registered
model with at least one member file is available to
:meth:`graphormer_sepnorm.predict.Predictor.from_bundled` and to
``scripts/predict.py --model NAME``; one without raises
:class:`BundledModelNotInstalled`, which says how to train and bundle it.

The folder also holds pretrained *backbones* (:data:`BUNDLED_BACKBONES`):
encoders that initialize a training run through the config key
``model.init_from: bundled:<name>`` (see
:mod:`graphormer_sepnorm.training.init_from`); they are not predictors.

The folder searched can be overridden with the environment variable
``GRAPHORMER_SEPNORM_BUNDLED_DIR`` (or the :obj:`directory` arguments below),
for example to use models kept outside the installation.
"""
import os
import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Union

from ..errors import CheckpointError

__all__ = ['BundledModel', 'BUNDLED_MODELS', 'BundledModelNotInstalled',
           'bundled_dir', 'member_filename', 'member_paths',
           'bundled_model_paths', 'get_bundled_model',
           'available_bundled_models', 'BUNDLED_BACKBONES',
           'bundled_backbone_path']

#: Environment variable that replaces this folder as the place searched.
ENV_VAR = 'GRAPHORMER_SEPNORM_BUNDLED_DIR'


@dataclass(frozen=True)
class BundledModel:
    r"""One registered model.

    Args:
        name (str): Name used by :obj:`--model` and
            :meth:`~graphormer_sepnorm.predict.Predictor.from_bundled`; its
            members are the files ``<name>_seed<seed>.safetensors``.
        dataset (str): The dataset (config key :obj:`data.name`) its members
            are trained on.
        featurizer (str): Featurizer its model cards must name.
        task (str): Task its model cards must name.
        description (str): What it predicts, for help texts.
        train_config (str): Training configuration that produces it.
        train_overrides (tuple[str, ...], optional): The ``key=value``
            overrides its members were trained with on top of
            :obj:`train_config` (their cards' protocol records them).
            (default: :obj:`()`)
        single_of (str, optional): The bundled ensemble whose
            best-validation member this model is (it has no files of its
            own). (default: :obj:`None`)
    """
    name: str
    dataset: str
    featurizer: str
    task: str
    description: str
    train_config: str
    train_overrides: tuple[str, ...] = ()
    single_of: Optional[str] = None

    @property
    def train_command(self) -> str:
        r"""The command line that trains one member (shell-quoted)."""
        return shlex.join(['python', 'scripts/train.py', '--config',
                           self.train_config, *self.train_overrides])

    @property
    def files_name(self) -> str:
        r"""The name its member files carry."""
        return self.single_of or self.name


def _single(ensemble: BundledModel, predicts: str) -> BundledModel:
    r"""The entry of :obj:`ensemble`'s best-validation member alone: the
    ensemble's data, featurizer, task and config, under
    ``<name>-single``."""
    return replace(ensemble, name=f'{ensemble.name}-single',
                   description=f"{predicts}: the {ensemble.name} ensemble's "
                   f"best-validation member alone", single_of=ensemble.name)


_ZINC = BundledModel(
    name='zinc', dataset='zinc_subset', featurizer='ogb', task='regression',
    description='penalized logP (ZINC subset, regression, in the units of '
    'the dataset; seed ensemble)',
    train_config='configs/cpu/zinc_subset_smiles_pretrained_long_sepnorm.yaml')
_MOLHIV = BundledModel(
    name='molhiv', dataset='molhiv', featurizer='ogb', task='binary',
    description='probability of HIV replication inhibition (ogbg-molhiv, '
    'binary; seed ensemble)',
    train_config='configs/cpu/molhiv_pretrained_sepnorm.yaml',
    train_overrides=('model.init_from=bundled:pretrained-sepnorm',
                     'data.molecule_features=[morgan]',
                     'optim.layer_lr_decay=0.8', 'optim.ema_decay=0.999'))

#: The registered bundled models, by name. Each ensemble is the seed
#: ensemble of the model family with the best mean validation score over
#: seeds (``benchmarks/analysis/bundle_choice.py``, scripts/README.md).
BUNDLED_MODELS: dict[str, BundledModel] = {
    entry.name: entry for entry in (
        _ZINC, _single(_ZINC, 'penalized logP'),
        _MOLHIV, _single(_MOLHIV, 'probability of HIV replication '
                         'inhibition'))}


#: The pretrained backbones shipped in this folder: name -> file name (a
#: checkpoint with task ``'pretraining'``), for ``model.init_from:
#: bundled:<name>``.
BUNDLED_BACKBONES: dict[str, str] = {
    # SepNorm, Graphormer-slim (12 x 80, OGB features), pretrained without
    # labels on MOSES for 60,000 steps (configs/pretrain/cpu_sepnorm_long.yaml;
    # benchmarks/analysis/backbone_choice.py chose it over the 6,000-step
    # one on validation); its card holds the corpus counts, the objectives
    # and the budget.
    'pretrained-sepnorm': 'pretrained_sepnorm.safetensors',
}


class BundledModelNotInstalled(CheckpointError):
    r"""A registered bundled model without any member file installed."""


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


def member_filename(name: str, seed: Union[int, str]) -> str:
    r"""File name of the member of bundled model :obj:`name` trained with
    :obj:`seed`."""
    return f'{name}_seed{seed}.safetensors'


def member_paths(name: str, folder: Path) -> list[Path]:
    r"""The member files of :obj:`name` in :obj:`folder`, ordered by seed;
    empty if there are none (unlike :func:`bundled_model_paths`, which
    checks the name and raises)."""
    pattern = re.compile(
        rf'{re.escape(name)}_seed(0|[1-9]\d*)\.safetensors')
    seeds = {}
    if folder.is_dir():
        for path in folder.iterdir():
            match = pattern.fullmatch(path.name)
            if match and path.is_file():
                seeds[int(match.group(1))] = path
    return [seeds[seed] for seed in sorted(seeds)]


def bundled_model_paths(name: str,
                        directory: Optional[Union[str, Path]] = None
                        ) -> list[Path]:
    r"""The member files of the bundled model :obj:`name`
    (``<name>_seed<seed>.safetensors``), ordered by seed: one for a single
    model, several for an ensemble. For a single model
    (:attr:`BundledModel.single_of`), the one member of its ensemble with
    the best validation score in its model card.

    Raises:
        ValueError: If :obj:`name` is not registered.
        BundledModelNotInstalled: If there is no member file (the message
            says how to train and bundle the model).
    """
    entry = get_bundled_model(name)
    folder = bundled_dir(directory)
    paths = member_paths(entry.files_name, folder)
    if not paths:
        raise BundledModelNotInstalled(
            f"No bundled '{entry.name}' model is installed yet (no "
            f"{member_filename(entry.files_name, '<seed>')} in "
            f"{folder}). Train one with `{entry.train_command}`, then "
            f"predict "
            f"with `--checkpoint runs/<run>/model.safetensors`, or bundle it "
            f"with `python scripts/bundle_model.py {entry.files_name} "
            f"runs/<run>` to make `--model {entry.name}` work")
    if entry.single_of is not None:
        return [max(paths, key=_validation_rank)]
    return paths


def _validation_rank(path: Path) -> float:
    r"""A member's validation score in its model card, oriented so that
    larger is better (an error is negated)."""
    from ..checkpoint import read_card
    card, _ = read_card(path)
    val = card.extra.get('evaluation', {}).get('val')
    if not isinstance(val, dict):
        raise CheckpointError(
            f"{path} has no validation score in its model card, so the best "
            f"member cannot be chosen; bundle it again with "
            f"scripts/bundle_model.py")
    lower_is_better = val['metric'] in _ERROR_METRICS
    return -val['value'] if lower_is_better else val['value']


#: Card metrics where lower is better (the errors of
#: ``training/metrics.py``, which this registry does not import).
_ERROR_METRICS = ('mae', 'rmse', 'std_mae', 'std_rmse')


def available_bundled_models(
        directory: Optional[Union[str, Path]] = None) -> list[str]:
    r"""Names of the registered models with at least one member file."""
    folder = bundled_dir(directory)
    return [name for name, entry in BUNDLED_MODELS.items()
            if member_paths(entry.files_name, folder)]


def bundled_backbone_path(name: str,
                          directory: Optional[Union[str, Path]] = None
                          ) -> Path:
    r"""The file of the bundled backbone :obj:`name`
    (:data:`BUNDLED_BACKBONES`) in :func:`bundled_dir`.

    Raises:
        CheckpointError: If :obj:`name` is not registered (the message lists
            the registered names) or its file is not installed.
    """
    if name not in BUNDLED_BACKBONES:
        known = ', '.join(sorted(BUNDLED_BACKBONES)) or 'none yet'
        raise CheckpointError(
            f"Unknown bundled backbone {name!r}; bundled backbones: {known} "
            f"(or pass the path of a backbone file or of a run directory)")
    path = bundled_dir(directory) / BUNDLED_BACKBONES[name]
    if not path.is_file():
        raise BundledModelNotInstalled(
            f"The bundled backbone {name!r} is registered but its file "
            f"{path} is not installed; reinstall graphormer-sepnorm or pass "
            f"the path of the backbone file")
    return path
