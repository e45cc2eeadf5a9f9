r"""The walk along the stored shortest paths that lists, for the multi-hop
edge encoding, which edge every hop of every node pair's path crosses.

It runs on the host, in the data pipeline (see
:func:`~graphormer_sepnorm.transforms.batch_layout.batch_layout`), compiled
with Numba: the model then only gathers and adds the rows it names.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ['walk_paths']


def walk_paths(distance: np.ndarray, path_next: np.ndarray,
               edge_ids: np.ndarray, block_graphs: np.ndarray,
               block_nodes: np.ndarray, max_hops: int,
               num_rows: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The (pair, hop, edge) triples of the first :obj:`max_hops` hops of
    every node pair's shortest path, as two int64 arrays: the pair's index
    among the packed node pairs, and the row of the stacked per-hop edge
    tables (:obj:`edge id + hop * num_rows`).

    The node pairs are packed in blocks of :obj:`[graphs, nodes, nodes]`
    (block :obj:`k` holds :obj:`block_graphs[k]` graphs padded to
    :obj:`block_nodes[k]` nodes). Triples come pair by pair, hops in order,
    so that adding their rows in this order gives the same sums on every
    run.

    Args:
        distance (np.ndarray): Hop distance of every packed pair, :obj:`-1`
            where unreachable or padding (no hops).
        path_next (np.ndarray): The next node on one shortest path from the
            pair's first node towards its second, local to the graph.
        edge_ids (np.ndarray): The edge of every packed pair
            (:obj:`num_rows - 1` where there is none).
        block_graphs (np.ndarray): Graphs of each block.
        block_nodes (np.ndarray): Nodes (padded) of each block.
        max_hops (int): Hops of a path that are listed.
        num_rows (int): Rows of each hop's edge table.
    """
    return _walk_kernel(distance, path_next, edge_ids, block_graphs,
                        block_nodes, max_hops, num_rows)


@numba.njit(cache=True, nogil=True)
def _walk_kernel(distance, path_next, edge_ids, block_graphs, block_nodes,
                 max_hops, num_rows):  # noqa: ANN
    total = 0
    for pair in range(distance.shape[0]):
        if distance[pair] > 0:
            total += min(distance[pair], max_hops)
    pairs = np.empty(total, dtype=np.int64)
    rows = np.empty(total, dtype=np.int64)
    k = 0
    base = 0
    for block in range(block_nodes.shape[0]):
        size = block_nodes[block]
        for _ in range(block_graphs[block]):
            for local in range(size * size):
                pair = base + local
                target = local % size
                current = local // size
                for hop in range(min(max(distance[pair], 0), max_hops)):
                    step = path_next[base + current * size + target]
                    pairs[k] = pair
                    rows[k] = edge_ids[base + current * size + step] + \
                        hop * num_rows
                    k += 1
                    current = step
            base += size * size
    return pairs, rows
