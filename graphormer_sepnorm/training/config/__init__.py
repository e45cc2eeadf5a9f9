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

One file per job:

* :mod:`~.schema`: the keys, as the fields (type, default, meaning) of one
  dataclass per section (the :obj:`model` section's are those of
  :class:`~graphormer_sepnorm.models.GraphormerConfig`), listed as
  :data:`OPTIONS`; :class:`ConfigError` and :func:`options_markdown`;
* :mod:`~.reading`: YAML files with includes, :func:`deep_merge`, dotted
  overrides and keys, unknown keys with a did-you-mean;
* :mod:`~.validation`: :func:`validate` (types, choices, ranges, monitor,
  paths), :func:`load_config`, the run directory and :func:`dump_config`.
"""
from ...lazy_imports import lazy_getattr

#: Where each public name lives; a name loads its module on first use (PEP
#: 562), so that a command's ``--help``, which needs only
#: :data:`DATA_ROOT_ENV`, starts without torch (the schema reads the
#: model's signature).
_HOMES = {
    'DATA_ROOT_ENV': '.environment',
    **dict.fromkeys(('deep_merge', 'get_dotted', 'parse_override',
                     'read_yaml_with_defaults', 'set_dotted'), '.reading'),
    **dict.fromkeys(('MODEL_KEYS_FROM_DATA', 'MODEL_KEYS_NOT_ARGUMENTS',
                     'OPTIONS', 'PRETRAINING_DATA', 'ConfigError', 'Option',
                     'model_arguments', 'options_markdown'), '.schema'),
    **dict.fromkeys(('dump_config', 'load_config', 'resolved_run_name',
                     'run_dir_of', 'validate'), '.validation'),
}

__all__ = [
    'ConfigError', 'DATA_ROOT_ENV', 'MODEL_KEYS_FROM_DATA',
    'MODEL_KEYS_NOT_ARGUMENTS', 'OPTIONS', 'PRETRAINING_DATA', 'Option',
    'model_arguments', 'options_markdown', 'read_yaml_with_defaults',
    'deep_merge',
    'parse_override', 'set_dotted', 'get_dotted', 'validate', 'load_config',
    'resolved_run_name', 'run_dir_of', 'dump_config'
]

__getattr__ = lazy_getattr(__name__, _HOMES)
