r"""The command line of :obj:`scripts/configs.py` (``graphormer-sepnorm
configs``): lists the shipped configs, or copies one out to edit."""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

__all__ = ['configs_parser', 'configs_main']


def configs_parser(prog: str = 'configs.py') -> argparse.ArgumentParser:
    r"""The parser of :obj:`scripts/configs.py`; :obj:`prog` names the
    program in the usage line and the examples."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description='List the YAML configs shipped in the package (train '
        '--config NAME runs one, from any folder), or copy one, with the '
        'files it includes, into a folder to edit.',
        epilog='examples:\n'
        '  %(prog)s\n'
        '  %(prog)s cpu/zinc_subset_sepnorm --to my_configs\n'
        '  train --config my_configs/cpu/zinc_subset_sepnorm.yaml',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('name', nargs='?', metavar='NAME',
                        help='The shipped config to copy (as listed); '
                        'without it, list them.')
    parser.add_argument('--to', default='configs', metavar='DIR',
                        help="The folder to copy into, at the config's "
                        "path under configs/ (default: configs).")
    return parser


def _summary(name: str) -> str:
    r"""The first line of the comment that opens the config :obj:`name`."""
    from ..training.config.shipped import SHIPPED_CONFIGS
    with open(SHIPPED_CONFIGS / f'{name}.yaml') as f:
        first = f.readline()
    return first[1:].strip() if first.startswith('#') else ''


def configs_main(argv: Optional[Sequence[str]] = None,
                 prog: str = 'configs.py') -> int:
    r"""Runs :obj:`scripts/configs.py`; returns the exit status (2 with a
    one-line message for an unknown name or a file that exists)."""
    args = configs_parser(prog).parse_args(argv)
    from ..training.config import ConfigError
    from ..training.config.shipped import copy_config, shipped_config_names
    if args.name is None:
        names = shipped_config_names()
        width = max(map(len, names)) + 2
        for name in names:
            print(f'{name.ljust(width)}{_summary(name)}'.rstrip())
        return 0
    try:
        written = copy_config(args.name, args.to)
    except ConfigError as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0
