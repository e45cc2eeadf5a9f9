r"""The command line of :obj:`scripts/graph_token_analysis.py` (a
checkout tool, not a command of the installed package): the graph-token
geometry of trained runs (:func:`~.graph_token_report.graph_token_report`),
one line per run as it is measured, then the summary table."""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from graphormer_sepnorm.checkpoint import CheckpointError
from .graph_token_report import (PLOT_FILE, REPORT_FILE, find_model_runs,
                                 graph_token_report)
from .graph_token_summary import geometry_markdown

__all__ = ['build_parser', 'main']

DESCRIPTION = """\
Graph-token geometry of trained models (the SepNorm paper's claim): the
uniformity and anisotropy of the graph-token embeddings of each run on a
split of its own dataset, or of trained models and pretrained backbones on
the molecules of a SMILES file (--smiles), summarized per dataset and norm
over seeds
(SepNorm against ShareNorm with Welch's test), written to
graph_token_geometry.json with a plot of the pairwise cosine similarities
(graph_token_geometry.png). scripts/results_table.py --geometry puts the
JSON's table and verdicts into the results."""


def print_row(row: dict) -> None:
    r"""Prints one run's line as soon as it is measured."""
    print(f"{row['run']} ({row['dataset']}, {row['norm']}, seed "
          f"{row['seed']}): uniformity {row['uniformity']:.4f}, anisotropy "
          f"{row['anisotropy']:.4f} ({row['num_graphs']} {row['split']} "
          f"graphs)", flush=True)


def build_parser(prog: Optional[str] = None) -> argparse.ArgumentParser:
    r"""The parser of :obj:`scripts/graph_token_analysis.py`; :obj:`prog`
    names the program in the usage line (default: the running script's
    name)."""
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    models = parser.add_mutually_exclusive_group(required=True)
    models.add_argument('--checkpoint', nargs='+',
                        help='model.safetensors files or run directories '
                        '(e.g. a SepNorm and a ShareNorm run); with --smiles '
                        'also pretrained backbones (backbone.safetensors or '
                        'a pretraining run directory)')
    models.add_argument('--runs',
                        help='folder of run directories (e.g. '
                        'benchmarks/results/runs): every Graphormer run '
                        'below it whose model.safetensors is there or in '
                        '--weights, except other model families and '
                        'variants')
    parser.add_argument('--weights', metavar='DIR',
                        help='with --runs: the folder holding the runs\' '
                        'models at the same paths, when the run directories '
                        'lack them (run weights are not kept in git; '
                        'benchmarks/cpu_protocol.py trains in its --workdir, '
                        'e.g. runs/cpu/runs; default: the --runs folder)')
    parser.add_argument('--split', default='test',
                        choices=['train', 'val', 'test'],
                        help='split of each run\'s dataset (default: '
                        '%(default)s)')
    parser.add_argument('--smiles', metavar='FILE',
                        help='measure every model on the molecules of this '
                        'file (CSV or TSV with a smiles column, or .smi) '
                        'instead of a split of its dataset; e.g. molecules '
                        'held out from pretraining, for backbones')
    parser.add_argument('--output-dir', default='.',
                        help=f'where {REPORT_FILE} and {PLOT_FILE} go '
                        f'(default: .)')
    parser.add_argument('--data.root', dest='root',
                        help='data root (default: the one used in training)')
    parser.add_argument('--data.raw_source', dest='raw_source',
                        help='folder to copy raw files from when the root '
                        'lacks them')
    parser.add_argument('--batch-size', type=int, default=256)
    parser.add_argument('--device', default='cpu')
    return parser


def main(argv: Optional[Sequence[str]] = None,
         prog: Optional[str] = None) -> int:
    r"""Runs :obj:`scripts/graph_token_analysis.py`; returns the exit status
    (2 with a one-line message for a missing or unusable checkpoint)."""
    args = build_parser(prog).parse_args(argv)
    overrides = {k: v for k, v in (('root', args.root),
                                   ('raw_source', args.raw_source)) if v}
    try:
        if args.weights and not args.runs:
            raise ValueError('--weights goes with --runs (the folder of the '
                             'run directories whose models it holds)')
        checkpoints = (find_model_runs(args.runs, args.weights) if args.runs
                       else args.checkpoint)
        report = graph_token_report(checkpoints, args.output_dir,
                                    args.split, overrides, args.batch_size,
                                    args.device,
                                    base=args.weights or args.runs,
                                    on_row=print_row,
                                    smiles_file=args.smiles)
    except (CheckpointError, FileNotFoundError, ValueError) as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    print()
    print(geometry_markdown(report))
    print(f'wrote {REPORT_FILE} and {PLOT_FILE} in {args.output_dir}')
    return 0

