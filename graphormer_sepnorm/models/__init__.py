r"""Models."""
from .config import NORM_NAMES
from .graphormer_sepnorm import GraphormerConfig, GraphormerSepNorm

__all__ = ['GraphormerSepNorm', 'GraphormerConfig', 'NORM_NAMES']
