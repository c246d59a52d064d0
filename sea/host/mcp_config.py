"""MCP server configurations: the ``--mcp`` file of ``sea run``, checked field by field.

A configuration names the servers, in the form most MCP clients read::

    {"mcpServers": {
        "notes": {"command": "python", "args": ["notes_server.py"], "env": {"TOKEN": "${TOKEN}"}},
        "search": {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer x"}}
    }}

``servers`` may stand for ``mcpServers``. A server is started by ``command`` (stdio) or
reached at ``url`` (streamable HTTP; ``"transport": "sse"`` for the older SSE one);
``transport`` (or ``type``) may say so explicitly: ``stdio``, ``http``
(``streamable_http``) or ``sse``. :data:`FIELDS` lists every field. The result is what
langchain-mcp-adapters' ``MultiServerMCPClient`` takes. This module imports neither
LangChain nor MCP.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sea.errors import UsageError
from sea.jsonfile import CONFIG_FILES, ReadLimit, read_json

SERVERS_KEYS = ("mcpServers", "servers")
"""The member of a configuration file that maps server names to servers."""

TRANSPORTS = {"stdio": "stdio", "http": "streamable_http", "streamable_http": "streamable_http",
              "streamable-http": "streamable_http", "sse": "sse"}
"""The transports a configuration may name, and langchain-mcp-adapters' name of each."""

FIELDS = {
    "stdio": {"transport", "type", "command", "args", "env", "cwd"},
    "streamable_http": {"transport", "type", "url", "headers", "timeout"},
    "sse": {"transport", "type", "url", "headers", "timeout"},
}
"""The fields a server of each transport may have."""

Connection = dict[str, Any]
"""One server, as langchain-mcp-adapters' ``MultiServerMCPClient`` takes it."""


def read_mcp_config(path: Path, *, limit: ReadLimit = CONFIG_FILES) -> dict[str, Connection]:
    """The servers of configuration file ``path`` (at most ``limit`` bytes), by name.

    Args:
        path: The configuration file (``{"mcpServers": {...}}``).
        limit: The largest file read.

    Returns:
        Server name → connection, for :func:`sea.host.mcp_tools.mcp_tools`.

    Raises:
        UsageError: the file cannot be read (not a regular file, larger than ``limit``), is
            not JSON, or is not a configuration.
    """
    return mcp_config(read_json(path, "--mcp config", limit=limit), source=f"--mcp {path}")


def mcp_config(data: Any, *, source: str = "MCP config") -> dict[str, Connection]:
    """The servers of a configuration (``{"mcpServers": {name: server}}``), by name.

    Raises:
        UsageError: ``data`` is not a configuration, naming the server and the field.
    """
    keys = [key for key in SERVERS_KEYS if isinstance(data, dict) and key in data]
    if len(keys) != 1:
        raise UsageError(
            f'{source}: expected a JSON object {{"mcpServers": {{NAME: SERVER, ...}}}} '
            f"(or \"servers\" in its place){_other_members(data)}"
        )
    servers = data[keys[0]]
    if not isinstance(servers, dict) or not servers:
        raise UsageError(f"{source}: {keys[0]!r} must be an object naming at least one server")
    return {name: _connection(f"{source}: server {name!r}", server)
            for name, server in servers.items()}


def _other_members(data: Any) -> str:
    if not isinstance(data, dict):
        return f", not a JSON {type(data).__name__}"
    extra = sorted(set(data) - set(SERVERS_KEYS))
    return f"; found {', '.join(map(repr, extra))}" if extra else ""


def _connection(where: str, server: Any) -> Connection:
    if not isinstance(server, dict):
        raise UsageError(f"{where}: expected an object with `command` or `url`")
    transport = _transport(where, server)
    unknown = sorted(set(server) - FIELDS[transport])
    if unknown:
        raise UsageError(
            f"{where}: unknown field {unknown[0]!r} for a {transport} server (expected "
            f"{', '.join(sorted(FIELDS[transport] - {'type'}))})"
        )
    if transport == "stdio":
        connection: Connection = {
            "transport": "stdio",
            "command": _text(where, server, "command"),
            "args": _texts(where, server.get("args", [])),
        }
        if "env" in server:
            connection["env"] = _text_map(where, "env", server["env"])
        if "cwd" in server:
            connection["cwd"] = _text(where, server, "cwd")
        return connection
    url = _text(where, server, "url")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"{where}: `url` must start with http:// or https://, not {url!r}")
    connection = {"transport": transport, "url": url}
    if "headers" in server:
        connection["headers"] = _text_map(where, "headers", server["headers"])
    if "timeout" in server:
        timeout = server["timeout"]
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise UsageError(f"{where}: `timeout` must be a number of seconds > 0")
        connection["timeout"] = float(timeout)
    return connection


def _transport(where: str, server: dict[str, Any]) -> str:
    named = [server[key] for key in ("transport", "type") if key in server]
    if len(set(map(str, named))) > 1:
        raise UsageError(f"{where}: `transport` and `type` disagree ({named[0]!r}, {named[1]!r})")
    if named:
        if named[0] not in TRANSPORTS:
            raise UsageError(
                f"{where}: unknown transport {named[0]!r} (expected stdio, http or sse)"
            )
        return TRANSPORTS[named[0]]
    if "command" in server:
        return "stdio"
    if "url" in server:
        return "streamable_http"
    raise UsageError(
        f"{where}: give `command` (a server started here, over stdio) or `url` (a server "
        "reached over HTTP)"
    )


def _text(where: str, server: dict[str, Any], key: str) -> str:
    value = server.get(key)
    if not isinstance(value, str) or not value.strip():
        problem = "is missing" if value is None else f"must be a non-empty string, not {value!r}"
        raise UsageError(f"{where}: `{key}` {problem}")
    return value


def _texts(where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise UsageError(f"{where}: `args` must be a list of strings")
    return list(value)


def _text_map(where: str, key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UsageError(f"{where}: `{key}` must be an object of strings")
    return dict(value)
