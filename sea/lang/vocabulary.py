"""A vocabulary of node types: the document model and the JSON Schema they make together.

The built-in vocabulary is :data:`BUILTIN_NODE_TYPES`; a host that registers its own node
types gets a vocabulary from its registry (``registry.node_types()``) and passes it to the
loader, the library and the checks, which then know the new types as well as the built-in
ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import Annotated, Any, Union

from pydantic import Field, create_model

from sea.errors import UsageError
from sea.lang.models import Playbook
from sea.lang.node import NodeModel
from sea.lang.node_models import BUILTIN_NODE_MODELS
from sea.lang.schema import generate_schema


class NodeTypes:
    """Node type name → its document model, with the playbook model and schema they define."""

    def __init__(self, models: Iterable[type[NodeModel]]) -> None:
        self.models: dict[str, type[NodeModel]] = {}
        for model in models:
            name = model.node_type()
            if name in self.models:
                raise UsageError(f"node type {name!r} is defined twice")
            self.models[name] = model

    def __contains__(self, name: object) -> bool:
        return name in self.models

    def names(self) -> list[str]:
        """The type names, sorted."""
        return sorted(self.models)

    def extended(self, *models: type[NodeModel]) -> NodeTypes:
        """This vocabulary plus ``models``."""
        return NodeTypes([*self.models.values(), *models])

    @cached_property
    def fallible(self) -> frozenset[str]:
        """The types whose nodes can fail (and so accept ``error_next``)."""
        return frozenset(name for name, model in self.models.items() if model.fallible)

    @cached_property
    def document(self) -> type[Playbook]:
        """The playbook model whose ``nodes`` are any of these types."""
        if tuple(self.models.values()) == BUILTIN_NODE_MODELS:
            return Playbook
        union: Any = Union[tuple(self.models.values())]  # noqa: UP007  (built at run time)
        nodes: Any = Annotated[list[Annotated[union, Field(discriminator="type")]], Field(
            min_length=1, description=Playbook.model_fields["nodes"].description
        )]
        model: type[Playbook] = create_model("Playbook", __base__=Playbook, nodes=nodes)
        model.__doc__ = Playbook.__doc__
        return model

    @cached_property
    def schema(self) -> dict[str, Any]:
        """The playbook JSON Schema of this vocabulary."""
        return generate_schema(self.document, self.models)


BUILTIN_NODE_TYPES = NodeTypes(BUILTIN_NODE_MODELS)
"""The node types every SEA runtime knows."""
