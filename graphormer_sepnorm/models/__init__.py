r"""Models."""
from .graphormer_sepnorm import NORM_NAMES, GraphormerSepNorm

__all__ = ['GraphormerSepNorm', 'NORM_NAMES']
