#!/usr/bin/env python
"""Graph-token geometry of trained models (the SepNorm paper's claim): the
uniformity and anisotropy of the graph-token embeddings of each run on a
split of its own dataset, summarized per dataset and norm over seeds
(SepNorm against ShareNorm with Welch's test), written to
graph_token_geometry.json with a plot of the pairwise cosine similarities
(graph_token_geometry.png). scripts/results_table.py --geometry puts the
JSON's table and verdicts into the results.

A thin wrapper over :mod:`graphormer_sepnorm.analysis.graph_token_cli` (also
``graphormer-sepnorm graph-token-analysis``); see ``--help``."""
import sys

from graphormer_sepnorm.analysis.graph_token_cli import build_parser, main

__all__ = ['build_parser', 'main']

if __name__ == '__main__':
    sys.exit(main())
