"""The built-in node types' runners, one module per type (each defines ``KIND``).

:func:`builtin_registry` collects them; a module whose name starts with ``_`` holds helpers
shared by several types.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from sea.engine.registry import NodeKind, Registry


def builtin_kinds() -> list[NodeKind[Any]]:
    """The ``KIND`` of every module of this package, by module name."""
    kinds: list[NodeKind[Any]] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        kinds.append(module.KIND)
    return kinds


def builtin_registry() -> Registry:
    """A registry of every built-in node type.

    Returns:
        A new registry; ``.with_kinds(...)`` adds a host's kinds to a copy.
    """
    return Registry(builtin_kinds())
