r"""The example training CSV's labels, computed with RDKit: the ZINC
benchmark's penalized logP and Crippen logP of real molecules
(``scripts/make_property_csv.py``). Research tooling, outside the package."""
from .penalized_logp import (
    ZINC_CYCLE_COEF,
    ZINC_LOGP_COEF,
    ZINC_OFFSET,
    ZINC_SA_COEF,
    combine_penalized_logp_terms,
    penalized_logp_terms,
    zinc_normalized_penalized_logp,
)
from .property_table import PROPERTY_COLUMNS, write_property_csv

__all__ = [
    'ZINC_LOGP_COEF',
    'ZINC_SA_COEF',
    'ZINC_CYCLE_COEF',
    'ZINC_OFFSET',
    'penalized_logp_terms',
    'combine_penalized_logp_terms',
    'zinc_normalized_penalized_logp',
    'PROPERTY_COLUMNS',
    'write_property_csv',
]
