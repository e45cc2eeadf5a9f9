r"""Training configuration: YAML files with includes, dotted command-line
overrides, defaults, and validation before any work starts.

A configuration file is a nested YAML mapping. It may include other files
through a top-level :obj:`defaults` list (paths relative to the including
file), merged deeply in order, the including file last::

    defaults: [base/common.yaml, base/zinc_subset.yaml]
    model:
      norm: sep

:func:`load_config` then applies, in this order: the environment variable
:obj:`GRAPHORMER_DATA_ROOT` (sets :obj:`data.root`), the command-line
overrides (:obj:`"train.max_steps=200"`, values parsed as YAML scalars), the
defaults of :data:`OPTIONS` for every key left out, and finally validates
every key: unknown keys (with a did-you-mean), wrong types, invalid choices
and missing files raise :class:`ConfigError` naming the key and the fix.
"""
from __future__ import annotations

import copy
import difflib
import inspect
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import yaml

from ..data.csv_config import check_csv_config
from ..data.datasets import DATASET_NAMES, check_raw_source, data_info
from .metrics import METRIC_NAMES, TASK_METRICS

#: Environment variable that overrides ``data.root`` (a command-line
#: ``data.root=...`` still wins).
DATA_ROOT_ENV = 'GRAPHORMER_DATA_ROOT'

PathLike = Union[str, Path]


class ConfigError(ValueError):
    r"""An invalid configuration: the message names the key or file and how
    to fix it."""


@dataclass(frozen=True)
class Option:
    r"""One configuration key.

    Args:
        key (str): Dotted key, *e.g.* :obj:`"train.max_steps"`.
        type (str): :obj:`"int"`, :obj:`"float"`, :obj:`"bool"`,
            :obj:`"str"`, :obj:`"floats"` (a list of floats), :obj:`"strs"`
            (a list of strings; one string is a list of one) or
            :obj:`"devices"` (an int, a list of ints, or :obj:`"auto"`).
        default: The value when the key is left out.
        doc (str): What the key means (one line, for the README table).
        choices (tuple, optional): The allowed values.
        nullable (bool, optional): Whether :obj:`null` is allowed.
    """
    key: str
    type: str
    default: Any
    doc: str
    choices: Optional[tuple] = None
    nullable: bool = False
    length: Optional[int] = None


def _model_defaults() -> dict[str, Any]:
    from ..models import GraphormerSepNorm
    params = inspect.signature(GraphormerSepNorm.__init__).parameters
    return {name: p.default for name, p in params.items() if name != 'self'}


#: Model arguments filled from the dataset, never from the configuration.
MODEL_KEYS_FROM_DATA = ('atom_vocab_sizes', 'bond_vocab_sizes', 'out_channels')

_MODEL_DOCS: list[tuple[str, str, str, Optional[tuple], bool]] = [
    # key, type, doc, choices, nullable
    ('num_layers', 'int', 'Transformer blocks.', None, False),
    ('hidden_channels', 'int', 'Token (embedding) size.', None, False),
    ('ffn_channels', 'int', 'Feed-forward hidden size.', None, False),
    ('num_heads', 'int', 'Attention heads.', None, False),
    ('dropout', 'float',
     'Dropout on the input tokens and on each residual branch.', None,
     False),
    ('attention_dropout', 'float', 'Dropout on attention weights.', None,
     False),
    ('activation_dropout', 'float',
     'Dropout after the GELU of the feed-forward networks.', None, False),
    ('pre_norm', 'bool', 'Pre-LN blocks if true, post-LN otherwise.', None,
     False),
    ('final_norm', 'bool', 'With pre-LN, normalize the last block output.',
     None, False),
    ('embedding_norm', 'bool',
     'Normalize the input tokens (encoder_normalize_before).', None, False),
    ('norm', 'str', 'SepNorm (`sep`) or one shared LayerNorm (`share`).',
     ('sep', 'share'), False),
    ('graph_token_norm', 'str', "SepNorm's graph-token norm.",
     ('batch', 'layer'), False),
    ('node_token_norm', 'str', "SepNorm's node-token norm.",
     ('layer', 'batch'), False),
    ('sepnorm_positions', 'str',
     'Which norms are SepNorm when norm=sep (`blocks` = all but the final '
     'norm).', ('all', 'blocks', 'final'), False),
    ('edge_encoding', 'str', "Graphormer's edge encoding.",
     ('multi_hop', 'single'), False),
    ('multi_hop_max_dist', 'int',
     'Hops of a shortest path that enter the multi-hop edge encoding.', None,
     False),
    ('max_degree', 'int', 'Largest degree with its own embedding.', None,
     False),
    ('max_distance', 'int',
     'Largest distance with its own spatial encoding.', None, False),
    ('max_attention_distance', 'int',
     'If set, node pairs farther apart do not attend to each other.', None,
     True),
    ('max_nodes', 'int', 'Largest graph the model accepts.', None, False),
    ('directed', 'bool', 'Separate in- and out-degree embeddings.', None,
     False),
    ('attention_buckets', 'int', 'Run the encoder on this many buckets of '
     'graphs of similar size, each padded only to its own largest graph '
     '(same result, less padding).', None, False),
]


def _build_options() -> list[Option]:
    o = Option
    options = [
        o('seed', 'int', 0, 'Seed of every random number generator '
          '(`lightning.seed_everything(seed, workers=True)`).'),
        o('output_dir', 'str', 'runs',
          'Folder holding the run directories.'),
        o('run_name', 'str', None, 'Run directory name under output_dir; '
          'null: `<data.name>_<model.norm>_seed<seed>` (csv: the file name '
          'instead of data.name).', nullable=True),
        # data
        o('data.name', 'str', None, 'Dataset: ZINC-full, ZINC-subset (12k), '
          'OGB ogbg-molhiv, or your own CSV (data.path).',
          choices=DATASET_NAMES + ('csv', )),
        o('data.root', 'str', 'data', 'Writable folder for datasets '
          '(`<root>/ZINC`, `<root>/ogbg_molhiv`) and CSV caches '
          f'(`<root>/csv`); the environment variable {DATA_ROOT_ENV} '
          'overrides it.'),
        o('data.path', 'str', None, 'csv: the CSV file (`.csv` or `.csv.gz`, '
          'header row, one molecule per row).', nullable=True),
        o('data.smiles_column', 'str', 'smiles',
          'csv: the column holding the SMILES.'),
        o('data.target_columns', 'strs', None, 'csv: the column(s) to '
          'predict, one model output each (empty cells: missing labels).',
          nullable=True),
        o('data.task', 'str', None, 'csv: `regression`, or `binary` (0/1 '
          'labels; several target columns: multi-label).',
          choices=tuple(TASK_METRICS), nullable=True),
        o('data.featurizer', 'str', 'ogb', 'csv: SMILES to graph, `ogb` '
          "(OGB's 9 atom / 3 bond features) or `zinc` (ZINC's 28 atom "
          'types).', choices=('ogb', 'zinc')),
        o('data.split', 'str', 'scaffold', 'csv: balanced Bemis-Murcko '
          'scaffold split, random split, or the split named in '
          'data.split_column.', choices=('scaffold', 'random', 'column')),
        o('data.split_sizes', 'floats', [0.8, 0.1, 0.1], 'csv: fractions '
          '(train, valid, test) of the scaffold or random split.', length=3),
        o('data.split_seed', 'int', 0, 'csv: seed of the scaffold or random '
          'split.'),
        o('data.split_column', 'str', None, 'csv, split=column: the column '
          'holding train, valid or test for every row.', nullable=True),
        o('data.raw_source', 'str', None, 'Offline: a folder with the raw '
          'files (e.g. `../shared/data/ZINC-proxy` or '
          '`../shared/data/ogbg_molhiv`) copied into the root when missing; '
          'null: download as PyG/OGB do.', nullable=True),
        o('data.max_nodes', 'int', 512, 'Largest graph AddShortestPaths '
          'accepts (pre_transform).'),
        o('data.batch_size', 'int', 256, 'Graphs per optimizer step, over '
          'all processes (each of N processes gets batch_size/N).'),
        o('data.eval_batch_size', 'int', None, 'Graphs per evaluation batch '
          'and process; null: data.batch_size.', nullable=True),
        o('data.num_workers', 'int', 0, 'DataLoader worker processes.'),
        o('data.pin_memory', 'bool', True, 'Pin host memory (CUDA only).'),
        o('data.on_device', 'bool', False, 'Keep the preprocessed dataset on '
          'the accelerator and batch there (no DataLoader).'),
        o('data.limit_train', 'int', None, 'Use only the first N training '
          'graphs (null: all).', nullable=True),
        o('data.limit_val', 'int', None, 'Use only the first N validation '
          'graphs (null: all).', nullable=True),
        o('data.limit_test', 'int', None, 'Use only the first N test graphs '
          '(null: all).', nullable=True),
        o('data.standardize_targets', 'bool', True, 'Regression: train on '
          '(y - mean) / std of the training split (stored in the model '
          'card).'),
        # optim
        o('optim.lr', 'float', 2e-4, 'Peak learning rate (AdamW).'),
        o('optim.weight_decay', 'float', 0.01, 'AdamW weight decay.'),
        o('optim.betas', 'floats', [0.9, 0.999], 'AdamW betas.', length=2),
        o('optim.eps', 'float', 1e-8, 'AdamW epsilon.'),
        o('optim.warmup_steps', 'int', 40000,
          'Linear warmup from 0 to optim.lr over this many steps.'),
        o('optim.warmup_ratio', 'float', None, 'If set, warmup = this '
          'fraction of the total steps (overrides warmup_steps).',
          nullable=True),
        o('optim.total_steps', 'int', None, 'Steps of the schedule (decay '
          'reaches end_lr there); null: train.max_steps, or max_epochs x '
          'steps per epoch.', nullable=True),
        o('optim.end_lr', 'float', 1e-9, 'Learning rate at the end of the '
          'polynomial decay.'),
        o('optim.power', 'float', 1.0, 'Power of the polynomial decay '
          '(1: linear).'),
        # train
        o('train.max_steps', 'int', None, 'Stop after this many optimizer '
          'steps (null: max_epochs decides).', nullable=True),
        o('train.max_epochs', 'int', None, 'Stop after this many epochs '
          '(null: max_steps decides).', nullable=True),
        o('train.precision', 'str', 'auto', 'Lightning precision; auto: '
          'bf16-mixed on a bf16-capable GPU, 32-true otherwise.',
          choices=('auto', '32-true', 'bf16-mixed', '16-mixed', '64-true')),
        o('train.gradient_clip_val', 'float', 5.0, 'Clip the gradient norm '
          '(null: no clipping).', nullable=True),
        o('train.accelerator', 'str', 'auto', 'Lightning accelerator.',
          choices=('auto', 'cpu', 'gpu', 'cuda', 'mps')),
        o('train.devices', 'devices', 'auto', 'Devices per node: a count, a '
          'list of ids, or auto.'),
        o('train.strategy', 'str', 'auto', 'Lightning strategy (ddp for '
          'data parallel, also under torchrun).',
          choices=('auto', 'ddp', 'ddp_spawn', 'ddp_find_unused_parameters_true',
                   'single_device')),
        o('train.num_nodes', 'int', 1, 'Machines (DDP).'),
        o('train.check_val_every_n_epoch', 'int', 1,
          'Validate (and test) every N epochs.'),
        o('train.eval_test', 'bool', True, 'Evaluate the test split at every '
          'validation (false: never read test, for tuning trials; the test '
          'columns of metrics.csv stay empty).'),
        o('train.log_every_n_steps', 'int', 50,
          'Logging interval of the step-level logs (CSV/TensorBoard).'),
        o('train.checkpoint_every_n_steps', 'int', 1000,
          'Write checkpoints/last.ckpt every N steps and after every '
          'validation (a step that ends an epoch: at the end of that '
          'epoch).'),
        o('train.deterministic', 'str', 'warn', 'torch deterministic '
          'algorithms: true, false, or warn (deterministic where possible).',
          choices=('true', 'false', 'warn')),
        o('train.progress_bar', 'bool', True, 'Show the progress bar.'),
        o('train.tensorboard', 'bool', False, 'Also log to TensorBoard (needs '
          'the tensorboard package).'),
        o('train.num_sanity_val_steps', 'int', 0, 'Validation batches run '
          'before training as a smoke test.'),
        o('train.monitor', 'str', None, 'Validation metric that selects the '
          'best model (averaged over targets); null: mae (regression) or '
          'rocauc (binary).', choices=METRIC_NAMES, nullable=True),
    ]
    defaults = _model_defaults()
    documented = {key for key, *_ in _MODEL_DOCS}
    rows = [row for row in _MODEL_DOCS if row[0] in defaults]
    # A model argument added later is still configurable (type from its
    # default) until it gets a line above.
    for key, default in defaults.items():
        if key in documented or key in MODEL_KEYS_FROM_DATA:
            continue
        kind = {bool: 'bool', int: 'int', float: 'float', str: 'str'}.get(
            type(default))
        if kind is not None:
            rows.append((key, kind, 'See GraphormerSepNorm.', None, False))
        elif default is None:
            rows.append((key, 'int', 'See GraphormerSepNorm.', None, True))
    for key, type_, doc, choices, nullable in rows:
        default = defaults[key]
        if isinstance(default, tuple):
            default = list(default)
        options.append(Option(f'model.{key}', type_, default, doc, choices,
                              nullable))
    return options


#: Every configuration key, with its type, default and meaning.
OPTIONS: list[Option] = _build_options()
_BY_KEY: dict[str, Option] = {option.key: option for option in OPTIONS}
_SECTIONS = sorted({k.split('.')[0] for k in _BY_KEY if '.' in k})


# ---------------------------------------------------------------------------
# Reading and merging


def read_yaml_with_defaults(path: PathLike, _seen: tuple = ()) -> dict:
    r"""Reads a YAML configuration file and, recursively, the files named in
    its :obj:`defaults` list (relative to it), merged deeply in order with the
    file itself last."""
    path = Path(path)
    if not path.is_file():
        hint = _available_configs(path)
        raise ConfigError(
            f"Config file {path} does not exist; pass an existing YAML file "
            f"with --config{hint}")
    resolved = path.resolve()
    if resolved in _seen:
        chain = ' -> '.join(str(p) for p in _seen + (resolved, ))
        raise ConfigError(f"Config files include each other in a cycle: "
                          f"{chain}; remove one of the 'defaults' entries")
    try:
        with open(path) as f:
            content = yaml.safe_load(f)
    except yaml.YAMLError as error:
        raise ConfigError(f"Config file {path} is not valid YAML: {error}")
    if content is None:
        content = {}
    if not isinstance(content, dict):
        raise ConfigError(f"Config file {path} must hold a mapping at the top "
                          f"level, got {type(content).__name__}")
    includes = content.pop('defaults', [])
    if isinstance(includes, str):
        includes = [includes]
    if not isinstance(includes, list):
        raise ConfigError(f"'defaults' in {path} must be a list of YAML "
                          f"files, got {includes!r}")
    merged: dict = {}
    for include in includes:
        child = (path.parent / str(include))
        if not child.is_file():
            raise ConfigError(f"{path}: included file '{include}' (looked "
                              f"for {child}) does not exist; fix the "
                              f"'defaults' list")
        merged = deep_merge(merged,
                            read_yaml_with_defaults(child, _seen + (resolved, )))
    return deep_merge(merged, content)


def deep_merge(base: Mapping, update: Mapping) -> dict:
    r"""A copy of :obj:`base` with :obj:`update` merged in; nested mappings
    merge key by key, anything else replaces."""
    out = copy.deepcopy(dict(base))
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def parse_override(text: str) -> tuple[str, Any]:
    r"""Parses :obj:`"a.b=value"` into the key and the YAML scalar value."""
    if '=' not in text:
        raise ConfigError(f"Override '{text}' must look like key=value "
                          f"(e.g. train.max_steps=200)")
    key, raw = text.split('=', 1)
    key = key.strip()
    if key.startswith('--'):
        key = key[2:]
    try:
        value = yaml.safe_load(raw) if raw.strip() != '' else None
    except yaml.YAMLError as error:
        raise ConfigError(f"Override '{text}': the value is not a YAML "
                          f"scalar ({error})")
    return key, value


def set_dotted(config: dict, key: str, value: Any) -> None:
    r"""Sets :obj:`config[a][b] = value` for :obj:`key="a.b"`, after checking
    the key is known."""
    _check_known(key)
    parts = key.split('.')
    node = config
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


def get_dotted(config: Mapping, key: str, default: Any = None) -> Any:
    node: Any = config
    for part in key.split('.'):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return node


def _check_known(key: str) -> None:
    if key in _BY_KEY:
        return
    if key in _SECTIONS:
        raise ConfigError(f"'{key}' is a section, not a key; set one of its "
                          f"keys, e.g. {_first_key(key)}=...")
    hint = difflib.get_close_matches(key, list(_BY_KEY), n=1, cutoff=0.6)
    if not hint:  # a misspelt last part: match within the same section
        section = key.rsplit('.', 1)[0] if '.' in key else ''
        last = key.rsplit('.', 1)[-1]
        same = [k for k in _BY_KEY if k.rsplit('.', 1)[0] == section
                or ('.' not in k and not section)]
        hint = difflib.get_close_matches(last,
                                         [k.rsplit('.', 1)[-1] for k in same],
                                         n=1)
        hint = [f'{section}.{hint[0]}' if section else hint[0]] if hint else []
    did_you_mean = f" Did you mean '{hint[0]}'?" if hint else ""
    section = key.split('.')[0]
    valid = [k for k in _BY_KEY if k.split('.')[0] == section]
    listing = (f" Valid keys of '{section}': {', '.join(valid)}" if valid
               and '.' in key else
               f" Valid top-level keys: {', '.join(_top_level_keys())}")
    raise ConfigError(f"Unknown config key '{key}'.{did_you_mean}{listing}")


def _first_key(section: str) -> str:
    return next(k for k in _BY_KEY if k.startswith(section + '.'))


def _top_level_keys() -> list[str]:
    return [k for k in _BY_KEY if '.' not in k] + list(_SECTIONS)


# ---------------------------------------------------------------------------
# Validation


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
    def positive(key: str, allow_zero: bool = False) -> None:
        value = get_dotted(config, key)
        if value is None:
            return
        if value < 0 or (value == 0 and not allow_zero):
            bound = '>= 0' if allow_zero else '> 0'
            raise ConfigError(f"'{key}' must be {bound}, got {value}")

    for key in ('data.max_nodes', 'data.batch_size', 'data.eval_batch_size',
                'optim.lr', 'optim.eps', 'train.num_nodes',
                'train.check_val_every_n_epoch', 'train.log_every_n_steps',
                'train.checkpoint_every_n_steps', 'optim.total_steps',
                'model.num_layers', 'model.hidden_channels',
                'model.ffn_channels', 'model.num_heads', 'model.max_nodes',
                'optim.power'):
        positive(key)
    for key in ('data.num_workers', 'data.limit_train', 'data.limit_val',
                'data.limit_test', 'optim.weight_decay',
                'optim.warmup_steps', 'optim.end_lr',
                'train.num_sanity_val_steps', 'train.gradient_clip_val'):
        positive(key, allow_zero=True)
    for key in ('data.limit_train', 'data.limit_val', 'data.limit_test'):
        if get_dotted(config, key) == 0:
            raise ConfigError(f"'{key}' must be a positive count or null "
                              f"(all graphs), got 0")
    for key in ('model.dropout', 'model.attention_dropout',
                'model.activation_dropout'):
        value = get_dotted(config, key)
        if not 0.0 <= value < 1.0:
            raise ConfigError(f"'{key}' must be in [0, 1), got {value}")
    ratio = get_dotted(config, 'optim.warmup_ratio')
    if ratio is not None and not 0.0 <= ratio < 1.0:
        raise ConfigError(f"'optim.warmup_ratio' must be in [0, 1), got "
                          f"{ratio}")
    for i, beta in enumerate(get_dotted(config, 'optim.betas')):
        if not 0.0 <= beta < 1.0:
            raise ConfigError(f"'optim.betas' must hold two numbers in "
                              f"[0, 1), got {get_dotted(config, 'optim.betas')}")
    max_steps = get_dotted(config, 'train.max_steps')
    max_epochs = get_dotted(config, 'train.max_epochs')
    if max_steps is not None and max_steps == -1:
        config['train']['max_steps'] = max_steps = None
    if max_epochs is not None and max_epochs == -1:
        config['train']['max_epochs'] = max_epochs = None
    if max_steps is None and max_epochs is None:
        raise ConfigError("Set 'train.max_steps' or 'train.max_epochs' (or "
                          "both); training would never stop otherwise")
    for key in ('train.max_steps', 'train.max_epochs'):
        positive(key)
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


def _check_monitor(config: dict) -> None:
    monitor = config['train']['monitor']
    task = data_info(config['data']).task
    if monitor is not None and monitor not in TASK_METRICS[task]:
        raise ConfigError(
            f"'train.monitor' is {monitor!r}, a metric the {task} task does "
            f"not report; choose one of {', '.join(TASK_METRICS[task])}")


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
    _check_monitor(out)
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
            included); :obj:`None` to start from :obj:`base` only.
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
        config = deep_merge(config, read_yaml_with_defaults(path))
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


def options_markdown() -> str:
    r"""Every key as a markdown table (key, type, default, meaning)."""
    lines = ['| key | type | default | meaning |', '| --- | --- | --- | --- |']
    for option in OPTIONS:
        type_ = option.type
        if option.choices:
            type_ = ' \\| '.join(f'`{c}`' for c in option.choices)
        if option.nullable:
            type_ += ' or null'
        default = ('*required*' if option.default is None
                   and not option.nullable else
                   f'`{yaml.safe_dump(option.default, default_flow_style=True).strip().removesuffix("...").strip()}`')
        lines.append(f'| `{option.key}` | {type_} | {default} | '
                     f'{option.doc.replace("|", "/")} |')
    return '\n'.join(lines)


def _available_configs(path: Path) -> str:
    folder = path.parent if path.parent.is_dir() else Path('configs')
    if not folder.is_dir():
        return ''
    names = sorted(p.name for p in folder.glob('*.yaml'))
    return f" (available in {folder}: {', '.join(names)})" if names else ''
