r"""Graph transforms (PyG :class:`~torch_geometric.transforms.BaseTransform`)
and the batch structure the model reads (:func:`add_batch_layout`).

:class:`AddShortestPaths` and :class:`CanonicalNodeOrder` are loaded on
first use: importing PyG takes seconds, and prediction needs only the search
:class:`AddShortestPaths` runs (:func:`shortest_paths`).
"""
from .batch_layout import BatchLayout, add_batch_layout, batch_layout
from .shortest_paths import UNREACHABLE, shortest_paths

__all__ = ['AddShortestPaths', 'CanonicalNodeOrder', 'shortest_paths',
           'UNREACHABLE', 'BatchLayout', 'batch_layout', 'add_batch_layout']


def __getattr__(name: str):
    if name == 'AddShortestPaths':
        from .add_shortest_paths import AddShortestPaths
        return AddShortestPaths
    if name == 'CanonicalNodeOrder':
        from .canonical_node_order import CanonicalNodeOrder
        return CanonicalNodeOrder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
