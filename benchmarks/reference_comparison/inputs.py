r"""The graphs and models both sides of the reference comparison read
(``benchmarks/compare_reference.py``): real ZINC graphs and MolHIV
molecules, the reference's own preprocessing of them, and the path-edge
tensor it stores, built from ours."""
from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np
import torch

from graphormer_sepnorm.data.featurize import (FeaturizationError,
                                               smiles_to_ogb_graph)

#: The reference collator's :obj:`spatial_pos_max` (our models mask the
#: same pairs with :obj:`max_attention_distance=18`).
SPATIAL_POS_MAX = 20


def import_reference():
    # The reference's Floyd-Warshall (algos_graphormer.pyx, built by
    # pyximport when its collator is imported) is Python-2 Cython ('long'):
    # Cython 3.1 and later reject it at their default language level, as on
    # the first GPU machine. The first pyximport installed is the one used.
    try:
        import pyximport
        pyximport.install(setup_args={'include_dirs': np.get_include()},
                          language_level=2)
    except ImportError:
        pass  # Reported below, with the install hint.
    try:
        from transformers.models.deprecated.graphormer import (
            collating_graphormer, configuration_graphormer,
            modeling_graphormer)
    except ImportError as error:
        sys.exit(f"The reference needs transformers and Cython: pip install "
                 f"-e .[reference] ({error})")
    return collating_graphormer, configuration_graphormer, modeling_graphormer


def load_zinc(shared: Path, count: int):
    from torch_geometric.data import Data
    arrays = np.load(shared / 'ZINC' / 'subset_partial_pyg' /
                     'val_arrays.npz')
    x_ptr, edge_ptr = arrays['x_ptr'], arrays['edge_ptr']
    graphs = []
    for g in range(min(count, len(x_ptr) - 1)):
        nodes = slice(x_ptr[g], x_ptr[g + 1])
        edges = slice(edge_ptr[g], edge_ptr[g + 1])
        graphs.append(Data(
            x=torch.from_numpy(arrays['x'][nodes]).long().view(-1, 1),
            edge_index=torch.from_numpy(arrays['edge_index'][:, edges]).long(),
            edge_attr=torch.from_numpy(arrays['edge_attr'][edges]).long(),
            y=torch.tensor([float(arrays['y'][g])])))
    return graphs


def load_molhiv(shared: Path, count: int):
    with gzip.open(shared / 'ogbg_molhiv' / 'mapping' / 'mol.csv.gz',
                   'rt') as f:
        next(f)
        rows = [line.rstrip('\n').split(',') for line in f]
    graphs = []
    for label, smiles, *_ in rows:
        if len(graphs) == count:
            break
        try:
            graph = smiles_to_ogb_graph(smiles)
        except FeaturizationError:
            continue
        graph.y = torch.tensor([float(label)])
        graphs.append(graph)
    return graphs


def reference_item(graph):
    return {'edge_index': graph.edge_index.numpy(),
            'edge_attr': graph.edge_attr.numpy(),
            'node_feat': graph.x.view(graph.num_nodes, -1).numpy(),
            'num_nodes': graph.num_nodes, 'y': graph.y.numpy()}


def materialise_path_edges(graph, hops: int) -> np.ndarray:
    r"""``[n, n, hops, features]`` edge-feature ids along our shortest paths
    (0 = no hop), from ``spd`` / ``path_next``: what the reference's
    preprocessing stores."""
    n = graph.num_nodes
    spd = graph.spd.view(n, n).numpy()
    nxt = graph.path_next.view(n, n).numpy().astype(np.int64)
    edge_attr = graph.edge_attr.view(graph.edge_index.size(1), -1).numpy()
    dense = np.zeros((n, n, edge_attr.shape[1]), np.int64)
    src, dst = graph.edge_index.numpy()
    dense[src, dst] = edge_attr + 1
    hops = max(1, min(hops, int(spd.max())))
    out = np.zeros((n, n, hops, edge_attr.shape[1]), np.int64)
    current = np.repeat(np.arange(n)[:, None], n, 1)
    target = np.repeat(np.arange(n)[None, :], n, 0)
    for hop in range(hops):
        active = spd > hop
        step = np.where(active, nxt[current, target], current)
        out[:, :, hop] = np.where(active[..., None], dense[current, step], 0)
        current = step
    return out


def jsonable_to(batch, device):
    if isinstance(batch, dict):
        return {key: value.to(device) for key, value in batch.items()}
    return batch.to(device)
