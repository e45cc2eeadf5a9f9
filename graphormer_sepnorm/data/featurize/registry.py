r"""The featurizers by name, and the vocabulary sizes of their atom and
bond features."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .ogb import smiles_to_ogb_graph
from .zinc import ZINC_ATOM_TYPES, ZINC_BOND_TYPES, smiles_to_zinc_graph

if TYPE_CHECKING:  # pragma: no cover
    from torch_geometric.data import Data

__all__ = ['FEATURIZERS', 'get_featurizer', 'featurizer_vocab_sizes']


#: Featurizers by name: :obj:`"zinc"` (:func:`smiles_to_zinc_graph`) and
#: :obj:`"ogb"` (:func:`smiles_to_ogb_graph`).
FEATURIZERS: dict[str, Callable[..., Data]] = {
    'zinc': smiles_to_zinc_graph,
    'ogb': smiles_to_ogb_graph,
}


def get_featurizer(name: str) -> Callable[..., Data]:
    r"""Returns the featurizer registered under :obj:`name` in
    :obj:`FEATURIZERS`.

    Args:
        name (str): :obj:`"zinc"` or :obj:`"ogb"` (case-insensitive).

    Raises:
        ValueError: If :obj:`name` is not a registered featurizer.
    """
    key = name.lower().strip() if isinstance(name, str) else name
    if key not in FEATURIZERS:
        raise ValueError(
            f"Unknown featurizer {name!r}; valid choices are "
            f"{sorted(FEATURIZERS)}")
    return FEATURIZERS[key]


def featurizer_vocab_sizes(
        name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    r"""The number of values of each atom feature column and of each bond
    feature column of the featurizer :obj:`name` (the model's
    :obj:`atom_vocab_sizes` and :obj:`bond_vocab_sizes`).

    :obj:`"pyg"` names the graphs of PyG's
    :func:`torch_geometric.utils.from_smiles` (9 atom and 3 bond columns
    whose meanings differ from OGB's): a model built with these sizes and
    :obj:`featurization="pyg"` trains on them in one's own loop (this
    package's pipelines featurize with :obj:`"zinc"` or :obj:`"ogb"`).

    Args:
        name (str): :obj:`"zinc"`, :obj:`"ogb"` or :obj:`"pyg"`
            (case-insensitive).
    """
    if str(name).lower().strip() == 'pyg':
        from torch_geometric.utils.smiles import e_map, x_map
        return (tuple(len(values) for values in x_map.values()),
                tuple(len(values) for values in e_map.values()))
    get_featurizer(name)  # an unknown name raises here
    if name.lower().strip() == 'zinc':
        return (len(ZINC_ATOM_TYPES), ), (len(ZINC_BOND_TYPES), )
    from ogb.utils.features import get_atom_feature_dims, get_bond_feature_dims
    return tuple(get_atom_feature_dims()), tuple(get_bond_feature_dims())
