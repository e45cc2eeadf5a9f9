#!/usr/bin/env python
r"""Train GraphormerSepNorm from a YAML config; see ``--help``.

A thin wrapper over :func:`graphormer_sepnorm.cli.train.train_main`.
"""
import sys

from graphormer_sepnorm.cli.train import train_main

if __name__ == '__main__':
    sys.exit(train_main())
