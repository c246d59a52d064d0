"""Typed models of a playbook's nodes (the SAIVerse format, made strict).

One :class:`~sea.lang.node.NodeModel` per built-in node type, each declaring what it reads,
defines and draws, in one module per family (:mod:`.model_calls`, :mod:`.tools`,
:mod:`.flow`, :mod:`.calls`, :mod:`.messages`; the literals they share in :mod:`.options`);
their discriminated union on ``type`` (:data:`Node`). :mod:`sea.lang.models` holds the
document around them.
"""

# No `from __future__ import annotations` here: pydantic would evaluate every field's
# annotation from its text when the models are built, a good part of that cost.
from typing import Annotated

from pydantic import Field

from sea.lang.node import NodeModel
from sea.lang.node_models.calls import CallNode, ExecNode, SubplayNode
from sea.lang.node_models.flow import PassNode, SetNode
from sea.lang.node_models.messages import MemorizeNode, SayNode, SpeakNode, ThinkNode
from sea.lang.node_models.model_calls import MAX_ACTIONS, ActionsNode, LLMNode
from sea.lang.node_models.options import (
    WITH_SPECIALIZED,
    ContextProfile,
    MemorizeOption,
    ModelType,
    ParamType,
    Role,
)
from sea.lang.node_models.tools import ToolCallNode, ToolNode

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
