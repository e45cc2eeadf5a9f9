r"""The command line of :obj:`scripts/bundle_model.py`: training runs in, the
members of a bundled model out (:func:`~.build.bundle_runs`)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

from graphormer_sepnorm.bundled import BUNDLED_MODELS, ENV_VAR

__all__ = ['build_parser', 'main']

EPILOG = f"""\
Each run becomes the member <NAME>_seed<seed>.safetensors (float16, mode
0644); the previous members of NAME are replaced. A member may take at most
5 MB, all members of NAME together 10 MB. The validation metrics in its model
card are measured on the dataset's graphs with the float16 weights; test
metrics only for final runs (results.json with a test_metric_at_best_val).

examples:
  python scripts/bundle_model.py zinc runs/zinc_subset_sep_seed0
  python scripts/bundle_model.py zinc runs/final/sep_seed{{0,1,2,3}} \\
      --data-root /tmp/data --raw-source ../shared/data/ZINC-proxy
  python scripts/bundle_model.py zinc ../runs/trial/sep_seed0 \\
      --results benchmarks/results/tuning/trial/sep_seed0/results.json \\
      --note "Interim model, to be replaced by the final runs."

The bundled folder is graphormer_sepnorm/bundled/ (or ${ENV_VAR}).
"""


def build_parser() -> argparse.ArgumentParser:
    r"""The parser of :obj:`scripts/bundle_model.py`."""
    from graphormer_sepnorm.training.config import DATA_ROOT_ENV

    parser = argparse.ArgumentParser(
        prog='bundle_model.py',
        description='Bundle trained models into the package: write the '
        'training runs RUN_DIR as the members of the bundled model NAME '
        '(one run: one model; several runs with different seeds: an '
        'ensemble), stored as float16, each with a model card saying what '
        'it is and what it scores.',
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    with_files = {name: entry for name, entry in BUNDLED_MODELS.items()
                  if entry.single_of is None}
    parser.add_argument('name', metavar='NAME', choices=sorted(with_files),
                        help='the bundled model: ' + ', '.join(
                            f'{name} ({entry.dataset})'
                            for name, entry in with_files.items()))
    parser.add_argument('run_dirs', nargs='+', type=Path, metavar='RUN_DIR',
                        help='finished training run directories '
                        '(model.safetensors, results.json, config.yaml), '
                        'one per seed')
    parser.add_argument('--results', action='append', type=Path, default=[],
                        metavar='PATH',
                        help='a copy of a run\'s results.json with its '
                        'protocol entry (as benchmarks/cpu_protocol.py '
                        'commits it); give it once per RUN_DIR, in the same '
                        'order (default: each run\'s own results.json)')
    parser.add_argument('--output-dir', type=Path, metavar='DIR',
                        help='where to write the members (default: the '
                        'bundled folder)')
    parser.add_argument('--data-root', type=Path, metavar='DIR',
                        help='data root of the evaluation (default: '
                        f'${DATA_ROOT_ENV}, else the run\'s data.root)')
    parser.add_argument('--raw-source', type=Path, metavar='DIR',
                        help='folder to copy the raw dataset files from when '
                        'the data root lacks them (default: the run\'s '
                        'data.raw_source)')
    parser.add_argument('--note', metavar='TEXT',
                        help='a sentence for the model cards, e.g. that the '
                        'model is interim')
    parser.add_argument('--batch-size', type=int, default=256, metavar='N',
                        help='graphs per evaluation batch (default: 256)')
    parser.add_argument('--device', default='cpu',
                        help='where to evaluate: cpu (default), cuda, ...')
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    r"""Runs :obj:`scripts/bundle_model.py`; returns the exit status (2 with
    a one-line message for anything that cannot be bundled)."""
    from graphormer_sepnorm.checkpoint import CheckpointError, read_card
    from graphormer_sepnorm.training.config import DATA_ROOT_ENV
    from .build import MB, bundle_runs

    args = build_parser().parse_args(argv)
    try:
        paths = bundle_runs(
            args.name, args.run_dirs, args.results, args.output_dir,
            args.data_root or os.environ.get(DATA_ROOT_ENV), args.raw_source,
            args.note, args.batch_size, args.device)
    except (CheckpointError, FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in paths:
        evaluation = read_card(path)[0].extra['evaluation']
        scores = [f"{split} {result['metric']} {result['value']:.4f}"
                  if isinstance(result, dict) else f"{split} {result}"
                  for split, result in evaluation.items()
                  if split != 'weights']
        print(f"{path} ({path.stat().st_size / MB:.2f} MB): "
              f"{'; '.join(scores)}")
    return 0
