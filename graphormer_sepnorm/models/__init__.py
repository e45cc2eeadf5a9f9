r"""Models."""
from .graphormer_sepnorm import GraphormerSepNorm

__all__ = ['GraphormerSepNorm']
