r"""Turn SMILES strings into PyTorch Geometric graphs.

Two featurizations are provided, one per pretrained model family:

* :func:`smiles_to_zinc_graph` reproduces the graphs of the `ZINC
  <https://pytorch-geometric.readthedocs.io/en/latest/generated/torch_geometric.datasets.ZINC.html>`_
  benchmark (benchmarking-gnns / :class:`torch_geometric.datasets.ZINC`):
  one categorical atom type per node (28 types) and one categorical bond type
  per edge (Kekulé form).
* :func:`smiles_to_ogb_graph` reproduces the graphs of the OGB molecule
  datasets (*e.g.*, :obj:`ogbg-molhiv`) via :func:`ogb.utils.smiles2graph`:
  9 categorical atom features and 3 categorical bond features.

Both raise :class:`FeaturizationError` (a :class:`ValueError`) with a message
that names the offending SMILES, the problem, and what to do about it.

Example:

.. code-block:: python

    from graphormer_sepnorm.data.featurize import get_featurizer

    featurize = get_featurizer('zinc')
    data = featurize('CC(=O)Oc1ccccc1C(=O)O')  # aspirin
    data.x.shape, data.edge_index.shape, data.edge_attr.shape
    >>> (torch.Size([13, 1]), torch.Size([2, 26]), torch.Size([26]))

One file per job:

* :mod:`~.smiles`: SMILES parsing with RDKit and
  :class:`FeaturizationError`;
* :mod:`~.zinc`: :func:`smiles_to_zinc_graph` and the ZINC atom and bond
  types;
* :mod:`~.ogb`: :func:`smiles_to_ogb_graph`;

each graph function built on an arrays function (:func:`zinc_graph_arrays`,
:func:`ogb_graph_arrays`: the same features as NumPy arrays, without PyG),
which :mod:`graphormer_sepnorm.data.molecule_graphs` uses;
* :mod:`~.registry`: :obj:`FEATURIZERS`, :func:`get_featurizer` and
  :func:`featurizer_vocab_sizes`.
"""
from .ogb import ogb_graph_arrays, smiles_to_ogb_graph
from .registry import FEATURIZERS, featurizer_vocab_sizes, get_featurizer
from .smiles import FeaturizationError
from .zinc import (ZINC_ATOM_TYPES, ZINC_BOND_TYPES, smiles_to_zinc_graph,
                   zinc_graph_arrays)

__all__ = [
    'ZINC_ATOM_TYPES',
    'ZINC_BOND_TYPES',
    'FeaturizationError',
    'smiles_to_zinc_graph',
    'smiles_to_ogb_graph',
    'zinc_graph_arrays',
    'ogb_graph_arrays',
    'FEATURIZERS',
    'get_featurizer',
    'featurizer_vocab_sizes',
]
