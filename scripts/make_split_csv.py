#!/usr/bin/env python
"""Write a benchmark's splits (ZINC-subset or MolHIV) as one CSV of SMILES,
target, split and id, the same molecules chemprop trains on, so that
scripts/train.py can train on them from SMILES (data.name=csv,
data.split=column, data.split_column=split), with any featurizer.

Example:
    python scripts/make_split_csv.py --dataset zinc_subset \\
        --source ../shared/data/ZINC-proxy --output data/zinc_subset_smiles.csv
"""
import argparse
import sys

from graphormer_sepnorm.baselines import BASELINE_DATASETS, write_splits_csv


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
    args = parser.parse_args(argv)
    try:
        path = write_splits_csv(args.dataset, args.source, args.output)
    except (FileNotFoundError, ValueError, OSError) as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
