"""benchmarks/reference_comparison/inputs.py: the path-edge tensor built
from our shortest paths is the one the reference's own preprocessing
(transformers' preprocess_item, Cython Floyd-Warshall) stores, cut to the
model's hops, on random trees (one shortest path per pair, so both must
walk the same edges) with three bond features. The reference's ids are
ours shifted: 0 is no hop in both, and feature column c of value v is
v + 1 in ours and v + 3 + 512 c in the reference's (convert_to_single_emb's
offsets, then +1 twice for padding)."""
import random

import numpy as np
import pytest
import torch

pytest.importorskip('transformers.models.deprecated.graphormer')
pytest.importorskip('Cython')

from benchmarks.reference_comparison.inputs import (  # noqa: E402
    import_reference, materialise_path_edges, reference_item)
from graphormer_sepnorm.transforms import AddShortestPaths  # noqa: E402

FEATURES = 3


def random_tree(rng: random.Random, n: int):
    from torch_geometric.data import Data
    parents = [rng.randrange(k) for k in range(1, n)]
    bonds = [[rng.randrange(4) for _ in range(FEATURES)] for _ in parents]
    src = list(range(1, n)) + parents
    dst = parents + list(range(1, n))
    return Data(x=torch.tensor([[rng.randrange(20)] for _ in range(n)]),
                edge_index=torch.tensor([src, dst]),
                edge_attr=torch.tensor(bonds + bonds),
                y=torch.tensor([0.0]))


def as_ours(reference_edges: np.ndarray) -> np.ndarray:
    offsets = 2 + 512 * np.arange(reference_edges.shape[-1])
    return np.where(reference_edges > 0, reference_edges - offsets, 0)


@pytest.mark.parametrize('hops', [3, 20])
def test_path_edges_are_the_references(hops):
    collating, _, _ = import_reference()
    rng = random.Random(hops)
    for _ in range(8):
        graph = random_tree(rng, rng.randint(2, 16))
        ours = materialise_path_edges(AddShortestPaths()(graph.clone()), hops)
        theirs = np.asarray(collating.preprocess_item(
            reference_item(graph))['input_edges'])
        assert ours.shape[2] == min(hops, theirs.shape[2])
        np.testing.assert_array_equal(ours,
                                      as_ours(theirs[:, :, :ours.shape[2]]))
