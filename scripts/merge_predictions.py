#!/usr/bin/env python
r"""Merge the output files of the shards of one ``scripts/predict.py --shard
K/N`` run back into one file, in input order.

Example:

    python scripts/merge_predictions.py part*.csv --output predictions.csv

See ``python scripts/merge_predictions.py --help`` and
:func:`graphormer_sepnorm.predict.merge_predictions`.
"""
import sys
from pathlib import Path

# Runs from a checkout without installation too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphormer_sepnorm.cli.merge import merge_main  # noqa: E402

if __name__ == '__main__':
    sys.exit(merge_main())
