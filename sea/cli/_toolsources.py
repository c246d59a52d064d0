"""The host tools of a command: ``--tools MODULE[:ATTR]`` and ``--mcp CONFIG.json``.

Both options are repeatable; every command that runs pulses takes them (``sea run``,
``sea resume``, ``sea worker``), and ``sea validate`` takes them to know the tools'
names and arguments. A source that cannot be loaded or started is a usage error naming
it (exit code 2). Tool names must be unique across the sources; a host tool with a
built-in tool's name takes its place.

LangChain and the MCP client are imported only when a source is given, so that
``sea validate`` stays light without them.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sea.cli._filelimits import file_limit
from sea.cli._numbers import positive_seconds
from sea.engine.limits import Limits
from sea.errors import UsageError
from sea.jsonfile import CONFIG_FILES

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool


def add_tool_arguments(parser: argparse.ArgumentParser) -> None:
    """``--tools`` and ``--mcp``, the host tools a pulse may call."""
    parser.add_argument(
        "--tools", action="append", default=[], metavar="MODULE[:ATTR]",
        help="host tools from a Python module (a dotted name, or path/to/file.py): ATTR is "
        "a tool, a list of tools or a function without arguments returning them; without "
        "ATTR the module's TOOLS list, else every tool at its top level (repeatable)",
    )
    parser.add_argument(
        "--mcp", action="append", default=[], metavar="CONFIG.json",
        help='host tools from MCP servers: a JSON file {"mcpServers": {NAME: {"command": '
        '..., "args": [...]} or {"url": ...}}}; each server starts once per command '
        "(repeatable; needs the mcp extra)",
    )
    default = Limits().tool_timeout_s
    parser.add_argument(
        "--tool-timeout", type=positive_seconds, default=default, metavar="SECONDS",
        help="the longest one tool call may take; past it the call is abandoned and its node "
        f"fails with SEA533, which its error_next routes (default: {default:g})",
    )


@asynccontextmanager
async def host_tools(specs: Sequence[str], configs: Sequence[str]) -> AsyncIterator[list[BaseTool]]:
    """The tools of ``--tools`` ``specs`` and ``--mcp`` ``configs``; the MCP servers run
    until the block ends. Every configuration is checked before any server starts.

    Raises:
        UsageError: a source cannot be loaded or started, or two tools share a name.
    """
    if not specs and not configs:
        yield []
        return
    from sea.host.mcp_config import read_mcp_config

    limit = file_limit(CONFIG_FILES)  # read (or refused) before the MCP client is imported
    servers = [(config, read_mcp_config(Path(config), limit=limit)) for config in configs]
    from sea.host.mcp_tools import mcp_tools
    from sea.host.tool_modules import module_tools

    found: list[tuple[str, list[BaseTool]]] = []
    for spec in specs:
        if spec.endswith(".json"):
            raise UsageError(
                f"--tools {spec}: a JSON tool catalogue only describes tools (for sea "
                "validate); a pulse needs the tools themselves: MODULE[:ATTR], or --mcp "
                "CONFIG.json for MCP servers"
            )
        found.append((f"--tools {spec}", module_tools(spec)))
    async with AsyncExitStack() as stack:
        for config, connections in servers:
            opened = mcp_tools(connections, source=f"--mcp {config}")
            found.append((f"--mcp {config}", await stack.enter_async_context(opened)))
        yield _unique(found)


def _unique(found: Sequence[tuple[str, list[BaseTool]]]) -> list[BaseTool]:
    """Every tool once, refusing two of one name."""
    origin: dict[str, str] = {}
    tools = []
    for source, listed in found:
        for tool in listed:
            where = _origin(source, tool)
            if tool.name in origin:
                raise UsageError(
                    f"two tools are named {tool.name!r}: one from {origin[tool.name]}, one "
                    f"from {where}; tool names must be unique"
                )
            origin[tool.name] = where
            tools.append(tool)
    return tools


def _origin(source: str, tool: BaseTool) -> str:
    server = (tool.metadata or {}).get("mcp_server")
    return f"{source} (server {server!r})" if server else source


def tool_schemas(specs: Sequence[str], configs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Name → argument schema of the tools of ``specs`` and ``configs`` (what ``sea
    validate`` checks calls against); MCP servers are started to list their tools.

    Raises:
        UsageError: as :func:`host_tools`.
    """
    import asyncio

    from sea.engine.tools.arguments import tool_schema

    async def listed() -> dict[str, dict[str, Any]]:
        async with host_tools(specs, configs) as tools:
            return {tool.name: tool_schema(tool) for tool in tools}

    return asyncio.run(listed())
