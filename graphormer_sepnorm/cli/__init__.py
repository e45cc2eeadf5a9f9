r"""The ``graphormer-sepnorm`` command (also ``python -m graphormer_sepnorm``):
one program whose subcommands are the command lines of ``scripts/*.py``,
for an installed package, which has no ``scripts/`` folder.

:data:`COMMANDS` is the whole table: a subcommand is a name, the
``module:<command>_main`` function that runs it and a one-line summary for
the overview. Each function takes ``(argv, prog)`` and returns the exit
status, builds its parser with the ``<command>_parser(prog)`` beside it
(options that several share come from :mod:`.options`), and is the same
function its script calls, so ``graphormer-sepnorm predict --help``
shows the help of ``python scripts/predict.py --help`` under the program
name ``graphormer-sepnorm predict``. A subcommand's module is imported only
when that subcommand runs: the overview and ``--version`` start without
torch.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import NamedTuple, Optional, Sequence

from .. import __version__

__all__ = ['Command', 'COMMANDS', 'command_parser', 'run_command', 'main']


class Command(NamedTuple):
    r"""One subcommand.

    Args:
        target (str): ``module:function`` that runs it, the module relative
            to this package; the function is called as
            ``function(argv, prog=prog)`` and returns the exit status.
        summary (str): One line for the overview (``--help``).
    """
    target: str
    summary: str


#: The subcommands, in the order of the overview.
COMMANDS: dict[str, Command] = {
    'train': Command('.train:train_main',
                     'train a model from a YAML config'),
    'configs': Command('.configs:configs_main',
                       'list the shipped configs, or copy one out to edit'),
    'pretrain': Command('.pretrain:pretrain_main',
                        'pretrain a backbone without labels on SMILES'),
    'evaluate': Command('.train:evaluate_main',
                        're-evaluate a trained model on a dataset split'),
    'predict': Command('.predict:predict_main',
                       'predict properties of molecules from SMILES'),
    'merge': Command('.merge:merge_main',
                     "merge the outputs of 'predict --shard K/N' runs"),
    'convert-hf': Command('.convert:convert_main',
                          'convert a Hugging Face Graphormer to a checkpoint'),
}


def command_parser(prog: Optional[str] = None) -> argparse.ArgumentParser:
    r"""The parser of the first argument: the subcommand, or an option of
    the overview (:func:`main` gives the rest to the subcommand);
    :obj:`prog` defaults to the running program's name."""
    width = max(len(name) for name in COMMANDS) + 2
    table = '\n'.join(f'  {name.ljust(width)}{command.summary}'
                      for name, command in COMMANDS.items())
    parser = argparse.ArgumentParser(
        prog=prog, usage='%(prog)s [-h] [--version] COMMAND [ARGS ...]',
        description='Graphormer with SepNorm on PyTorch Geometric: train, '
        'evaluate and predict\nmolecular properties from SMILES.\n\n'
        f'commands:\n{table}',
        epilog="'%(prog)s COMMAND --help' shows the options of COMMAND.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--version', action='version',
                        version=f'%(prog)s {__version__}')
    # Listed in the description's table instead of as an argument.
    parser.add_argument('command', metavar='COMMAND', choices=COMMANDS,
                        help=argparse.SUPPRESS)
    return parser


def run_command(name: str, argv: Sequence[str], prog: str) -> int:
    r"""Imports and runs the subcommand :obj:`name` (a key of
    :data:`COMMANDS`) on :obj:`argv`, its usage line naming :obj:`prog`;
    returns its exit status."""
    module, function = COMMANDS[name].target.split(':')
    entry = getattr(importlib.import_module(module, __package__), function)
    return entry(list(argv), prog=prog)


def main(argv: Optional[Sequence[str]] = None,
         prog: Optional[str] = None) -> int:
    r"""Runs ``graphormer-sepnorm [COMMAND ARGS ...]``; returns the exit
    status of the subcommand (argparse exits with 2 on an unknown one)."""
    parser = command_parser(prog)
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        parser.error(f"no COMMAND given; choose one of {', '.join(COMMANDS)}"
                     f" (see --help)")
    # Everything after COMMAND is the subcommand's, verbatim (argparse
    # would take a '--' or a '-h' of the subcommand as its own).
    command = parser.parse_args(argv[:1]).command
    return run_command(command, argv[1:], f'{parser.prog} {command}')
