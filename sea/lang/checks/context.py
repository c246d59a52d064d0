"""What the static checks may consult besides the playbook: other playbooks and tools."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sea.errors import UsageError
from sea.jsonfile import CONFIG_FILES, ReadLimit, read_json
from sea.jsontypes import json_type
from sea.lang.hints import TYPE_NAME_FIXES
from sea.lang.locate import join_pointer
from sea.lang.metaschema import metaschema, surely_valid
from sea.lang.node import PlaybookIndex

_SCHEMA_KEYS = ("parameters", "args_schema", "input_schema")


def _argument_schema(source: str, name: str, schema: Any) -> Mapping[str, Any] | None:
    """A tool's argument schema, checked against the 2020-12 metaschema.

    Raises:
        UsageError: The schema is neither an object nor null, or is not a valid JSON Schema.
    """
    if schema is None:
        return None
    if not isinstance(schema, dict):
        raise UsageError(
            f"{source}: the argument schema of `{name}` must be a JSON object (or null "
            f"when unknown), not {json_type(schema)}"
        )
    if surely_valid(schema):
        return schema
    from jsonschema.exceptions import best_match

    problem = best_match(metaschema().iter_errors(schema))
    if problem is not None:
        where = join_pointer(*problem.absolute_path) or "/"
        at_type = "type" in list(problem.absolute_path)[-2:] and isinstance(problem.instance, str)
        fix = TYPE_NAME_FIXES.get(problem.instance) if at_type else None
        detail = f'unknown type "{problem.instance}", write "{fix}"' if fix else problem.message
        raise UsageError(
            f"{source}: the argument schema of `{name}` is not a valid JSON Schema "
            f"(at {where}: {detail})"
        )
    return schema


@dataclass(frozen=True)
class ToolCatalogue:
    """Tool name → JSON Schema of its arguments (``None``: arguments unknown)."""

    tools: Mapping[str, Mapping[str, Any] | None]

    @classmethod
    def from_json(cls, data: Any, *, source: str = "tool catalogue") -> ToolCatalogue:
        """Accept ``{"tools": [{"name", "parameters"|"args_schema"|"input_schema"}]}``, a
        list of such objects, or a mapping of name → argument schema (``null``: unknown).

        Raises:
            UsageError: The data has none of these shapes, or an argument schema is not a
                valid JSON Schema (2020-12).
        """
        if isinstance(data, dict) and isinstance(data.get("tools"), list):
            data = data["tools"]
        if isinstance(data, list):
            entries: dict[str, Any] = {}
            for entry in data:
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    raise UsageError(f"{source}: every entry needs a string `name`")
                entries[entry["name"]] = next(
                    (entry[k] for k in _SCHEMA_KEYS if k in entry and entry[k] is not None),
                    None,
                )
        elif isinstance(data, dict):
            entries = data
        else:
            raise UsageError(f"{source}: expected a JSON object or list of tools")
        return cls(
            {name: _argument_schema(source, name, schema) for name, schema in entries.items()}
        )

    @classmethod
    def load(cls, path: Path, *, limit: ReadLimit = CONFIG_FILES) -> ToolCatalogue:
        """Read a catalogue file of at most ``limit`` bytes.

        Raises:
            UsageError: The file is missing, not a regular file, larger than ``limit`` or
                not a valid catalogue.
        """
        return cls.from_json(read_json(path, "tool catalogue", limit=limit),
                             source=f"tool catalogue {path}")


@dataclass(frozen=True)
class CheckContext:
    """Optional knowledge for the checks: without it, the cross-file checks are skipped."""

    library: PlaybookIndex | None = None
    tools: ToolCatalogue | None = None
