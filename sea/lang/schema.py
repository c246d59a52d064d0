"""The published playbook JSON Schema: generated from :mod:`sea.lang.models`, loaded for validation.

``schemas/playbook.schema.json`` is produced by ``python -m sea.lang.schema --write`` and checked by
``python -m sea.lang.schema --check`` (and by a test), so the models and the schema cannot drift.

The generated schema is JSON Schema 2020-12 with one ``$defs`` entry per node type; a node is
matched to its entry by its ``type`` (``if``/``then``), so editors complete the right fields
and report one error per mistake.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

SCHEMA_FILE = "playbook.schema.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:sea:schema:playbook:1"
TRACE_SCHEMA_FILE = "trace.schema.json"
TRACE_SCHEMA_ID = "urn:sea:schema:trace:1"


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


def generate_schema() -> dict[str, Any]:
    """Build the playbook JSON Schema from the pydantic models."""
    from sea.lang.models import NODE_MODELS, Playbook

    generated = Playbook.model_json_schema(by_alias=True, mode="validation")
    node_types = {name: model.__name__ for name, model in NODE_MODELS.items()}
    nodes = generated["properties"]["nodes"]
    nodes["items"] = _node_dispatch(node_types)
    schema: dict[str, Any] = {"$schema": DRAFT, "$id": SCHEMA_ID}
    schema.update(generated)
    schema["title"] = "SEA playbook"
    return schema


def dumps(schema: dict[str, Any]) -> bytes:
    """The canonical text of a schema file (2-space indent, trailing newline)."""
    return orjson.dumps(schema, option=orjson.OPT_INDENT_2) + b"\n"


def schema_path() -> Path:
    """Where the published schema lives."""
    from sea.resources import schemas_dir

    return schemas_dir() / SCHEMA_FILE


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    """The published schema (generated from the models when the file is absent)."""
    path = schema_path()
    if path.is_file():
        loaded: dict[str, Any] = orjson.loads(path.read_bytes())
        return loaded
    return generate_schema()


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


def generate_trace_schema() -> dict[str, Any]:
    """Build the trace JSON Schema (``sea run --record``) from the trace models."""
    from sea.trace.format import Trace

    schema: dict[str, Any] = {"$schema": DRAFT, "$id": TRACE_SCHEMA_ID}
    schema.update(Trace.model_json_schema(by_alias=True, mode="validation"))
    schema["title"] = "SEA pulse trace"
    return schema


PUBLISHED: dict[str, Callable[[], dict[str, Any]]] = {
    SCHEMA_FILE: generate_schema,
    TRACE_SCHEMA_FILE: generate_trace_schema,
}
"""Every published schema file and the function that generates it."""


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sea.lang.schema --write | --check`` over every published schema."""
    parser = argparse.ArgumentParser(prog="python -m sea.lang.schema", description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate the schema files")
    group.add_argument("--check", action="store_true", help="fail if a file is stale")
    args = parser.parse_args(argv)
    from sea.resources import schemas_dir

    stale = 0
    for name, generate in PUBLISHED.items():
        path = schemas_dir() / name
        text = dumps(generate())
        if args.write:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text)
            print(f"wrote {path}")
        elif not path.is_file() or path.read_bytes() != text:
            fix = "python -m sea.lang.schema --write"
            print(f"{path} is out of date: run `{fix}`", file=sys.stderr)
            stale += 1
        else:
            print(f"{path} is up to date")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
