"""What the editor features need to know of one playbook: its nodes, where each variable is
defined and read, which nodes come before which.

It is read from the document model the checks use (:mod:`sea.lang.models`): of the whole
document when it is valid, else of what the schema validation salvaged, so that a document
with a mistake still completes and navigates.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import ValidationError

from sea.lang.graph import successors
from sea.lang.locate import escape_pointer
from sea.lang.models import Playbook
from sea.lang.node import Defined, NodeModel, PlaybookIndex, Read
from sea.lang.validation import schema_validation
from sea.lang.vocabulary import NodeTypes

EDGE_FIELDS = ("next", "error_next")
"""The node fields that name one node; ``conditional_next`` names more."""


@dataclass(frozen=True)
class NodeRef:
    """A node of the document: its index in ``nodes``, id and type as written."""

    index: int
    id: str
    type: str | None

    @property
    def pointer(self) -> str:
        """The node's JSON pointer."""
        return f"/nodes/{self.index}"


def raw_nodes(raw: Any) -> list[NodeRef]:
    """The document's nodes that have a string ``id``."""
    nodes = raw.get("nodes") if isinstance(raw, dict) else None
    found = []
    for index, node in enumerate(nodes if isinstance(nodes, list) else ()):
        if isinstance(node, dict) and isinstance(node.get("id"), str):
            kind = node.get("type")
            found.append(NodeRef(index, node["id"], kind if isinstance(kind, str) else None))
    return found


def node_targets(raw: Any) -> Iterator[tuple[str, str]]:
    """``(pointer, node id)`` of every place that names a node: ``start_node``, ``next``,
    ``error_next`` and ``conditional_next``'s cases and default."""
    if not isinstance(raw, dict):
        return
    if isinstance(raw.get("start_node"), str):
        yield "/start_node", raw["start_node"]
    for ref in raw_nodes(raw):
        node = raw["nodes"][ref.index]
        for name in EDGE_FIELDS:
            if isinstance(node.get(name), str):
                yield f"{ref.pointer}/{name}", node[name]
        branch = node.get("conditional_next")
        if not isinstance(branch, dict):
            continue
        cases = branch.get("cases")
        for key, target in (cases.items() if isinstance(cases, dict) else ()):
            if isinstance(target, str):
                yield f"{ref.pointer}/conditional_next/cases/{escape_pointer(key)}", target
        if isinstance(branch.get("default"), str):
            yield f"{ref.pointer}/conditional_next/default", branch["default"]


@dataclass
class Analysis:
    """The model of one document and what its variables are."""

    raw: Any
    playbook: Playbook | None
    origin: tuple[int, ...] = ()
    """The document index of each model node (nodes may have been dropped)."""
    library: PlaybookIndex | None = None
    defined: dict[str, list[int]] = field(default_factory=dict)
    """Variable → the document indexes of the nodes that define it (-1: a parameter)."""
    reads: dict[str, list[Read]] = field(default_factory=dict)
    """Variable → its reads, pointers into the document."""

    @classmethod
    def of(cls, raw: Any, types: NodeTypes, library: PlaybookIndex | None) -> Analysis:
        """Analyse a parsed document (any JSON value; a non-playbook gives an empty one)."""
        if not isinstance(raw, dict):
            return cls(raw, None)
        validation = schema_validation(raw, types)
        playbook, origin = validation.playbook, validation.origin
        if playbook is None:
            try:
                playbook = types.document.model_validate(validation.salvaged or raw)
            except ValidationError:
                return cls(raw, None)
        found = cls(raw, playbook, origin, library)
        found._index()
        return found

    def doc_index(self, model_index: int) -> int:
        """The document index of a model node."""
        return self.origin[model_index] if self.origin else model_index

    def _index(self) -> None:
        assert self.playbook is not None
        for param in self.playbook.input_schema:
            self.defined.setdefault(param.name, []).append(-1)
        for position, node in enumerate(self.playbook.nodes):
            index = self.doc_index(position)
            for made in node.defines(self.library):
                if isinstance(made, Defined):
                    self.defined.setdefault(made.name, []).append(index)
            for read in node.reads(f"/nodes/{index}"):
                self.reads.setdefault(read.root, []).append(read)

    def node(self, node_id: str) -> NodeModel | None:
        """The model of a node, by id."""
        if self.playbook is None:
            return None
        return next((n for n in self.playbook.nodes if n.id == node_id), None)

    @cached_property
    def _ancestors(self) -> dict[str, set[str]]:
        """Node id → the nodes on some path from the start to it."""
        if self.playbook is None:
            return {}
        graph = successors(self.playbook.nodes)
        before: dict[str, set[str]] = {node.id: set() for node in self.playbook.nodes}
        for node in self.playbook.nodes:  # each node's descendants, one walk each
            stack = [e.target for e in graph.get(node.id, ()) if e.target is not None]
            seen: set[str] = set()
            while stack:
                current = stack.pop()
                if current in seen or current not in before:
                    continue
                seen.add(current)
                before[current].add(node.id)
                stack.extend(e.target for e in graph.get(current, ()) if e.target is not None)
        return before

    def variables_for(self, node_id: str | None) -> list[tuple[str, bool]]:
        """Every variable defined, ``(name, defined before node_id on some path)``, those
        defined before it first (parameters count as before every node)."""
        ancestors = self._ancestors.get(node_id or "", set())
        ids = {ref.index: ref.id for ref in raw_nodes(self.raw)}
        found = []
        for name, indexes in self.defined.items():
            before = any(i == -1 or ids.get(i) in ancestors for i in indexes)
            found.append((name, before))
        return sorted(found, key=lambda item: (not item[1], item[0]))
