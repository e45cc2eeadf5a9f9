#!/usr/bin/env python
"""Write a benchmark's splits (ZINC-subset or MolHIV) as one CSV of SMILES,
target, split and id, the same molecules chemprop trains on, so that
scripts/train.py can train on them from SMILES (data.name=csv,
data.split=column, data.split_column=split), with any featurizer.

Examples:
    python scripts/make_split_csv.py --dataset zinc_subset \\
        --source ../shared/data/ZINC-proxy --output data/zinc_subset_smiles.csv
    python scripts/make_split_csv.py --dataset molhiv \\
        --source ../shared/data/ogbg_molhiv --train-molecules 2000 \\
        --output data/molhiv_train2000.csv
"""
import argparse
import sys

from graphormer_sepnorm.data.molecule_splits import (BASELINE_DATASETS,
                                                     write_splits_csv)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        epilog=__doc__.split('\n\n', 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--dataset', required=True, choices=BASELINE_DATASETS)
    parser.add_argument('--source', required=True,
                        help='the dataset folder: ../shared/data/ZINC-proxy '
                        '(reads smiles/{train,val,test}.csv) or '
                        '../shared/data/ogbg_molhiv (OGB layout)')
    parser.add_argument('--output', required=True, help='CSV file to write')
    parser.add_argument('--train-molecules', type=int, default=None,
                        help='keep only this many training molecules, drawn '
                        'as whole Bemis-Murcko scaffold groups (seed 0; the '
                        'same subsample as benchmarks/chemprop_baseline.py '
                        '--train-molecules); validation and test stay whole '
                        '(default: all)')
    args = parser.parse_args(argv)
    try:
        path = write_splits_csv(args.dataset, args.source, args.output,
                                args.train_molecules)
    except (FileNotFoundError, ValueError, OSError) as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
