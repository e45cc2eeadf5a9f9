r"""Analysis of learned representations."""
from .graph_token import anisotropy, pairwise_cosine, uniformity

__all__ = ['uniformity', 'anisotropy', 'pairwise_cosine']
