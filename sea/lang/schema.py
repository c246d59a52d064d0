"""The playbook JSON Schema, generated from the node types' models.

``schemas/playbook.schema.json`` is the schema of the built-in vocabulary, published for
editors; ``make schemas`` regenerates it (and the trace schema) and a test checks it is current.
Validation generates the schema of its own vocabulary, so host-defined node types are
validated like the built-in ones.

The generated schema is JSON Schema 2020-12 with one ``$defs`` entry per node type; a node is
matched to its entry by its ``type`` (``if``/``then``), so editors complete the right fields
and report one error per mistake.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import BaseModel

SCHEMA_FILE = "playbook.schema.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:sea:schema:playbook:1"


def _node_dispatch(node_types: dict[str, str]) -> dict[str, Any]:
    return {
        "type": "object",
        "description": "A step of the playbook; its `type` decides which fields it has.",
        "required": ["type"],
        "properties": {
            "type": {
                "enum": sorted(node_types),
                "description": "The node type: " + ", ".join(sorted(node_types)) + ".",
            }
        },
        "allOf": [
            {
                "if": {"properties": {"type": {"const": name}}, "required": ["type"]},
                "then": {"$ref": f"#/$defs/{definition}"},
            }
            for name, definition in sorted(node_types.items())
        ],
    }


def generate_schema(
    document: type[BaseModel], models: Mapping[str, type[BaseModel]]
) -> dict[str, Any]:
    """Build the playbook JSON Schema of a document model whose nodes are ``models`` (node type
    → model)."""
    generated = document.model_json_schema(by_alias=True, mode="validation")
    node_types = {name: model.__name__ for name, model in models.items()}
    nodes = generated["properties"]["nodes"]
    nodes["items"] = _node_dispatch(node_types)
    schema: dict[str, Any] = {"$schema": DRAFT, "$id": SCHEMA_ID}
    schema.update(generated)
    schema["title"] = "SEA playbook"
    return schema


def dumps(schema: dict[str, Any]) -> bytes:
    """The canonical text of a schema file (2-space indent, trailing newline)."""
    return orjson.dumps(schema, option=orjson.OPT_INDENT_2) + b"\n"


def node_definitions(schema: dict[str, Any]) -> dict[str, str]:
    """Node type → name of its ``$defs`` entry, read from the schema's dispatch."""
    items = schema["properties"]["nodes"]["items"]
    result: dict[str, str] = {}
    for branch in items.get("allOf", []):
        name = branch["if"]["properties"]["type"]["const"]
        result[name] = branch["then"]["$ref"].rsplit("/", 1)[-1]
    return result


def top_level_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with node contents left out (nodes are validated one by one)."""
    top = copy.deepcopy(schema)
    top["properties"]["nodes"]["items"] = {}
    return top
