r"""What the subcommands' command lines share: the options several of them
take, defined once (:func:`add_device`, :func:`add_batch_size`,
:func:`add_quiet`), and the one-line error exit (:func:`fail`)."""
from __future__ import annotations

import argparse
import sys

__all__ = ['fail', 'add_device', 'add_batch_size', 'add_quiet']


def fail(message: object, status: int = 2) -> int:
    r"""Prints ``error: <message>`` on stderr; returns :obj:`status`, the
    exit status (2: a problem with the call)."""
    print(f'error: {message}', file=sys.stderr)
    return status


def add_device(parser: argparse.ArgumentParser) -> None:
    r"""``--device``: the torch device the model runs on."""
    parser.add_argument('--device', default='cpu',
                        help='torch device: cpu or cuda[:i] (default: cpu)')


def add_batch_size(parser: argparse.ArgumentParser, default: int) -> None:
    r"""``--batch-size N``: molecules per forward pass."""
    parser.add_argument('--batch-size', type=int, default=default,
                        metavar='N', help=f'molecules per forward pass '
                        f'(default: {default})')


def add_quiet(parser: argparse.ArgumentParser) -> None:
    r"""``--quiet``: no progress bar."""
    parser.add_argument('--quiet', action='store_true',
                        help='no progress bar (the summary line stays)')
