#!/usr/bin/env python
r"""Re-evaluate a trained model on a dataset split; see ``--help``.

A thin wrapper over :func:`graphormer_sepnorm.cli.train.evaluate_main`.
"""
import sys

from graphormer_sepnorm.cli.train import evaluate_main

if __name__ == '__main__':
    sys.exit(evaluate_main())
