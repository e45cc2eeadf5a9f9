r"""Chemistry helpers (molecular property labels computed with RDKit)."""
from .penalized_logp import (
    ZINC_CYCLE_COEF,
    ZINC_LOGP_COEF,
    ZINC_OFFSET,
    ZINC_SA_COEF,
    penalized_logp_terms,
    zinc_normalized_penalized_logp,
)

__all__ = [
    'ZINC_LOGP_COEF',
    'ZINC_SA_COEF',
    'ZINC_CYCLE_COEF',
    'ZINC_OFFSET',
    'penalized_logp_terms',
    'zinc_normalized_penalized_logp',
]
