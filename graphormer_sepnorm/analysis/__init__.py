r"""Analysis of learned representations."""
from .graph_token import (anisotropy, graph_token_embeddings, pairwise_cosine,
                          uniformity)

__all__ = [
    'uniformity', 'anisotropy', 'pairwise_cosine', 'graph_token_embeddings'
]
