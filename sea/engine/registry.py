"""Node types, keyed by the ``type`` field of a node.

A node type is two declarations, and nothing else in SEA names it:

* its document model (a :class:`~sea.lang.node.NodeModel` subclass), which says what the
  language needs to know: its fields, edges, the variables it reads and writes, the tools it
  offers and needs, its answer's schema, how it is drawn, the tags and expressions it holds;
* its :class:`NodeKind` (a subclass), which says how its nodes run: :meth:`NodeKind.run`,
  and, with safe defaults, whether it is :attr:`~NodeKind.pure` and where it may pause for
  a person (:meth:`~NodeKind.waits`, :meth:`~NodeKind.waits_now`).

The compiler, the checks and the drawing ask these two instead of testing a node's type.
The built-in kinds live one per module in :mod:`sea.nodes`; a host adds its own with
:meth:`Registry.with_kinds`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, ClassVar, Generic, Literal, TypeVar

from sea.engine.pulse import Frame
from sea.engine.state import PlaybookState, Update
from sea.engine.waits import ALWAYS, Waits
from sea.errors import UsageError
from sea.lang.node import NodeModel
from sea.lang.vocabulary import NodeTypes

M = TypeVar("M", bound=NodeModel)


class NodeKind(ABC, Generic[M]):
    """How one node type runs, and what the engine may assume of it.

    A subclass sets :attr:`model` and defines :meth:`run`; everything else has a default
    that is safe for any node: not pure, and may always pause for a person. A kind declares
    more to be run more cheaply (a pure node shares its graph step with the pure nodes
    after it; a call that cannot pause runs without a LangGraph run of its own).

    Attributes:
        pure: Its nodes read and write only the run's state, never pause, and give the same
            update when run again (``set``, ``pass``); a graph runs them in the step of the
            pure node before them (:mod:`sea.engine.compiler`).
        keyed_writes: Besides reading and writing the run's state, its nodes only write
            messages to memory (:meth:`~sea.engine.pulse.Frame.remember`), never pause, and
            give the same update when run again (``memorize``): in a recoverable pulse,
            whose writes are keyed by the node run, running one again stores nothing
            twice, so a graph step of pure nodes goes on past it.
    """

    pure: ClassVar[bool] = False
    keyed_writes: ClassVar[bool] = False
    one_call: ClassVar[Literal["model", "tool"] | None] = None
    """Each of its nodes makes one call of this kind (a model's, a tool's), which is what
    the node is for: a trace shows the node and its call as one span."""

    @property
    @abstractmethod
    def model(self) -> type[M]:
        """The document model of the nodes this kind runs (its ``type`` names the kind)."""

    @abstractmethod
    async def run(self, node: M, state: PlaybookState, frame: Frame) -> Update:
        """Run ``node`` against ``state``; never mutate ``state``.

        Args:
            node: The node, as its model validated it.
            state: The run's state (read only).
            frame: Where the node runs: its pulse, playbook and services.

        Returns:
            The partial update of the state (the state's reducers fold it in).
        """

    def waits(self, node: M) -> Waits:
        """Where ``node`` may pause for a person (:mod:`sea.engine.waits`).

        Args:
            node: The node, before any run.

        Returns:
            :data:`~sea.engine.waits.ALWAYS` unless the kind says less: a kind that says
            nothing is never run where a pause could not be kept.
        """
        return ALWAYS

    def only_tool(self, node: M) -> str | None:
        """The tool that ``node`` calls, if calling it is all the node does besides reading
        and writing the run's state: the node may then run again harmlessly where that tool
        may (:data:`sea.engine.tools.engine_tool.REPLAYABLE`).

        Returns:
            None (the default): the node may do more.
        """
        return None

    def waits_now(self, node: M, state: PlaybookState, frame: Frame) -> Waits | None:
        """Where ``node`` may pause when it is about to run with ``state`` in ``frame``,
        narrower than :meth:`waits` (an ``exec`` node's callee is known only then).

        Args:
            node: The node about to run.
            state: The state it will run with.
            frame: Where it will run.

        Returns:
            None (the default): what :meth:`waits` says.
        """
        return None


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
        """Add a node type.

        Args:
            kind: The kind of the type, an instance of a :class:`NodeKind` subclass.

        Raises:
            UsageError: ``kind`` is not a :class:`NodeKind`, or a kind of the same ``type``
                is registered already.
        """
        if not isinstance(kind, NodeKind):
            raise UsageError(
                f"{type(kind).__name__} is not a node kind: a host's kind subclasses "
                "sea.engine.registry.NodeKind (setting `model`, defining `run`)"
            )
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

    def span_shapes(self) -> dict[str, str]:
        """How a trace shows the nodes of each type that is not a plain span: ``event``
        (:attr:`~NodeKind.pure`: an event of its playbook call's span), ``model`` or
        ``tool`` (:attr:`~NodeKind.one_call`: one span with its call)."""
        shapes: dict[str, str] = {
            name: kind.one_call for name, kind in self._kinds.items() if kind.one_call}
        shapes.update({name: "event" for name, kind in self._kinds.items() if kind.pure})
        return shapes

    def node_types(self) -> NodeTypes:
        """The vocabulary of the registered types, for loading and checking playbooks."""
        return NodeTypes(kind.model for kind in self._kinds.values())
