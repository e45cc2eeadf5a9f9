r"""Reading configurations: YAML files with their :obj:`defaults` includes,
deep merging, dotted command-line overrides, dotted keys, and unknown keys
rejected with a did-you-mean."""
from __future__ import annotations

import copy
import difflib
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import yaml

from .schema import _BY_KEY, _SECTIONS, ConfigError

PathLike = Union[str, Path]


def read_yaml_with_defaults(path: PathLike, _seen: tuple = (),
                            files: Optional[list] = None) -> dict:
    r"""Reads a YAML configuration file and, recursively, the files named in
    its :obj:`defaults` list (relative to it), merged deeply in order with the
    file itself last. Each file read is appended to :obj:`files` (default:
    :obj:`None`, not recorded)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(
            f"Config file {path} does not exist; pass an existing YAML file "
            f"with --config")
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
    if files is not None:
        files.append(path)
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
        merged = deep_merge(merged, read_yaml_with_defaults(
            child, _seen + (resolved, ), files))
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
    option = _BY_KEY.get(key)
    if isinstance(value, dict) and option is not None and option.type == 'str':
        # YAML reads a text with a colon ("bundled:") as a mapping.
        value = raw.strip()
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

