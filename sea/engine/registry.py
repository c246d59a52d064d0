"""Node types, keyed by the ``type`` field of a node.

A node type is its document model (a :class:`~sea.lang.node.NodeModel` subclass, which declares
what the language needs to know about it) and a :class:`NodeKind` that runs its nodes. The
built-in kinds live one per module in :mod:`sea.nodes`; a host adds its own with
:meth:`Registry.with_kinds`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeVar

from sea.engine.pulse import Frame
from sea.engine.state import PlaybookState, Update
from sea.errors import UsageError
from sea.lang.node import NodeModel
from sea.lang.vocabulary import NodeTypes

M = TypeVar("M", bound=NodeModel)


class NodeKind(Protocol[M]):
    """How one node type runs: read the state, return a partial update."""

    @property
    def model(self) -> type[M]:
        """The document model of the nodes this kind runs (its ``type`` names the kind)."""
        ...

    async def run(self, node: M, state: PlaybookState, frame: Frame) -> Update:
        """Run ``node`` against ``state``; never mutate ``state``."""
        ...


class Registry:
    """Node type name → :class:`NodeKind`.

    Args:
        kinds: The kinds it holds, each under its model's ``type``.

    Raises:
        UsageError: two kinds share a type.
    """

    def __init__(self, kinds: Iterable[NodeKind[Any]] = ()) -> None:
        self._kinds: dict[str, NodeKind[Any]] = {}
        for kind in kinds:
            self.register(kind)

    def register(self, kind: NodeKind[Any]) -> None:
        """Add a node type (a second kind for the same ``type`` is a usage error)."""
        name = kind.model.node_type()
        if name in self._kinds:
            raise UsageError(f"node type {name!r} is registered twice")
        self._kinds[name] = kind

    def with_kinds(self, *kinds: NodeKind[Any]) -> Registry:
        """A new registry with this one's kinds and ``kinds``.

        Args:
            kinds: The host's kinds.

        Returns:
            The new registry (this one is unchanged).

        Raises:
            UsageError: a kind's type is taken already.
        """
        return Registry([*self._kinds.values(), *kinds])

    def get(self, type_: str) -> NodeKind[Any]:
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

    def node_types(self) -> NodeTypes:
        """The vocabulary of the registered types, for loading and checking playbooks."""
        return NodeTypes(kind.model for kind in self._kinds.values())
