r"""Graphormer with SepNorm (separate graph-token and node-token
normalization) on PyTorch Geometric."""

__version__ = "0.1.0"

__all__ = ['GraphormerSepNorm', 'GraphormerConfig', 'SepNorm', 'ShareNorm',
           'AddShortestPaths', 'CanonicalNodeOrder', '__version__']

# Loaded on first use, so that `graphormer_sepnorm.predict` and the command
# lines start without importing what they do not need (PyG alone takes
# seconds).
_LAZY = {'GraphormerSepNorm': '.models', 'GraphormerConfig': '.models',
         'SepNorm': '.nn', 'ShareNorm': '.nn',
         'AddShortestPaths': '.transforms', 'CanonicalNodeOrder': '.transforms'}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
