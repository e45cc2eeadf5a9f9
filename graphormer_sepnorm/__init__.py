r"""Graphormer with SepNorm (separate graph-token and node-token
normalization) on PyTorch Geometric."""

from typing import TYPE_CHECKING

from .lazy_imports import lazy_getattr

if TYPE_CHECKING:  # what type checkers and editors see of the lazy names
    from .models import GraphormerConfig, GraphormerSepNorm
    from .nn import SepNorm, ShareNorm
    from .transforms import AddShortestPaths, CanonicalNodeOrder

__version__ = "0.1.0"

__all__ = ['GraphormerSepNorm', 'GraphormerConfig', 'SepNorm', 'ShareNorm',
           'AddShortestPaths', 'CanonicalNodeOrder', 'GraphormerDataLoader',
           '__version__']

# Loaded on first use, so that `graphormer_sepnorm.predict` and the command
# lines start without importing what they do not need (PyG alone takes
# seconds).
_LAZY = {'GraphormerSepNorm': '.models', 'GraphormerConfig': '.models',
         'SepNorm': '.nn', 'ShareNorm': '.nn',
         'AddShortestPaths': '.transforms', 'CanonicalNodeOrder': '.transforms',
         'GraphormerDataLoader': '.data'}

__getattr__ = lazy_getattr(__name__, _LAZY)
