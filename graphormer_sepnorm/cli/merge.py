r"""The command line of :obj:`scripts/merge_predictions.py`: the output files
of the shards of one ``predict --shard K/N`` run merged into one file.

Problems with the call (parts of different runs, a missing, repeated or
unfinished shard, an output that cannot be written) print one
``error: ...`` line to stderr and exit with status 2.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from .options import add_quiet, fail

__all__ = ['merge_parser', 'merge_main']


def merge_parser(prog: Optional[str] = None) -> argparse.ArgumentParser:
    r"""The parser of :obj:`scripts/merge_predictions.py`; :obj:`prog` names
    the program in the usage line (default: the running script's name)."""
    parser = argparse.ArgumentParser(
        prog=prog, description='Merge the output files of the shards of one '
        'predict --shard K/N run into one file in input order '
        '(byte for byte the unsharded output; for --top runs, the top K of '
        'all shards). Each part needs its .meta.json record beside it.',
        epilog='Refuses, with a one-line message and exit status 2, parts '
        'of different runs, a missing, repeated or unfinished shard, and an '
        'output that cannot be written.')
    parser.add_argument('parts', nargs='+', metavar='PART',
                        help='the output file of each shard, in any order')
    parser.add_argument('--output', required=True, metavar='CSV',
                        help='the merged .csv or .csv.gz')
    add_quiet(parser)
    return parser


def merge_main(argv: Optional[Sequence[str]] = None,
               prog: Optional[str] = None) -> int:
    r"""Runs :obj:`scripts/merge_predictions.py`; returns the exit status."""
    args = merge_parser(prog).parse_args(argv)
    from ..predict.merge import merge_predictions
    from ..predict.prediction import PredictionError

    try:
        rows = merge_predictions(args.parts, args.output,
                                 progress=not args.quiet)
    except PredictionError as error:
        return fail(str(error))
    print(f'Merged {len(args.parts)} shards into {args.output} ({rows:,} '
          f'rows)', file=sys.stderr)
    return 0
