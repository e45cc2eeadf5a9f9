r"""Where feature values sit in the reference's embedding tables (512 rows per
feature column, the shifts of atom and edge ids, its unreachable distance),
and the vocabularies of our featurizers that select rows of them."""

#: :func:`ogb.utils.features.get_atom_feature_dims` and
#: :func:`~ogb.utils.features.get_bond_feature_dims`.
OGB_ATOM_VOCAB_SIZES = (119, 5, 12, 12, 10, 6, 6, 2, 2)
OGB_BOND_VOCAB_SIZES = (5, 6, 2)
#: ZINC (:func:`~graphormer_sepnorm.data.featurize.smiles_to_zinc_graph`):
#: 28 atom types, bond types 1..3.
ZINC_ATOM_VOCAB_SIZES = (28, )
ZINC_BOND_VOCAB_SIZES = (4, )

# The reference's tables hold 512 rows per feature column.
_COLUMN_ROWS = 512
# Offsets of a value inside its column's block (see the package docstring).
_ATOM_SHIFT = 3
_MULTI_HOP_EDGE_SHIFT = 3
_SINGLE_EDGE_SHIFT = 2
# The reference's Floyd-Warshall calls distance 510 "unreachable": spatial
# position 511.
_REFERENCE_UNREACHABLE = 510


def default_vocab_sizes(featurizer: str) -> tuple[tuple[int, ...],
                                                  tuple[int, ...]]:
    r"""Atom and bond vocabulary sizes of a featurizer name
    (:obj:`"ogb"` or :obj:`"zinc"`)."""
    key = str(featurizer).lower().strip()
    if key == 'ogb':
        return OGB_ATOM_VOCAB_SIZES, OGB_BOND_VOCAB_SIZES
    if key == 'zinc':
        return ZINC_ATOM_VOCAB_SIZES, ZINC_BOND_VOCAB_SIZES
    raise ValueError(f"Unknown featurizer {featurizer!r}; valid choices are "
                     f"'ogb' and 'zinc' (or pass atom_vocab_sizes and "
                     f"bond_vocab_sizes)")
