#!/usr/bin/env python
r"""Pretrain GraphormerSepNorm without labels on a SMILES corpus; see
``--help``.

A thin wrapper over :func:`graphormer_sepnorm.cli.pretrain.pretrain_main`.
"""
import sys

from graphormer_sepnorm.cli.pretrain import pretrain_main

if __name__ == '__main__':
    sys.exit(pretrain_main())
