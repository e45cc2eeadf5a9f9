r"""Graphormer with SepNorm (separate graph-token and node-token
normalization) on PyTorch Geometric."""

__version__ = "0.1.0"

from .models import GraphormerSepNorm  # noqa: E402
from .nn import SepNorm, ShareNorm  # noqa: E402
from .transforms import AddShortestPaths  # noqa: E402

__all__ = ['GraphormerSepNorm', 'SepNorm', 'ShareNorm', 'AddShortestPaths',
           '__version__']
