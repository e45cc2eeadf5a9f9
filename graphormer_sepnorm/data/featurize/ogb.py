r"""The OGB featurizer: SMILES to the graphs of the OGB molecule datasets
(:func:`ogb.utils.smiles2graph`), with readable errors."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from rdkit import Chem

from .canonical import parse_canonical
from .smiles import _parse_smiles

if TYPE_CHECKING:  # pragma: no cover
    from torch_geometric.data import Data

__all__ = ['smiles_to_ogb_graph']


def smiles_to_ogb_graph(smiles: str, max_nodes: int | None = None,
                        canonical: bool = True) -> Data:
    r"""Converts a SMILES string into a graph in the format of the OGB
    molecule datasets (*e.g.*, :obj:`ogbg-molhiv`): the graph that
    :func:`ogb.utils.smiles2graph` gives for the molecule's canonical
    SMILES (see :mod:`~graphormer_sepnorm.data.featurize.canonical`), so
    every spelling of a molecule gives the same graph.

    Args:
        smiles (str): The SMILES string of the molecule.
        max_nodes (int, optional): If set, molecules with more than
            :obj:`max_nodes` heavy atoms are rejected. (default: :obj:`None`)
        canonical (bool, optional): If set to :obj:`False`, the graph is
            :func:`~ogb.utils.smiles2graph` of :obj:`smiles` as written (the
            graphs of OGB's datasets), whose atom order, chirality tags and
            so the model's output may depend on the spelling.
            (default: :obj:`True`)

    Returns:
        :class:`torch_geometric.data.Data` with :obj:`x` (:obj:`torch.long`,
        shape :obj:`[num_nodes, 9]`), :obj:`edge_index` (:obj:`torch.long`,
        shape :obj:`[2, 2 * num_bonds]`, in the order of
        :func:`~ogb.utils.smiles2graph`) and :obj:`edge_attr`
        (:obj:`torch.long`, shape :obj:`[2 * num_bonds, 3]`).

    Raises:
        FeaturizationError: If :obj:`smiles` is not a non-empty string, cannot
            be parsed by RDKit, or has zero or more than :obj:`max_nodes`
            atoms.
    """
    from torch_geometric.data import Data

    x, edge_index, edge_attr = ogb_graph_arrays(smiles, max_nodes,
                                                 canonical)
    return Data(x=torch.from_numpy(x), edge_index=torch.from_numpy(edge_index),
                edge_attr=torch.from_numpy(edge_attr), num_nodes=x.shape[0])


def ogb_graph_arrays(
    smiles: str,
    max_nodes: int | None = None,
    canonical: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The arrays of :func:`smiles_to_ogb_graph` as NumPy int64 arrays
    :obj:`(x [num_nodes, 9], edge_index [2, num_edges], edge_attr
    [num_edges, 3])`, without building a
    :class:`~torch_geometric.data.Data` (for batched prediction)."""
    if canonical:  # Validation with readable errors, and the atom order:
        _, mol = parse_canonical(smiles, max_nodes)
    else:
        mol = _parse_smiles(smiles, max_nodes)  # With readable errors.
    return _ogb_mol_arrays(mol)


def _ogb_mol_arrays(
        mol: Chem.Mol) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""What :func:`ogb.utils.smiles2graph` builds from the molecule it
    parses, built from :obj:`mol`, already parsed (the same
    :func:`~ogb.utils.features.atom_to_feature_vector` and
    :func:`~ogb.utils.features.bond_to_feature_vector`, the same atom and
    edge order). Atoms and bonds are read by index: iterating
    :meth:`GetAtoms` goes through RDKit's slow Python sequence wrapper."""
    from ogb.utils.features import (atom_to_feature_vector,
                                    bond_to_feature_vector)

    get_atom, get_bond = mol.GetAtomWithIdx, mol.GetBondWithIdx
    x = np.array([
        atom_to_feature_vector(get_atom(i)) for i in range(mol.GetNumAtoms())
    ], dtype=np.int64)
    bonds = [get_bond(k) for k in range(mol.GetNumBonds())]
    ends = np.array([(bond.GetBeginAtomIdx(), bond.GetEndAtomIdx())
                     for bond in bonds], dtype=np.int64).reshape(-1, 2)
    # Each bond as (i, j) then (j, i), as smiles2graph lists them:
    edge_index = np.stack([ends, ends[:, ::-1]], axis=1).reshape(-1, 2)
    bond_features = np.array(
        [bond_to_feature_vector(bond) for bond in bonds],
        dtype=np.int64).reshape(-1, 3)
    return (x, np.ascontiguousarray(edge_index.T),
            np.repeat(bond_features, 2, axis=0))
