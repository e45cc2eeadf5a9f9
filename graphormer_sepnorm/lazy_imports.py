r"""Packages whose public names load their module on first use (PEP 562),
so that importing a package, or a command's ``--help``, does not load torch,
Lightning or RDKit before they are needed."""
from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping

__all__ = ['lazy_getattr']


def lazy_getattr(package: str,
                 homes: Mapping[str, str]) -> Callable[[str], Any]:
    r"""A module-level ``__getattr__`` for :obj:`package` (its
    ``__name__``) that imports :obj:`homes[name]` (a module relative to the
    package, e.g. :obj:`".models"`) when :obj:`name` is first asked for."""
    def __getattr__(name: str) -> Any:
        if name in homes:
            module = importlib.import_module(homes[name], package)
            return getattr(module, name)
        raise AttributeError(
            f"module {package!r} has no attribute {name!r}")
    return __getattr__
