r"""Graph transforms (PyG :class:`~torch_geometric.transforms.BaseTransform`).

:class:`AddShortestPaths` is loaded on first use: importing PyG takes
seconds, and prediction needs only the search it runs
(:func:`shortest_paths`).
"""
from .shortest_paths import UNREACHABLE, shortest_paths

__all__ = ['AddShortestPaths', 'shortest_paths', 'UNREACHABLE']


def __getattr__(name: str):
    if name == 'AddShortestPaths':
        from .add_shortest_paths import AddShortestPaths
        return AddShortestPaths
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
