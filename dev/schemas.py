"""Regenerate or check the published JSON Schemas (``make schemas`` / ``make check-schemas``).

``schemas/playbook.schema.json`` comes from the built-in node types, ``schemas/trace.schema.json``
from the trace models, ``schemas/engine_tools.json`` from the engine's tools' argument models.
A development tool: the runtime never writes these files.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from sea.lang.schema import SCHEMA_FILE, dumps
from sea.lang.vocabulary import BUILTIN_NODE_TYPES
from sea.resources import ENGINE_TOOLS_FILE, schemas_dir
from sea.trace.format import TRACE_SCHEMA_FILE, trace_schema


def engine_tools() -> dict[str, Any]:
    """Name → argument JSON Schema of every tool the engine has (built-in, workspace, plan
    and model tools): what ``sea validate`` checks calls against, read from the file
    instead of building the tools' argument models at every start."""
    from sea.engine.tools.model_signatures import model_tool_schemas
    from sea.engine.tools.signatures import (
        builtin_tool_schemas,
        plan_tool_schemas,
        workspace_tool_schemas,
    )

    return {**builtin_tool_schemas(), **workspace_tool_schemas(), **plan_tool_schemas(),
            **model_tool_schemas()}


PUBLISHED: dict[str, Callable[[], dict[str, Any]]] = {
    SCHEMA_FILE: lambda: BUILTIN_NODE_TYPES.schema,
    TRACE_SCHEMA_FILE: trace_schema,
    ENGINE_TOOLS_FILE: engine_tools,
}
"""Every published schema file and the function that generates it."""


def main(argv: Sequence[str] | None = None) -> int:
    """``python dev/schemas.py --write | --check`` over every published schema."""
    parser = argparse.ArgumentParser(prog="python dev/schemas.py", description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate the schema files")
    group.add_argument("--check", action="store_true", help="fail if a file is stale")
    args = parser.parse_args(argv)
    stale = 0
    for name, generate in PUBLISHED.items():
        path = schemas_dir() / name
        text = dumps(generate())
        if args.write:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text)
            print(f"wrote {path}")
        elif not path.is_file() or path.read_bytes() != text:
            print(f"{path} is out of date: run `make schemas`", file=sys.stderr)
            stale += 1
        else:
            print(f"{path} is up to date")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
