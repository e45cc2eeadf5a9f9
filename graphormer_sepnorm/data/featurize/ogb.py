r"""The OGB featurizer: SMILES to the graphs of the OGB molecule datasets
(:func:`ogb.utils.smiles2graph`), with readable errors."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from .canonical import parse_canonical
from .smiles import _parse_smiles, _quiet_rdkit

if TYPE_CHECKING:  # pragma: no cover
    from torch_geometric.data import Data

__all__ = ['smiles_to_ogb_graph']


def smiles_to_ogb_graph(smiles: str, max_nodes: int | None = None,
                        canonical: bool = True) -> Data:
    r"""Converts a SMILES string into a graph in the format of the OGB
    molecule datasets (*e.g.*, :obj:`ogbg-molhiv`), using
    :func:`ogb.utils.smiles2graph` on the molecule's canonical SMILES (see
    :mod:`~graphormer_sepnorm.data.featurize.canonical`), so every spelling
    of a molecule gives the same graph.

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
    from ogb.utils import smiles2graph

    if canonical:  # Validation with readable errors, and the atom order:
        text, _ = parse_canonical(smiles, max_nodes)
    else:
        _parse_smiles(smiles, max_nodes)  # Validation with readable errors.
        text = smiles.strip()
    with _quiet_rdkit():
        graph = smiles2graph(text)
    return (graph['node_feat'].astype(np.int64),
            graph['edge_index'].astype(np.int64),
            graph['edge_feat'].astype(np.int64))
