"""Typed models of a playbook's nodes (the SAIVerse format, made strict).

One :class:`~sea.lang.node.NodeModel` per built-in node type, each declaring what it reads,
defines and draws, in one module per family (:mod:`sea.lang.model_call_nodes`,
:mod:`sea.lang.tool_nodes`, :mod:`sea.lang.flow_nodes`, :mod:`sea.lang.call_nodes`,
:mod:`sea.lang.message_nodes`; the literals they share in :mod:`sea.lang.node_options`);
their discriminated union on ``type`` (:data:`Node`). :mod:`sea.lang.models` holds the
document around them.
"""

# No `from __future__ import annotations` here: pydantic would evaluate every field's
# annotation from its text when the models are built, a good part of that cost.
from typing import Annotated

from pydantic import Field

from sea.lang.call_nodes import CallNode, ExecNode, SubplayNode
from sea.lang.flow_nodes import PassNode, SetNode
from sea.lang.message_nodes import MemorizeNode, SayNode, SpeakNode, ThinkNode
from sea.lang.model_call_nodes import MAX_ACTIONS, ActionsNode, LLMNode
from sea.lang.node import NodeModel
from sea.lang.node_options import (
    WITH_SPECIALIZED,
    ContextProfile,
    MemorizeOption,
    ModelType,
    ParamType,
    Role,
)
from sea.lang.tool_nodes import ToolCallNode, ToolNode

__all__ = [
    "BUILTIN_NODE_MODELS",
    "MAX_ACTIONS",
    "WITH_SPECIALIZED",
    "ActionsNode",
    "CallNode",
    "ContextProfile",
    "ExecNode",
    "LLMNode",
    "MemorizeNode",
    "MemorizeOption",
    "ModelType",
    "Node",
    "ParamType",
    "PassNode",
    "Role",
    "SayNode",
    "SetNode",
    "SpeakNode",
    "SubplayNode",
    "ThinkNode",
    "ToolCallNode",
    "ToolNode",
]

Node = Annotated[
    LLMNode
    | ToolNode
    | ToolCallNode
    | ActionsNode
    | SetNode
    | PassNode
    | SubplayNode
    | ExecNode
    | MemorizeNode
    | SpeakNode
    | SayNode
    | ThinkNode,
    Field(discriminator="type"),
]

BUILTIN_NODE_MODELS: tuple[type[NodeModel], ...] = (
    LLMNode,
    ToolNode,
    ToolCallNode,
    ActionsNode,
    SetNode,
    PassNode,
    SubplayNode,
    ExecNode,
    MemorizeNode,
    SpeakNode,
    SayNode,
    ThinkNode,
)
"""The built-in node types, in the order the schema lists them (:data:`Node` is their union)."""
