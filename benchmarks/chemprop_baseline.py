#!/usr/bin/env python
r"""chemprop's default D-MPNN on our ZINC-subset or MolHIV splits, or on the
binary tasks of a CSV training config split as our run splits them, under
the same CPU budget and seeds as our runs; selects on val, reports test.

A thin wrapper over
:func:`benchmarks.baselines.chemprop_dmpnn.train_chemprop`. Needs
the optional extra: ``pip install ".[baselines]"`` (chemprop 2.3).

Examples (one thread per run; two runs side by side on two cores)::

    python benchmarks/chemprop_baseline.py --dataset zinc_subset \
        --source ../shared/data/ZINC-proxy --seed 0 --max-minutes 35
    python benchmarks/chemprop_baseline.py --dataset molhiv \
        --source ../shared/data/ogbg_molhiv --seed 1 --max-epochs 30
    python benchmarks/chemprop_baseline.py --dataset molhiv \
        --source ../shared/data/ogbg_molhiv --seed 1 --max-epochs 30 --resume
    python benchmarks/chemprop_baseline.py --dataset molhiv \
        --source ../shared/data/ogbg_molhiv --train-molecules 2000 --seed 0
    python benchmarks/chemprop_baseline.py \
        --config configs/cpu/moleculenet/tox21.yaml --split-seed 1 --seed 1
    python benchmarks/chemprop_baseline.py --dataset molhiv \
        --source ../shared/data/ogbg_molhiv --seed 0 \
        --molecule-featurizers rdkit_2d
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional, Sequence

# The research tooling (benchmarks/) is imported from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphormer_sepnorm.data.molecule_splits import BASELINE_DATASETS

SUMMARY_KEYS = ('dataset', 'model_family', 'seed', 'metric', 'steps',
                'epochs_completed', 'stopped_by_cpu_budget', 'best_epoch',
                'best_val_metric', 'test_metric_at_best_val', 'wall_time_s',
                'cpu_time_s')


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog='chemprop_baseline.py',
        description=__doc__.split('\n\n')[0].replace('\n', ' '),
        epilog=__doc__.split('\n\n', 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument('--dataset', choices=BASELINE_DATASETS,
                       help='A benchmark (with --source).')
    where.add_argument('--config',
                       help='Instead of --dataset: a training config whose '
                       'data section is a CSV of binary tasks (data.name: '
                       'csv); chemprop gets the molecules, labels and split '
                       'our run of it gets, and is scored by ROC-AUC '
                       'averaged over tasks.')
    parser.add_argument('--source',
                        help='With --dataset: its folder, '
                        '../shared/data/ZINC-proxy (reads smiles/{train,val,'
                        'test}.csv) or ../shared/data/ogbg_molhiv (OGB '
                        'layout, scaffold split).')
    parser.add_argument('--split-seed', type=int, default=None,
                        help="With --config: data.split_seed (default: the "
                        "config's).")
    parser.add_argument('--train-molecules', type=int, default=None,
                        help='Train on this many training molecules only, '
                        'drawn as whole scaffold groups (seed 0, as '
                        'scripts/make_split_csv.py --train-molecules); '
                        'validation and test stay whole (default: all).')
    parser.add_argument('--output-dir', default='runs',
                        help='Folder of the run directories (default: runs);'
                        ' the run goes to <output-dir>/<dataset>_chemprop_'
                        'seed<seed>.')
    parser.add_argument('--seed', type=int, default=0,
                        help='Seed of the weights and batch order '
                        '(default: 0).')
    parser.add_argument('--max-epochs', type=int, default=50,
                        help="Epochs, over which chemprop's learning rate "
                        'decays (default: 50, chemprop\'s default).')
    parser.add_argument('--max-minutes', type=float, default=None,
                        help='CPU-time budget of training + validation, in '
                        'minutes: no epoch starts that would overrun it '
                        '(default: none).')
    parser.add_argument('--batch-size', type=int, default=64,
                        help="Molecules per step (default: 64, chemprop's "
                        'default).')
    parser.add_argument('--threads', type=int, default=1,
                        help='torch threads (default: 1).')
    parser.add_argument('--molecule-featurizers', nargs='+', default=[],
                        metavar='NAME',
                        help="Extra per-molecule descriptors, as chemprop "
                        "train --molecule-featurizers: chemprop's "
                        "featurizers by registry name (rdkit_2d, "
                        "morgan_binary, morgan_count, v1_rdkit_2d, "
                        "v1_rdkit_2d_normalized, charge in chemprop 2.3), "
                        "concatenated to the fingerprint, standardized on "
                        "the training split; the run goes to <output-dir>/"
                        "<dataset>_chemprop_<names>_seed<seed> (default: "
                        "none).")
    parser.add_argument('--resume', action='store_true',
                        help='Continue the run from checkpoints/last.ckpt.')
    parser.add_argument('--no-progress-bar', action='store_true',
                        help='Hide the progress bar (for logs).')
    args = parser.parse_args(argv)
    if args.dataset and not args.source:
        parser.error('--dataset needs --source (the dataset folder)')
    if args.config and (args.source or args.train_molecules):
        parser.error('--config reads its data from the config; drop '
                     '--source and --train-molecules')
    if args.split_seed is not None and not args.config:
        parser.error('--split-seed applies to --config only')
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    try:
        from benchmarks.baselines.chemprop_dmpnn import train_chemprop
    except ImportError as error:
        print(f"error: the chemprop baseline needs chemprop ({error}); "
              f"install it with: pip install \".[baselines]\"",
              file=sys.stderr)
        return 2
    from graphormer_sepnorm.training.config import ConfigError
    try:
        results = train_chemprop(
            args.dataset or 'csv', args.source or args.config,
            output_dir=args.output_dir, split_seed=args.split_seed,
            seed=args.seed, max_epochs=args.max_epochs,
            max_cpu_minutes=args.max_minutes, batch_size=args.batch_size,
            threads=args.threads, resume=args.resume,
            train_molecules=args.train_molecules,
            molecule_featurizers=args.molecule_featurizers,
            progress_bar=not args.no_progress_bar)
    except (ConfigError, FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps({k: results[k] for k in SUMMARY_KEYS}, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
