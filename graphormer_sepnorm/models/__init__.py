r"""Models."""
from .config import NORM_NAMES, GraphormerConfig
from .graphormer_sepnorm import GraphormerSepNorm

__all__ = ['GraphormerSepNorm', 'GraphormerConfig', 'NORM_NAMES']
