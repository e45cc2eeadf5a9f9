r"""Fine-tuning from a pretrained backbone: the config key
:obj:`model.init_from`.

A training run with :obj:`model.init_from` set starts from the encoder of
another model instead of a random one: every parameter and buffer (batch-norm
running statistics included) except the prediction head
(:data:`HEAD_MODULES`) is copied from the file, and the head keeps the fresh
initialization drawn from the run's seed (the task, and so the number of
outputs, usually differs). The file is any checkpoint written by
:func:`~graphormer_sepnorm.checkpoint.save_model`: a pretrained backbone
(task :data:`~graphormer_sepnorm.checkpoint.BACKBONE_TASK`) or a trained
model. It is read with safetensors only; nothing is unpickled.

The value is a :obj:`.safetensors` file, a training run directory (its
:obj:`model.safetensors`), or :obj:`bundled:<name>`, a backbone shipped in
the package (:data:`~graphormer_sepnorm.bundled.BUNDLED_BACKBONES`).
Relative paths are relative to the working directory.

The run's encoder must be the backbone's: the featurizer and every model
argument must match except those in :data:`FREE_KEYS` (the dropouts, which
fine-tuning may change, and settings that change neither parameters nor
results); a mismatch is one :class:`~.config.ConfigError` line naming both
values. Initialization happens once, at the start of a fresh run: a resumed
run continues from its own checkpoint. The run records where it started in
:obj:`init_from.json` (:data:`RECORD_FILE`), which
:func:`~graphormer_sepnorm.training.run_results.finalize_run` copies into
:obj:`results.json` and the model card (:obj:`extra["init_from"]`).
"""
from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Any, Optional

import torch

# The registry of the files shipped in bundled/ (its __init__) and nothing
# else of bundled: the registry imports nothing of training, unlike the
# tools beside it that bundle training runs.
from ..bundled import bundled_backbone_path
from ..checkpoint import (BACKBONE_TASK, CheckpointError, ModelCard,
                          load_model, resolve_model_file)
from ..forest import FOREST_MODULE
from .config import MODEL_KEYS_FROM_DATA, ConfigError

__all__ = ['HEAD_MODULES', 'FREE_KEYS', 'FRESH_IF_ABSENT', 'SHRINKABLE_KEYS',
           'BUNDLED_PREFIX',
           'RECORD_FILE', 'BACKBONE_FILE',
           'resolve_init_from', 'encoder_state', 'check_compatible',
           'load_encoder', 'initialize_from', 'read_record']

#: The modules of :class:`~graphormer_sepnorm.GraphormerSepNorm` that make
#: the prediction head (on the graph token); everything else is the encoder.
HEAD_MODULES = ('head_transform', 'head_norm', 'head')

#: Model arguments a run may set differently from the model it starts from:
#: the outputs (read by the fresh head), the dropouts (fine-tuning may
#: regularize differently) and the largest graph accepted (a size check, no
#: parameter). model.attention_buckets, a runtime setting, is in neither
#: model's config, so it may differ too (same results, another padding).
FREE_KEYS = ('out_channels', 'dropout', 'attention_dropout',
             'activation_dropout', 'max_nodes', 'graph_feature_channels')

#: Modules of the encoder that start fresh when the model started from lacks
#: them or has them in another size: the projection of the molecule
#: features (model.graph_feature_channels), so that a run with features
#: fine-tunes a backbone pretrained without them.
FRESH_IF_ABSENT = ('graph_feature_encoder', )

#: Model arguments a run may set *lower* than its backbone, mapped to the
#: parameter whose first entries it then takes: each hop of the multi-hop
#: edge encoding has its own matrix, so a run with
#: :obj:`multi_hop_max_dist` :math:`k` starts from the backbone's first
#: :math:`k` (one backbone serves ZINC's recipe, 20 hops, and MolHIV's, 5).
SHRINKABLE_KEYS = {'multi_hop_max_dist': 'attention_bias.hop_weight'}

#: Prefix of a bundled backbone's name in :obj:`model.init_from`.
BUNDLED_PREFIX = 'bundled:'

#: The file a pretraining run directory holds its backbone in
#: (``scripts/pretrain.py``).
BACKBONE_FILE = 'backbone.safetensors'

#: The file in the run directory that records the initialization.
RECORD_FILE = 'init_from.json'

KEY = 'model.init_from'


def resolve_init_from(value: str) -> Path:
    r"""The checkpoint file that a :obj:`model.init_from` value names: a
    :obj:`.safetensors` file, a training run directory (its
    :obj:`model.safetensors`), a pretraining run directory (its
    :obj:`backbone.safetensors`), or :obj:`bundled:<name>`.

    Raises:
        ConfigError: If there is no such file, run directory or bundled
            backbone.
    """
    try:
        if value.startswith(BUNDLED_PREFIX):
            return bundled_backbone_path(value[len(BUNDLED_PREFIX):].strip())
        if not Path(value).exists() or not value.strip():
            raise CheckpointError(
                f"{value!r} does not exist (relative paths are relative to "
                f"the working directory, {Path.cwd()}); pass a backbone "
                f".safetensors file, a run directory or bundled:<name>")
        backbone = Path(value) / BACKBONE_FILE
        if Path(value).is_dir() and backbone.is_file() and \
                not (Path(value) / 'model.safetensors').is_file():
            return backbone  # a pretraining run directory
        return resolve_model_file(value)
    except CheckpointError as error:
        raise ConfigError(f"{KEY}: {error}") from None


def encoder_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    r"""The state dict of :obj:`model` without the prediction head, and
    without the forest blended with its outputs, if it has one
    (:mod:`graphormer_sepnorm.forest`): neither is the encoder."""
    return {name: tensor for name, tensor in model.state_dict().items()
            if name.split('.', 1)[0] not in (*HEAD_MODULES, FOREST_MODULE)}


def check_compatible(backbone_config: dict[str, Any],
                     backbone_featurizer: str, config: dict[str, Any],
                     featurizer: str, source: str) -> None:
    r"""Raises a one-line :class:`ConfigError` unless a model built from
    :obj:`config` (complete model arguments, as
    :attr:`GraphormerSepNorm.config`) on :obj:`featurizer` graphs has the
    encoder of :obj:`backbone_config` on :obj:`backbone_featurizer` graphs
    (all but :data:`FREE_KEYS` equal)."""
    what = f"{KEY}: the backbone {source}"
    if backbone_featurizer.strip().lower() != featurizer:
        raise ConfigError(
            f"{what} was trained on graphs of featurizer "
            f"{backbone_featurizer!r} but this config's data uses featurizer "
            f"{featurizer!r}; use a CSV dataset with data.featurizer: "
            f"{backbone_featurizer} or a backbone trained with featurizer "
            f"{featurizer!r}")
    differ = [key for key in sorted(set(backbone_config) | set(config))
              if key not in FREE_KEYS
              and backbone_config.get(key) != config.get(key)
              and not _shrinks(key, backbone_config, config)]
    from_data = [key for key in differ if key in MODEL_KEYS_FROM_DATA]
    if from_data:
        raise ConfigError(
            f"{what} has {_pairs(backbone_config, from_data)} but this "
            f"config's data (featurizer {featurizer!r}) gives "
            f"{_pairs(config, from_data)}; the backbone was written with "
            f"another vocabulary of that featurizer (another "
            f"graphormer-sepnorm version): use another backbone")
    if differ:
        raise ConfigError(
            f"{what} has {_pairs(backbone_config, differ)} but this config "
            f"has {_pairs(config, differ, 'model.')}; use a config that "
            f"matches the backbone "
            f"({_pairs(backbone_config, differ, 'model.', ': ')}) or another "
            f"backbone")


def _shrinks(key: str, backbone_config: dict, config: dict) -> bool:
    # A run may take the first entries of a SHRINKABLE_KEYS parameter.
    return (key in SHRINKABLE_KEYS
            and isinstance(config.get(key), int)
            and isinstance(backbone_config.get(key), int)
            and config[key] < backbone_config[key])


def _pairs(config: dict, keys: list[str], prefix: str = '',
           sep: str = '=') -> str:
    return ', '.join(f"{prefix}{key}{sep}{_yaml(config.get(key))}"
                     for key in keys)


def _yaml(value: Any) -> str:
    # As the value is written in a config file.
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def load_encoder(model: torch.nn.Module, backbone: torch.nn.Module
                 ) -> list[str]:
    r"""Copies every parameter and buffer of :obj:`backbone` into
    :obj:`model` except the prediction head (:data:`HEAD_MODULES`); the
    encoders must have the same layout (see :func:`check_compatible`), but
    for the leading entries of the :data:`SHRINKABLE_KEYS` parameters and
    the :data:`FRESH_IF_ABSENT` modules, which keep their fresh
    initialization unless both models have them in the same size.

    Returns:
        The :data:`FRESH_IF_ABSENT` modules of :obj:`model` that start
        fresh.
    """
    state = encoder_state(backbone)
    target = encoder_state(model)
    fresh = []
    for module in FRESH_IF_ABSENT:
        ours = {n: t.shape for n, t in target.items()
                if n.split('.', 1)[0] == module}
        theirs = {n: t.shape for n, t in state.items()
                  if n.split('.', 1)[0] == module}
        if ours != theirs:
            state = {n: t for n, t in state.items() if n not in theirs}
            target = {n: t for n, t in target.items() if n not in ours}
            if ours:
                fresh.append(module)
    for key, name in SHRINKABLE_KEYS.items():
        if name in state and name in target and \
                _shrinks(key, backbone.config, model.config):
            state[name] = state[name][:target[name].shape[0]]
    wrong = [name for name in state.keys() | target.keys()
             if name not in state or name not in target
             or state[name].shape != target[name].shape]
    if wrong:  # initialize_from checks the configurations first
        raise ConfigError(f"{KEY}: the backbone's encoder does not fit this "
                          f"model's (e.g. {sorted(wrong)[:3]} differ); their "
                          f"configurations differ, see check_compatible")
    with torch.no_grad():
        for name, tensor in state.items():
            target[name].copy_(tensor)
    return fresh


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def _record(value: str, path: Path, card: ModelCard) -> dict[str, Any]:
    backbone = card.task == BACKBONE_TASK
    return {
        'source': value,
        'file': path.name,
        'sha256': _sha256(path),
        'task': card.task,
        'dataset': card.dataset,
        # A backbone's card extra describes its pretraining.
        'pretraining': dict(card.extra) if backbone else None,
        # Where that model itself started, if it was fine-tuned.
        'init_from': card.extra.get('init_from'),
    }


def initialize_from(model: torch.nn.Module, config: dict, run_dir: Path,
                    resume: bool) -> Optional[dict[str, Any]]:
    r"""Applies :obj:`model.init_from` of :obj:`config` to :obj:`model`
    (just built with the run's seed) at the start of a fresh run, and
    records it in :obj:`run_dir/init_from.json` (global rank 0).

    A resumed run is left alone (its checkpoint's weights are loaded
    later); a fresh run without :obj:`model.init_from` removes a record
    left by an earlier attempt in the same directory.

    Returns:
        The record (file name, SHA-256, task, dataset, the backbone's
        pretraining description and, if any, :obj:`fresh_modules`: the
        :data:`FRESH_IF_ABSENT` modules that start fresh), or :obj:`None`
        if nothing was loaded.

    Raises:
        ConfigError: If the file cannot be found or read (a training
            checkpoint is never unpickled), or its encoder does not match
            the configuration (see :func:`check_compatible`).
    """
    from lightning.pytorch.utilities.rank_zero import rank_zero_only

    from ..data.datasets import data_info

    value = config['model']['init_from']
    record_file = Path(run_dir) / RECORD_FILE
    if resume:
        recorded = read_record(run_dir)
        if value is not None and (recorded or {}).get('source') != value:
            warnings.warn(f"{KEY}={value} is ignored: the resumed run "
                          f"continues from its checkpoint", UserWarning,
                          stacklevel=2)
        return None
    is_rank_zero = getattr(rank_zero_only, 'rank', 0) == 0
    if value is None:
        if is_rank_zero:
            record_file.unlink(missing_ok=True)
        return None
    path = resolve_init_from(value)
    try:
        # Building the backbone draws random numbers: the run (dropout,
        # shuffling) draws the same ones as without init_from.
        with torch.random.fork_rng(devices=[]):
            backbone, card = load_model(path)
    except CheckpointError as error:
        raise ConfigError(f"{KEY}: {error}") from None
    source = value if str(path) == value else f"{value} ({path})"
    check_compatible(backbone.config, card.featurizer, model.config,
                     data_info(config['data']).featurizer, source)
    fresh = load_encoder(model, backbone)
    record = _record(value, path, card)
    if fresh:
        record['fresh_modules'] = fresh
    if is_rank_zero:
        if fresh:
            from .console import notice
            notice(f"{KEY}: {source} has no molecule-feature projection of "
                   f"this run's size (model.graph_feature_channels="
                   f"{model.config.get('graph_feature_channels')}), so "
                   f"{', '.join(fresh)} starts fresh (recorded as "
                   f"fresh_modules in init_from.json and the model card)")
        record_file.parent.mkdir(parents=True, exist_ok=True)
        record_file.write_text(json.dumps(record, indent=2))
    return record


def read_record(run_dir: Path) -> Optional[dict[str, Any]]:
    r"""The initialization record of a run (:func:`initialize_from`), or
    :obj:`None` if the run started from a random initialization."""
    path = Path(run_dir) / RECORD_FILE
    return json.loads(path.read_text()) if path.is_file() else None
