"""Which state variables each node reads and which it defines (for the variable checks).

Each node type declares both (:meth:`~sea.lang.node.NodeModel.reads`,
:meth:`~sea.lang.node.NodeModel.defines`); this module gathers them over a playbook, adding
the variables SAIVerse's runtime provided implicitly (:mod:`sea.lang.saiverse`). A node
that chooses its callee at run time (``exec``, its
:meth:`~sea.lang.node.NodeModel.chosen_callee`) defines what the playbooks it may run
return (its ``allowed_playbooks``, else the router-callable ones); what the library's other
playbooks return is kept apart (:attr:`Definitions.dynamic`): SAIVerse ran any playbook by
name, so a read of it is a warning naming those playbooks, not an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sea.lang import exec_targets, saiverse
from sea.lang.checks.context import CheckContext
from sea.lang.checks.nodes import node_pointer
from sea.lang.models import Playbook
from sea.lang.node import Defined, NodeModel, PlaybookIndex, Read, root_of

__all__ = ["Definitions", "Read", "definitions", "dynamic_callees", "node_reads", "root_of"]


@dataclass
class Definitions:
    """Variables some node (or the signature) defines."""

    names: dict[str, str]
    """Variable → what defines it (for messages)."""
    uncertain: list[str]
    """Callees whose outputs are unknown (no library, or not found)."""
    families: dict[str, str] = field(default_factory=dict)
    """Name prefix → what defines every variable starting with it (``tool_arg_``)."""
    dynamic: dict[str, list[str]] = field(default_factory=dict)
    """Variable → the playbooks that return it, which a node that chooses its callee at run
    time could only have run in SAIVerse (not router-callable, not allowed)."""
    dynamic_nodes: list[str] = field(default_factory=list)
    """The nodes that choose their callee at run time."""

    def defined(self, name: str) -> str | None:
        """What defines ``name`` for sure (a node, the signature, a SAIVerse rule), if any."""
        found = self.names.get(name)
        if found is not None:
            return found
        return next((by for prefix, by in self.families.items() if name.startswith(prefix)),
                    None)


def node_reads(index: int, node: NodeModel) -> Iterator[Read]:
    """Every variable the node reads, with where."""
    return node.reads(node_pointer(index))


def dynamic_callees(node: NodeModel, library: PlaybookIndex) -> Iterator[tuple[str, str]]:
    """``(callee, output)`` for every playbook of the library that a node choosing its
    callee at run time may not run here but SAIVerse would have run (any playbook, by name),
    and what it returns. None when the node lists the playbooks it may call."""
    chosen = node.chosen_callee()
    if chosen is None or chosen.allowed is not None:
        return
    for name in library.names():
        signature = library.signature(name)
        if signature is not None and not signature.router_callable:
            for output in signature.outputs:
                yield name, root_of(output)


def _saiverse(node: NodeModel, defs: Definitions) -> None:
    for rule in saiverse.provided_by(node):
        if not rule.defines:
            continue
        by = f"node `{node.id}` (set implicitly, as SAIVerse did)"
        if rule.prefix:
            defs.families.setdefault(rule.name, by)
        else:
            defs.names.setdefault(rule.name, by)


def _spelled(
    playbook: Playbook, node: NodeModel, library: PlaybookIndex, defs: Definitions
) -> list[str]:
    """The playbooks an ``exec`` node may run because the playbook spells their name
    (:mod:`sea.lang.exec_targets`); what they return is defined."""
    source = getattr(node, "playbook_source", None)
    chosen = node.chosen_callee()
    if not isinstance(source, str) or chosen is None or chosen.allowed is not None:
        return []
    names = exec_targets.spelled_names(
        exec_targets.set_assignments(playbook.nodes), source, library.names()
    )
    for name in names:
        signature = library.signature(name)
        for output in signature.outputs if signature is not None else ():
            defs.names.setdefault(
                root_of(output), f"node `{node.id}` (runs `{name}`, a name the playbook spells)"
            )
    return names


def definitions(playbook: Playbook, context: CheckContext) -> Definitions:
    """Every variable defined by the signature or by some node."""
    defs = Definitions({param.name: "input_schema" for param in playbook.input_schema}, [])
    library = context.library
    for node in playbook.nodes:
        for found in node.defines(library):
            if isinstance(found, Defined):
                defs.names.setdefault(found.name, found.by)
            else:
                defs.uncertain.append(found.source)
        if library is not None and node.chosen_callee() is not None:
            defs.dynamic_nodes.append(node.id)
            spelled = _spelled(playbook, node, library, defs)
            for callee, output in dynamic_callees(node, library):
                if callee in spelled:
                    continue
                callees = defs.dynamic.setdefault(output, [])
                if callee not in callees:
                    callees.append(callee)
        _saiverse(node, defs)
    return defs
