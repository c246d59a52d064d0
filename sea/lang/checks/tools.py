"""Tools against a catalogue of names and argument schemas (``sea validate --tools``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sea.lang import codes
from sea.lang.checks.arguments import Callee, argument_issues
from sea.lang.checks.context import CheckContext, ToolCatalogue
from sea.lang.checks.nodes import indexed, node_pointer
from sea.lang.hints import suggest
from sea.lang.issues import Issue, error
from sea.lang.jsonschemas import plainly_valid, validator
from sea.lang.locate import escape_pointer
from sea.lang.models import Playbook
from sea.lang.node import NodeModel
from sea.lang.templates import references
from sea.lang.uses import ToolUse


def _unknown_tool(name: str, pointer: str, node_id: str, catalogue: ToolCatalogue) -> Issue:
    return error(
        codes.UNKNOWN_TOOL,
        f"tool `{name}` is not in the tool catalogue",
        pointer,
        node_id=node_id,
        hint=suggest(name, catalogue.tools) + "tools: " + ", ".join(sorted(catalogue.tools)),
    )


def _literal_issue(
    name: str, value: Any, schema: Mapping[str, Any], pointer: str, node_id: str
) -> Issue | None:
    if isinstance(value, str) and references(value) or plainly_valid(value, schema):
        return None
    problems = list(validator(dict(schema)).iter_errors(value))
    if not problems:
        return None
    return error(
        codes.BAD_TOOL_ARGUMENT,
        f"argument `{name}`: {problems[0].message}",
        pointer,
        node_id=node_id,
    )


def _tool_args(
    index: int, node: NodeModel, use: ToolUse, schema: Mapping[str, Any]
) -> list[Issue]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    given: dict[str, str] = {}
    issues: list[Issue] = []
    for field, values in (use.arguments or {}).items():
        for name, value in (values or {}).items():
            given[name] = node_pointer(index, field, escape_pointer(name))
            if field in use.literal_fields and isinstance(properties.get(name), Mapping):
                found = _literal_issue(name, value, properties[name], given[name], node.id)
                if found is not None:
                    issues.append(found)
    callee = Callee(
        f"tool `{use.tool}`",
        "argument",
        codes.UNKNOWN_TOOL_ARGUMENT,
        codes.MISSING_TOOL_ARGUMENT,
    )
    return (
        argument_issues(
            callee,
            node.id,
            given,
            list(properties) or None,
            schema.get("required") or [],
            missing_at=node_pointer(index, *(use.missing_at or use.at)),
        )
        + issues
    )


def check_tools(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """Unknown tools and arguments (of the tools each node names,
    :meth:`~sea.lang.node.NodeModel.tools_named`), when a catalogue is given."""
    catalogue = context.tools
    if catalogue is None:
        return []
    issues: list[Issue] = []
    for index, node in indexed(playbook):
        for use in node.tools_named():
            if use.tool not in catalogue.tools:
                pointer = node_pointer(index, *use.at)
                issues.append(_unknown_tool(use.tool, pointer, node.id, catalogue))
                continue
            schema = catalogue.tools[use.tool]
            if schema is not None and use.arguments is not None:
                issues.extend(_tool_args(index, node, use, schema))
    return issues
