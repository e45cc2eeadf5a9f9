"""Graphormer with SepNorm on PyTorch Geometric."""

__version__ = "0.1.0"
