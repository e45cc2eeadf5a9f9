#!/usr/bin/env python
r"""Bundle trained models into the package: the training runs given become
the members of a bundled model (``--model zinc`` / ``--model molhiv`` of
scripts/predict.py), stored as float16 with a model card each.

Examples:

    python scripts/bundle_model.py zinc runs/zinc_subset_sep_seed0
    python scripts/bundle_model.py molhiv runs/molhiv_sep_seed{0,1,2,3} \
        --data-root /tmp/data --raw-source ../shared/data/ogbg_molhiv

See ``python scripts/bundle_model.py --help`` and
:mod:`benchmarks.bundling.build`.
"""
import sys
from pathlib import Path

# Runs from a checkout without installation too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bundling.cli import build_parser, main  # noqa: E402

__all__ = ['build_parser', 'main']

if __name__ == '__main__':
    sys.exit(main())
