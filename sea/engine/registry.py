"""Node types, keyed by the ``type`` field of a node.

Each module in :mod:`sea.nodes` defines one node type as a module-level ``KIND`` object that
follows :class:`NodeKind`; :func:`default_registry` collects them, so adding a node type is
adding one module.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from typing import Any, Protocol

from sea.engine.pulse import Frame
from sea.engine.state import PlaybookState, Update
from sea.errors import UsageError


class NodeKind(Protocol):
    """How one node type runs: read the state, return a partial update."""

    type: str
    """The ``type`` value of the nodes this kind runs."""

    async def run(self, node: Any, state: PlaybookState, frame: Frame) -> Update:
        """Run ``node`` (its pydantic model) against ``state``; never mutate ``state``."""
        ...


class Registry:
    """Node type name → :class:`NodeKind`."""

    def __init__(self, kinds: Iterable[NodeKind] = ()) -> None:
        self._kinds: dict[str, NodeKind] = {}
        for kind in kinds:
            self.register(kind)

    def register(self, kind: NodeKind) -> None:
        """Add a node type (a second kind for the same ``type`` is a usage error)."""
        if kind.type in self._kinds:
            raise UsageError(f"node type {kind.type!r} is registered twice")
        self._kinds[kind.type] = kind

    def get(self, type_: str) -> NodeKind:
        """The kind of this node type."""
        try:
            return self._kinds[type_]
        except KeyError:
            raise UsageError(
                f"no node type {type_!r} is registered (known: {', '.join(sorted(self._kinds))})"
            ) from None

    def types(self) -> list[str]:
        """The registered node type names, sorted."""
        return sorted(self._kinds)


def default_registry() -> Registry:
    """Every node type defined by a module of :mod:`sea.nodes`."""
    import sea.nodes

    kinds: list[NodeKind] = []
    for info in sorted(pkgutil.iter_modules(sea.nodes.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"sea.nodes.{info.name}")
        kind = getattr(module, "KIND", None)
        if kind is not None:
            kinds.append(kind)
    return Registry(kinds)
