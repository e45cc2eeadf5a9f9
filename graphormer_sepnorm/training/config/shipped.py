r"""The configs shipped in the package, found by name.

The repository's ``configs/`` folder is the package's ``configs`` folder
(``graphormer_sepnorm/configs`` is a link to it, which a wheel resolves into
files), so a checkout and an installed package read the same files:
``--config zinc_subset_sepnorm``, ``--config cpu/zinc_subset_sepnorm`` and
``--config configs/cpu/zinc_subset_sepnorm.yaml`` all find
``configs/cpu/zinc_subset_sepnorm.yaml``, from any folder.
"""
from __future__ import annotations

import difflib
import shutil
from pathlib import Path
from typing import Union

from .reading import read_yaml_with_defaults
from .schema import ConfigError

__all__ = ['SHIPPED_CONFIGS', 'shipped_config_names', 'find_config',
           'copy_config']

#: The folder of the shipped configs (the repository's ``configs/``).
SHIPPED_CONFIGS = (Path(__file__).resolve().parents[2] / 'configs').resolve()

# The folder of the files only other configs include: not runnable alone.
_INCLUDES = 'base'


def shipped_config_names() -> list[str]:
    r"""The names of the runnable shipped configs, such as
    :obj:`"zinc_subset_sepnorm"` and :obj:`"cpu/zinc_subset_sepnorm"`
    (paths under :data:`SHIPPED_CONFIGS` without :obj:`.yaml`), sorted;
    the files of ``base/``, which only other configs include, are left
    out."""
    return sorted(
        path.relative_to(SHIPPED_CONFIGS).with_suffix('').as_posix()
        for path in SHIPPED_CONFIGS.rglob('*.yaml')
        if path.relative_to(SHIPPED_CONFIGS).parts[0] != _INCLUDES)


def _shipped_path(name: str) -> Path:
    r"""Where :obj:`name` would be among the shipped configs: a leading
    ``configs/`` and a missing ``.yaml`` are allowed."""
    parts = Path(name).parts
    if parts and parts[0] == 'configs':
        parts = parts[1:]
    path = SHIPPED_CONFIGS.joinpath(*parts) if parts else SHIPPED_CONFIGS
    return path if path.suffix in ('.yaml', '.yml') else \
        path.with_name(path.name + '.yaml')


def find_config(name: Union[str, Path]) -> Path:
    r"""The config file :obj:`name` means: an existing file as given, else
    the shipped config of that name (see :func:`shipped_config_names`;
    a path such as ``configs/zinc_subset_sepnorm.yaml`` finds the shipped
    copy outside a checkout).

    Raises:
        ConfigError: Neither exists; the message lists the shipped names.
    """
    path = Path(name)
    if path.is_file():
        return path
    if not path.is_absolute():
        shipped = _shipped_path(str(name))
        if shipped.is_file():
            return shipped
    names = shipped_config_names()
    hint = difflib.get_close_matches(
        path.as_posix().removeprefix('configs/').removesuffix('.yaml'),
        names, n=1)
    did_you_mean = f" Did you mean '{hint[0]}'?" if hint else ""
    raise ConfigError(
        f"Config file {name} does not exist; pass an existing YAML file "
        f"with --config, or the name of a shipped config ('graphormer-"
        f"sepnorm configs' lists them: {', '.join(names)}).{did_you_mean}")


def copy_config(name: str, destination: Union[str, Path]) -> list[Path]:
    r"""Copies the shipped config :obj:`name` into the folder
    :obj:`destination`, with the files its :obj:`defaults` include (at the
    same relative paths, so that the copy reads as the original); returns
    the files written. An existing file is not overwritten.

    Raises:
        ConfigError: :obj:`name` is not a shipped config, or a file to
            write exists.
    """
    source = _shipped_path(name)
    if not source.is_file() or source.relative_to(
            SHIPPED_CONFIGS).parts[0] == _INCLUDES:
        raise ConfigError(f"'{name}' is not a shipped config; choose one of "
                          f"{', '.join(shipped_config_names())}")
    files: list[Path] = []
    read_yaml_with_defaults(source, files=files)
    files = list(dict.fromkeys(path.resolve() for path in files))
    destination = Path(destination)
    targets = [destination / path.relative_to(SHIPPED_CONFIGS)
               for path in files]
    existing = [str(path) for path in targets if path.exists()]
    if existing:
        raise ConfigError(f"{', '.join(existing)} already exist(s); remove "
                          f"it or copy into another folder (--to)")
    for path, target in zip(files, targets):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return targets
