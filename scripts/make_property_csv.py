#!/usr/bin/env python
"""Write the example training CSV: real ZINC molecules (one SMILES per line
of --smiles) with two targets computed by RDKit, penalized_logp (the ZINC
benchmark's normalized penalized logP) and logp (Crippen logP). Train on it
with configs/csv_zinc_properties.yaml."""
import argparse
import sys
from pathlib import Path

# The research tooling (benchmarks/) is imported from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.chem import write_property_csv
from graphormer_sepnorm.data.text_files import read_smiles_lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--smiles', default='../shared/data/zinc250k/'
                        'jtvae_test.txt', help='text file with one SMILES per '
                        'line; default: %(default)s (5,000 real ZINC '
                        'molecules)')
    parser.add_argument('--output', default='data/zinc_properties.csv',
                        help='CSV file to write; default: %(default)s')
    parser.add_argument('--limit', type=int, default=None, metavar='N',
                        help='only the first N molecules')
    args = parser.parse_args(argv)
    if not Path(args.smiles).is_file():
        print(f'error: {args.smiles} does not exist; pass a text file with '
              f'one SMILES per line with --smiles', file=sys.stderr)
        return 2
    if args.limit is not None and args.limit < 1:
        print('error: --limit must be a positive integer', file=sys.stderr)
        return 2
    try:
        smiles = read_smiles_lines(args.smiles, args.limit)
        path = write_property_csv(smiles, args.output)
    except (ValueError, OSError) as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    print(f'wrote {len(smiles)} molecules to {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
