r"""Validation: every key checked, defaults filled in, types converted,
choices, ranges, the monitored metric and the data paths checked
(:func:`validate`, :func:`load_config`); the run directory and the saved copy
of a validated configuration."""
from __future__ import annotations

import copy
import difflib
import math
import os
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import yaml

from ...data.csv_config import check_csv_config
from ...data.datasets import check_raw_source, data_info
from ..metrics import STANDARDIZED_METRICS, reported_metrics
from .environment import DATA_ROOT_ENV
from .reading import (PathLike, _check_known, _first_key, deep_merge,
                      get_dotted, parse_override, read_yaml_with_defaults,
                      set_dotted)
from .shipped import find_config
from .schema import (OPTIONS, PRETRAINING_DATA, _SECTIONS,
                     ConfigError, Option)

#: The ranges an option's field may name, as checks of a value.
_RANGES = {'> 0': lambda v: v > 0, '>= 0': lambda v: v >= 0,
           '[0, 1)': lambda v: 0.0 <= v < 1.0,
           '(0, 1]': lambda v: 0.0 < v <= 1.0,
           '(0, 1)': lambda v: 0.0 < v < 1.0}


def _coerce(option: Option, value: Any) -> Any:
    key = option.key
    if value is None:
        if option.nullable:
            return None
        if option.default is None:  # required
            choices = (f" (one of: {', '.join(map(str, option.choices))})"
                       if option.choices else "")
            raise ConfigError(f"'{key}' is required{choices}; set it in the "
                              f"config file or with {key}=...")
        raise ConfigError(f"'{key}' must not be null; {option.doc}")
    t = option.type
    if t == 'bool':
        if isinstance(value, bool):
            return value
        raise _type_error(option, value, 'true or false')
    if t == 'int':
        if isinstance(value, bool):
            raise _type_error(option, value, 'an integer')
        if isinstance(value, int):
            return value
        number = _as_number(value)
        if number is not None and math.isfinite(number) and float(
                number).is_integer():
            return int(number)
        raise _type_error(option, value, 'an integer')
    if t == 'float':
        if isinstance(value, bool):
            raise _type_error(option, value, 'a number')
        number = _as_number(value)
        if number is None:
            raise _type_error(option, value, 'a number')
        return float(number)
    if t == 'str':
        if isinstance(value, bool) and option.choices and (
                'true' in option.choices):
            value = 'true' if value else 'false'
        if isinstance(value, (int, float)) and not isinstance(value, bool) \
                and option.choices is None:
            value = str(value)
        if not isinstance(value, str):
            raise _type_error(option, value, 'a string')
        if option.choices is not None and value not in option.choices:
            hint = difflib.get_close_matches(value, option.choices, n=1)
            did_you_mean = f" Did you mean '{hint[0]}'?" if hint else ""
            raise ConfigError(
                f"'{key}' must be one of {', '.join(map(repr, option.choices))}"
                f", got {value!r}.{did_you_mean}")
        return value
    if t == 'strs':
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not value or not all(
                isinstance(item, str) and item for item in value):
            raise _type_error(option, value,
                              'a non-empty list of non-empty strings')
        return list(value)
    if t == 'floats':
        if not isinstance(value, (list, tuple)) or (
                option.length is not None and len(value) != option.length):
            raise _type_error(option, value,
                              f'a list of {option.length} numbers')
        out = []
        for item in value:
            number = _as_number(item)
            if number is None or isinstance(item, bool):
                raise _type_error(option, value,
                                  f'a list of {option.length} numbers')
            out.append(float(number))
        return out
    if t == 'workers':
        if value == 'auto' or (isinstance(value, int)
                               and not isinstance(value, bool)
                               and value >= 0):
            return value
        if isinstance(value, str) and value.isdigit():
            return int(value)
        raise _type_error(option, value,
                          "a count of processes (0: none) or 'auto'")
    if t == 'devices':
        if value == 'auto' or (isinstance(value, int)
                               and not isinstance(value, bool)):
            return value
        if isinstance(value, list) and all(
                isinstance(v, int) and not isinstance(v, bool)
                for v in value):
            return value
        if isinstance(value, str) and value.lstrip('-').isdigit():
            return int(value)
        raise _type_error(option, value,
                          "an integer, a list of device ids, or 'auto'")
    raise AssertionError(t)


def _as_number(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):  # PyYAML reads 1e-4 (no dot) as a string
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _type_error(option: Option, value: Any, expected: str) -> ConfigError:
    return ConfigError(f"'{option.key}' must be {expected}, got {value!r} "
                       f"({type(value).__name__}); {option.doc}")


def _check_ranges(config: dict) -> None:
    train = config['train']
    for key in ('max_steps', 'max_epochs'):
        if train[key] == -1:
            train[key] = None
    if train['max_steps'] is None and train['max_epochs'] is None:
        raise ConfigError("Set 'train.max_steps' or 'train.max_epochs' (or "
                          "both); training would never stop otherwise")
    for option in OPTIONS:
        value = get_dotted(config, option.key)
        if option.range and value is not None and not _RANGES[option.range](
                value):
            where = 'in ' if option.range[0] in '[(' else ''
            raise ConfigError(f"'{option.key}' must be {where}{option.range}"
                              f", got {value}")
    for key in ('data.limit_train', 'data.limit_val', 'data.limit_test'):
        if get_dotted(config, key) == 0:
            raise ConfigError(f"'{key}' must be a positive count or null "
                              f"(all graphs), got 0")
    for i, beta in enumerate(get_dotted(config, 'optim.betas')):
        if not 0.0 <= beta < 1.0:
            raise ConfigError(f"'optim.betas' must hold two numbers in "
                              f"[0, 1), got {get_dotted(config, 'optim.betas')}")
    hidden = get_dotted(config, 'model.hidden_channels')
    heads = get_dotted(config, 'model.num_heads')
    if hidden % heads:
        raise ConfigError(f"'model.hidden_channels' ({hidden}) must be "
                          f"divisible by 'model.num_heads' ({heads})")
    if get_dotted(config, 'model.max_nodes') < get_dotted(
            config, 'data.max_nodes'):
        raise ConfigError(
            f"'model.max_nodes' ({get_dotted(config, 'model.max_nodes')}) is "
            f"smaller than 'data.max_nodes' "
            f"({get_dotted(config, 'data.max_nodes')}); graphs the data "
            f"accepts would crash the model. Make them equal")


def _check_pretraining(config: dict) -> None:
    pretrain = config['pretrain']
    if config['optim']['layer_lr_decay'] != 1.0:
        raise ConfigError(
            f"'optim.layer_lr_decay' is {config['optim']['layer_lr_decay']}, "
            f"but it lowers the rates of a trained encoder's layers when "
            f"fine-tuning, and pretraining trains one from scratch: leave it "
            f"at 1")
    if config['optim']['ema_decay'] is not None:
        raise ConfigError(
            f"'optim.ema_decay' is {config['optim']['ema_decay']}, but "
            f"pretraining exports the trained backbone, not an average of "
            f"it: leave it null")
    if not 0.0 < pretrain['mask_rate'] <= 1.0:
        raise ConfigError(f"'pretrain.mask_rate' must be in (0, 1], got "
                          f"{pretrain['mask_rate']}")
    weights = ('pretrain.atom_loss_weight', 'pretrain.descriptor_loss_weight')
    for key in weights:
        if get_dotted(config, key) < 0:
            raise ConfigError(f"'{key}' must be >= 0, got "
                              f"{get_dotted(config, key)}")
    if all(get_dotted(config, key) == 0 for key in weights):
        raise ConfigError("The pretraining config has no objective: "
                          "'pretrain.atom_loss_weight' and "
                          "'pretrain.descriptor_loss_weight' are both 0; set "
                          "at least one above 0")
    if get_dotted(config, 'train.val_every_n_steps') is not None:
        raise ConfigError("'train.val_every_n_steps' is for supervised "
                          "training; pretraining validates every "
                          "'pretrain.val_every_n_steps' steps: set that "
                          "instead")
    processes = pretrain['featurize_processes']
    if processes is not None and not pretrain['in_memory']:
        raise ConfigError(f"'pretrain.featurize_processes' is {processes}, "
                          f"but it applies only with 'pretrain.in_memory' "
                          f"true (the molecules are featurized on the fly, "
                          f"in data.num_workers workers, otherwise): set "
                          f"pretrain.in_memory=true, or remove "
                          f"pretrain.featurize_processes")
    for key in ('pretrain.val_every_n_steps', 'pretrain.scaler_molecules',
                'pretrain.featurize_processes'):
        value = get_dotted(config, key)
        if value is not None and value < 1:  # featurize_processes: null
            raise ConfigError(f"'{key}' must be >= 1, got {value}")
    if config['model'].get('init_from') is not None:
        raise ConfigError("'model.init_from' does not apply to pretraining "
                          "(it starts from a random encoder; continue a run "
                          "with --resume); remove it")
    if config['data']['raw_source'] is not None:
        raise ConfigError("'data.raw_source' does not apply to "
                          "data.name=pretraining (the corpus is read from "
                          "pretrain.corpus); remove it")


def _check_forest(config: dict) -> None:
    r""":obj:`model.forest_trees` needs molecule features to split on, and
    labels (not pretraining)."""
    trees = config['model']['forest_trees']
    if not trees:
        return
    if config['data']['name'] == PRETRAINING_DATA:
        raise ConfigError(f"'model.forest_trees' is {trees}, but a forest is "
                          f"blended with a trained predictor, and "
                          f"pretraining exports a backbone: set it to 0")
    if not (config['data']['molecule_features']
            or config['data']['feature_columns']):
        raise ConfigError(
            f"'model.forest_trees' is {trees}, but the run has no molecule "
            f"features for the forest to read: set data.molecule_features "
            f"(e.g. [morgan]) or data.feature_columns, or set "
            f"model.forest_trees to 0")


def _check_monitor(config: dict) -> None:
    r"""An explicit :obj:`train.monitor` must be a metric the task reports
    (null follows the task: see
    :func:`~graphormer_sepnorm.training.metrics.monitor_metric`)."""
    monitor = config['train']['monitor']
    info = data_info(config['data'])
    reported = reported_metrics(info.task, info.num_targets)
    if monitor is not None and monitor not in reported:
        what = ("one regression target" if info.task == 'regression'
                and monitor in STANDARDIZED_METRICS else
                f"the {info.task} task")
        raise ConfigError(
            f"'train.monitor' is {monitor!r}, a metric {what} does not "
            f"report; choose one of {', '.join(reported)}, or null for the "
            f"default ({info.metric})")


def validate(config: Mapping, check_paths: bool = True) -> dict:
    r"""Returns a complete copy of :obj:`config`: unknown keys rejected,
    defaults filled in, types converted and checked, choices and ranges
    checked, and (with :obj:`check_paths`) :obj:`data.raw_source` checked for
    the raw files of :obj:`data.name`."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"A config must be a mapping, got "
                          f"{type(config).__name__}")
    given: dict[str, Any] = {}
    for key, value in config.items():
        if key in _SECTIONS:
            if value is None:
                value = {}
            if not isinstance(value, Mapping):
                raise ConfigError(f"'{key}' must be a mapping of keys (e.g. "
                                  f"{_first_key(key)}), got {value!r}")
            for sub, sub_value in value.items():
                dotted = f'{key}.{sub}'
                _check_known(dotted)
                given[dotted] = sub_value
        else:
            _check_known(str(key))
            given[str(key)] = value
    out: dict = {option.key: None for option in OPTIONS if '.' not in option.key}
    out.update({section: {} for section in _SECTIONS})
    for option in OPTIONS:
        value = given.get(option.key, copy.deepcopy(option.default))
        value = _coerce(option, value)
        section, _, name = option.key.rpartition('.')
        if section:
            out[section][name] = value
        else:
            out[name] = value
    _check_ranges(out)
    try:
        check_csv_config(out['data'], check_paths)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    if out['data']['name'] == PRETRAINING_DATA:
        _check_pretraining(out)
    else:
        _check_monitor(out)
    _check_forest(out)
    if check_paths and out['data']['raw_source'] is not None:
        try:
            check_raw_source(out['data']['name'], out['data']['raw_source'])
        except FileNotFoundError as error:
            raise ConfigError(f"'data.raw_source': {error}") from None
    return out


def load_config(path: Optional[PathLike], overrides: Sequence[str] = (),
                env: Optional[Mapping[str, str]] = None,
                base: Optional[Mapping] = None,
                check_paths: bool = True) -> dict:
    r"""Reads, merges, overrides and validates a configuration.

    Args:
        path (str or Path, optional): The YAML file (its :obj:`defaults`
            included), or the name of a shipped config (see
            :func:`~.shipped.find_config`); :obj:`None` to start from
            :obj:`base` only.
        overrides (list of str): :obj:`"dotted.key=value"` items.
        env (mapping, optional): Environment (default: :obj:`os.environ`);
            :obj:`GRAPHORMER_DATA_ROOT` sets :obj:`data.root` unless an
            override does.
        base (mapping, optional): A configuration merged below the file
            (*e.g.* the saved config of a run being resumed).
        check_paths (bool, optional): Check :obj:`data.raw_source`.
    """
    env = os.environ if env is None else env
    config: dict = copy.deepcopy(dict(base)) if base else {}
    if path is not None:
        config = deep_merge(config, read_yaml_with_defaults(find_config(path)))
    parsed = [parse_override(item) for item in overrides]
    root = env.get(DATA_ROOT_ENV)
    if root and not any(key == 'data.root' for key, _ in parsed):
        set_dotted(config, 'data.root', root)
    for key, value in parsed:
        set_dotted(config, key, value)
    return validate(config, check_paths=check_paths)


def resolved_run_name(config: Mapping) -> str:
    name = config.get('run_name')
    if name:
        return str(name)
    data = config['data']
    dataset = (Path(data['path']).name.split('.')[0]
               if data['name'] == 'csv' else data['name'])
    return f"{dataset}_{config['model']['norm']}_seed{config['seed']}"


def run_dir_of(config: Mapping) -> Path:
    r"""The run directory :obj:`<output_dir>/<run_name>`."""
    return Path(config['output_dir']) / resolved_run_name(config)


def dump_config(config: Mapping, path: PathLike) -> None:
    with open(path, 'w') as f:
        yaml.safe_dump(dict(config), f, sort_keys=False)
