#!/usr/bin/env python
"""Graph-token geometry of trained models (the SepNorm paper's claim): the
uniformity and anisotropy of the graph-token embeddings of each run on a
split of its own dataset, summarized per dataset and norm over seeds
(SepNorm against ShareNorm with Welch's test), written to
graph_token_geometry.json with a plot of the pairwise cosine similarities
(graph_token_geometry.png). scripts/results_table.py --geometry puts the
JSON's table and verdicts into the results.

A thin wrapper over :mod:`benchmarks.analysis.graph_token_cli`; see
``--help``."""
import sys
from pathlib import Path

# The research tooling (benchmarks/) is imported from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.analysis.graph_token_cli import build_parser, main

__all__ = ['build_parser', 'main']

if __name__ == '__main__':
    sys.exit(main())
