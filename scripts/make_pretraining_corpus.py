#!/usr/bin/env python
"""Build the pretraining corpus: the MOSES molecules (1.9M ZINC Clean Leads
SMILES from the molsets 0.3.1 wheel, MIT license) as canonical SMILES,
deduplicated, without any validation or test molecule of ZINC-subset,
ZINC-full, MolHIV or the README's CSV example (matched by canonical SMILES,
InChIKey or InChIKey connectivity block), written to
<data-root>/pretraining/moses/{train.smi,val.smi,manifest.json}. A complete
corpus is not built again (its manifest is printed).

Example (about 10 minutes on 2 cores):
    python scripts/make_pretraining_corpus.py --data-root data \\
        --exclusion-root ../shared/data
"""
import argparse
import json
import os
import sys

from graphormer_sepnorm.data.errors import DataError
from graphormer_sepnorm.pretraining.corpus import build_corpus, corpus_dir
from graphormer_sepnorm.pretraining.exclusions import EXCLUSION_SOURCES
from graphormer_sepnorm.training.config import DATA_ROOT_ENV


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        epilog=__doc__.split('\n\n', 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        '--data-root', default=os.environ.get(DATA_ROOT_ENV, 'data'),
        help=f'the data root (as data.root); default: ${DATA_ROOT_ENV} or '
        f'"data", now %(default)s')
    parser.add_argument(
        '--wheel', metavar='PATH',
        help='molsets-0.3.1-py3-none-any.whl; default: downloaded with '
        '"pip download --no-deps molsets==0.3.1" into '
        '<data-root>/pretraining/downloads')
    parser.add_argument(
        '--exclusion-root', metavar='DIR',
        help='folder holding the exclusion sources laid out like '
        '../shared/data (ZINC-proxy/, zinc250k/, ogbg_molhiv/); default: '
        'the data root')
    parser.add_argument('--zinc-subset', metavar='DIR',
                        help='ZINC-subset: a folder with smiles/{train,val,'
                        'test}.csv (default: <exclusion-root>/ZINC-proxy)')
    parser.add_argument('--zinc-full', metavar='DIR',
                        help="ZINC-full: a folder with JT-VAE's "
                        'jtvae_valid.txt and jtvae_test.txt (or valid.txt, '
                        'test.txt) (default: <exclusion-root>/zinc250k)')
    parser.add_argument('--molhiv', metavar='DIR',
                        help='MolHIV: OGB\'s ogbg_molhiv folder (default: '
                        '<exclusion-root>/ogbg_molhiv)')
    parser.add_argument('--csv-example', metavar='FILE',
                        help="the SMILES file of the README's CSV example, "
                        'all of it excluded (default: '
                        '<exclusion-root>/zinc250k/jtvae_test.txt)')
    parser.add_argument('--skip', action='append', default=[],
                        choices=list(EXCLUSION_SOURCES), metavar='SOURCE',
                        help='do not exclude this source (recorded in the '
                        'manifest); repeatable; one of '
                        f'{", ".join(EXCLUSION_SOURCES)}')
    parser.add_argument('--val-size', type=int, default=10_000,
                        help='molecules held out in val.smi; default: '
                        '%(default)s')
    parser.add_argument('--seed', type=int, default=0,
                        help='seed of the shuffle; default: %(default)s')
    parser.add_argument('--processes', type=int, default=2,
                        help='worker processes for RDKit; default: '
                        '%(default)s')
    parser.add_argument('--quiet', action='store_true',
                        help='no progress bars')
    args = parser.parse_args(argv)
    paths = {source: value for source, value in (
        ('zinc_subset', args.zinc_subset), ('zinc_full', args.zinc_full),
        ('molhiv', args.molhiv), ('csv_example', args.csv_example))
        if value is not None}
    try:
        manifest = build_corpus(
            args.data_root, wheel=args.wheel,
            exclusion_root=args.exclusion_root, exclusion_paths=paths,
            skip=args.skip, val_size=args.val_size, seed=args.seed,
            processes=args.processes, progress=not args.quiet)
    except (DataError, ValueError, OSError) as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    print(json.dumps(manifest, indent=2))
    print(f'corpus: {corpus_dir(args.data_root)}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
