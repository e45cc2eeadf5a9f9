r"""Which method a run is, for the tables that set methods side by side
(the backbone reach, best from SMILES): trained from scratch, fine-tuned
from the pretrained backbone, or chemprop's D-MPNN, each followed by the
molecule features its model reads beside the graph, so that a run with
molecule features never mixes with the plain runs of its method.

A method is a string: :obj:`"scratch"`, :obj:`"fine-tuned"` or
:obj:`"chemprop"` (the plain methods, :data:`PLAIN`), then
:obj:`" + NAME"` per molecule feature (*e.g.* :obj:`"fine-tuned +
rdkit2d"`, :obj:`"chemprop + rdkit_2d"`). A run fine-tuned from a backbone
pretrained without some of its objectives (the ablation's masked-atoms-only
backbone) is :obj:`"fine-tuned (without descriptors)"`, one fine-tuned
from a backbone pretrained for another number of steps than the bundled one
(the longer backbones) is :obj:`"fine-tuned (60,000-step backbone)"`, one
fine-tuned with layer-wise learning-rate decay (``optim.layer_lr_decay``
below 1 in its ``config.yaml``) is :obj:`"fine-tuned (layer-wise
learning-rate decay 0.8)"`, one validated on an exponential moving average
of its weights (``optim.ema_decay``) :obj:`"fine-tuned (weight EMA
0.999)"`, one blended with a forest (``model.forest_trees``)
:obj:`"fine-tuned (50-tree forest)"` (the qualifiers comma-separated, in
this order, where several hold; from scratch, :obj:`"scratch (50-tree
forest)"`), and one initialized from a trained model rather than a
pretraining backbone is :obj:`"fine-tuned (from a trained model)"`:
methods of their own too.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Optional

import yaml

#: The model family chemprop's runs record (``benchmarks/baselines/``).
CHEMPROP = 'chemprop D-MPNN'

#: The methods without molecule features or another backbone, in table
#: order.
PLAIN = ('scratch', 'fine-tuned', 'chemprop')


def molecule_features_of(run: dict) -> list[str]:
    r"""The molecule features a run's model reads beside the graph, in the
    order of its :obj:`results.json`: chemprop's
    :obj:`molecule_featurizers` (``--molecule-featurizers``), or our
    :obj:`molecule_features` record (``data.molecule_features``: its
    :obj:`featurizers`, then its :obj:`feature_columns`); empty for none.

    Args:
        run (dict): A run's :obj:`results.json`, as
            :func:`~benchmarks.analysis.runs.load_runs` reads it.
    """
    if run.get('model_family'):
        return list(run.get('molecule_featurizers') or [])
    features = run.get('molecule_features') or {}
    return [*features.get('featurizers', []),
            *features.get('feature_columns', [])]


#: The method of a run fine-tuned from a backbone pretrained for another
#: number of steps than the bundled one (:func:`base_method_of` writes it,
#: the tables read its steps back).
OTHER_BACKBONE = re.compile(r'^fine-tuned \(([\d,]+)-step backbone\)$')

#: The method of a run fine-tuned with a recipe of its own: layer-wise
#: learning-rate decay, a weight average, a blended forest, or several,
#: from the bundled backbone or one of other steps (:obj:`steps`)
#: (:func:`base_method_of` writes it, the tables read the values back).
FINE_TUNING_RECIPE = re.compile(
    r'^fine-tuned \((?!\))'
    r'(?:(?P<steps>[\d,]+)-step backbone, (?=[lw\d]))?'
    r'(?:layer-wise learning-rate decay (?P<decay>[\d.]+)(?:, (?=[w\d])|(?=\))))?'
    r'(?:weight EMA (?P<ema>[\d.]+)(?:, (?=\d)|(?=\))))?'
    r'(?:(?P<forest>\d+)-tree forest)?\)$')


def _pretraining(init_from: dict) -> dict:
    r"""What the card of the backbone of :obj:`init_from` (a run's
    :obj:`init_from` record) says of its pretraining; empty where it says
    nothing."""
    return (init_from.get('pretraining') or {}).get('pretraining') or {}


def _objectives_left_out(init_from: dict) -> list[str]:
    r"""The pretraining objectives that the backbone of :obj:`init_from`
    (a run's :obj:`init_from` record) gave no weight, by name."""
    objectives = _pretraining(init_from).get('objectives') or {}
    return [name for name, settings in objectives.items()
            if not (settings or {}).get('weight', 1.0)]


@lru_cache(maxsize=None)
def _config_of(run_dir: str) -> dict:
    path = Path(run_dir) / 'config.yaml'
    return yaml.safe_load(path.read_text()) if path.is_file() else {}


def _optim_of(run: dict) -> dict:
    r"""The :obj:`optim` section of the ``config.yaml`` beside a run's
    ``results.json`` (:obj:`run["path"]`, as
    :func:`~benchmarks.analysis.runs.load_runs` sets it); empty without
    one."""
    config = _config_of(run['path']) if run.get('path') else {}
    return (config or {}).get('optim') or {}


def layer_lr_decay_of(run: dict) -> float:
    r"""The :obj:`optim.layer_lr_decay` a run trained with (:func:`_optim_of`);
    1 (one rate for all, the default) for a run without one."""
    return float(_optim_of(run).get('layer_lr_decay', 1.0))


def ema_decay_of(run: dict) -> Optional[float]:
    r"""The :obj:`optim.ema_decay` a run trained with (:func:`_optim_of`);
    :obj:`None` (no weight average, the default) for a run without one."""
    value = _optim_of(run).get('ema_decay')
    return None if value is None else float(value)


def forest_trees_of(run: dict) -> int:
    r"""The trees per task of the forest blended with a run's network
    (its :obj:`results.json`'s :obj:`forest` record, ``model.forest_trees``);
    0 for a run without one."""
    return int((run.get('forest') or {}).get('trees_per_target') or 0)


@lru_cache(maxsize=None)
def bundled_backbone_steps() -> int:
    r"""The pretraining steps of the bundled backbone
    (``bundled:pretrained-sepnorm``), from its card: a run fine-tuned from
    a backbone of this many steps is plain :obj:`"fine-tuned"`."""
    from graphormer_sepnorm.bundled import bundled_backbone_path
    from graphormer_sepnorm.checkpoint import read_card
    card, _ = read_card(bundled_backbone_path('pretrained-sepnorm'))
    return card.extra['pretraining']['steps']


def base_method_of(run: dict) -> str:
    r"""A run's method without its molecule features (see the module)."""
    family = run.get('model_family')
    if family:
        if family != CHEMPROP:
            raise ValueError(f"{run.get('path', 'a run')}: model family "
                             f"{family!r}; the methods know {CHEMPROP!r} "
                             f"and our Graphormer only")
        return 'chemprop'
    init_from = run.get('init_from')
    trees = forest_trees_of(run)
    if not init_from:
        return f'scratch ({trees}-tree forest)' if trees else 'scratch'
    if init_from.get('task') not in (None, 'pretraining'):
        return 'fine-tuned (from a trained model)'
    left_out = _objectives_left_out(init_from)
    if left_out:
        return f"fine-tuned (without {', '.join(left_out)})"
    qualifiers = []
    steps = _pretraining(init_from).get('steps')
    if steps is not None and steps != bundled_backbone_steps():
        qualifiers.append(f"{steps:,}-step backbone")
    decay = layer_lr_decay_of(run)
    if decay != 1.0:
        qualifiers.append(f"layer-wise learning-rate decay {decay:g}")
    ema = ema_decay_of(run)
    if ema is not None:
        qualifiers.append(f"weight EMA {ema:g}")
    if trees:
        qualifiers.append(f"{trees}-tree forest")
    return (f"fine-tuned ({', '.join(qualifiers)})" if qualifiers
            else 'fine-tuned')


def method_of(run: dict) -> str:
    r"""A run's method: :func:`base_method_of`, then :obj:`" + NAME"` per
    molecule feature of :func:`molecule_features_of`.

    Args:
        run (dict): A run's :obj:`results.json`.

    Raises:
        ValueError: Another model family than chemprop's D-MPNN.
    """
    return ' + '.join([base_method_of(run), *molecule_features_of(run)])
