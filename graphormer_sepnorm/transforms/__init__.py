r"""Graph transforms (PyG :class:`~torch_geometric.transforms.BaseTransform`)."""
from .shortest_paths import UNREACHABLE, AddShortestPaths, shortest_paths

__all__ = ['AddShortestPaths', 'shortest_paths', 'UNREACHABLE']
