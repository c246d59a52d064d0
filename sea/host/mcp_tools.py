"""Host tools from MCP servers (the ``--mcp`` of ``sea run``), through langchain-mcp-adapters.

:func:`mcp_tools` opens one session per server (:mod:`sea.host.mcp_config` reads the
servers) for as long as its block lasts: a server is started once, not once per call. Its
tools may be called from any event loop while the block is open (a call from another loop
is carried over to the session's); the blocking form :func:`blocking_mcp_tools` keeps the
sessions on a loop thread of its own, for hosts that use the runtime's synchronous methods.

A tool's result is its text (the text blocks joined by newlines), or the structured
content the server sent along when the text is exactly that content as JSON; a result
with images, files or other blocks is the list of its content blocks. A tool that reports
an error (``isError``) fails the call.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

import anyio
import orjson
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException

from sea.errors import UsageError
from sea.host.blocking import LoopThread
from sea.host.mcp_config import Connection

START_TIMEOUT = 30.0
"""Seconds a server has to start and list its tools."""

INSTALL_HINT = "install the mcp extra: pip install 'sea-runtime[mcp]'"


@asynccontextmanager
async def mcp_tools(
    servers: Mapping[str, Connection],
    *,
    source: str = "MCP config",
    start_timeout: float = START_TIMEOUT,
) -> AsyncIterator[list[BaseTool]]:
    """The tools of ``servers``, each server started (or connected to) once for the block.

    Args:
        servers: Server name → connection (:func:`sea.host.mcp_config.read_mcp_config`).
        source: Where the servers were configured, for messages.
        start_timeout: The longest wait for a server to start, in seconds.

    Yields:
        The servers' tools, for the block (an async context manager).

    Raises:
        UsageError: the mcp extra is missing, or a server cannot be started, does not
            answer within ``start_timeout`` seconds, or fails while starting.
    """
    try:
        from langchain_mcp_adapters.client import MultiServerMCPClient
        from langchain_mcp_adapters.tools import load_mcp_tools
    except ImportError:
        raise UsageError(f"{source}: MCP servers need langchain-mcp-adapters; "
                         f"{INSTALL_HINT}") from None
    client = MultiServerMCPClient(dict(servers))  # type: ignore[arg-type]  # checked above
    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        tools: list[BaseTool] = []
        for name, connection in servers.items():
            try:
                async with asyncio.timeout(start_timeout):
                    session = await stack.enter_async_context(client.session(name))
                    found = await load_mcp_tools(session, server_name=name,
                                                 handle_tool_errors=False)
            except Exception as exc:  # whatever the server or transport did: said plainly
                raise UsageError(
                    f"{source}: server {name!r} {_start_failure(connection, exc, start_timeout)}"
                ) from None
            tools.extend(_on_loop(tool, name, loop) for tool in found)
        yield tools


@contextmanager
def blocking_mcp_tools(
    servers: Mapping[str, Connection],
    *,
    source: str = "MCP config",
    start_timeout: float = START_TIMEOUT,
) -> Iterator[list[BaseTool]]:
    """:func:`mcp_tools` for hosts without an event loop: the sessions live on a loop
    thread of their own until the block ends, and the tools may be called from any loop
    (the runtime's synchronous methods included).

    Args:
        servers: Server name → connection (:func:`sea.host.mcp_config.read_mcp_config`).
        source: Where the servers were configured, for messages.
        start_timeout: The longest wait for a server to start, in seconds.

    Yields:
        The servers' tools, for the block.

    Raises:
        UsageError: as :func:`mcp_tools`.
    """
    thread = LoopThread()
    try:
        opened = mcp_tools(servers, source=source, start_timeout=start_timeout)
        with thread.portal().wrap_async_context_manager(opened) as tools:
            yield tools
    finally:
        thread.close()


def _start_failure(connection: Connection, exc: BaseException, timeout: float) -> str:
    """Why a server did not start, in words (the innermost cause of an exception group)."""
    leaf = _leaf(exc)
    where = connection.get("command") or connection.get("url")
    if isinstance(leaf, TimeoutError):
        return f"did not start within {timeout:g} s ({where})"
    if isinstance(leaf, FileNotFoundError):
        return f"cannot start: command {where!r} not found"
    if isinstance(leaf, OSError) and connection["transport"] == "stdio":
        return f"cannot start: {where}: {leaf.strerror or leaf}"
    text = str(leaf) or type(leaf).__name__
    if connection["transport"] == "stdio" and (
        isinstance(leaf, _CLOSED) or "connection closed" in text.lower()
    ):  # the server's pipes closed under the handshake: it exited (which one races)
        return f"exited while starting ({where}; its error output is above)"
    if connection["transport"] != "stdio":
        return f"cannot be reached at {where}: {type(leaf).__name__}: {text}"
    return f"failed while starting ({where}): {type(leaf).__name__}: {text}"


_CLOSED = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream,
           BrokenPipeError, ConnectionResetError)


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _on_loop(tool: BaseTool, server: str, loop: asyncio.AbstractEventLoop) -> BaseTool:
    """``tool`` run on ``loop`` (where its session lives) whatever loop calls it, with its
    result made plain (:func:`tool_result`)."""

    async def call(**arguments: Any) -> Any:
        work = _call(tool, arguments, server)
        if asyncio.get_running_loop() is loop:
            return await work
        if loop.is_closed() or not loop.is_running():
            work.close()
            raise ToolException(f"the session of MCP server {server!r} is closed")
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, loop))

    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.args_schema or {"type": "object", "properties": {}},
        coroutine=call,
        metadata={**(tool.metadata or {}), "mcp_server": server},
    )


async def _call(tool: BaseTool, arguments: dict[str, Any], server: str) -> Any:
    call = {"name": tool.name, "args": arguments, "id": uuid.uuid4().hex, "type": "tool_call"}
    try:
        message = await tool.ainvoke(call)
    except ToolException as exc:  # the server's error (isError), under a plain name
        raise ToolException(str(exc)) from exc
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
        raise ToolException(f"MCP server {server!r} has closed its connection") from None
    if not isinstance(message, ToolMessage):  # not a langchain-mcp-adapters tool after all
        return message
    if message.status == "error":
        raise ToolException(_text_of(message.content) or "the MCP tool reported an error")
    return tool_result(message.content, message.artifact)


def tool_result(content: Any, artifact: Any = None) -> Any:
    """An MCP tool's result as SEA data: the text of its text blocks (joined by newlines),
    or its structured content when the text is exactly that content as JSON; the content
    blocks themselves (without LangChain's random ids) when some are not text."""
    if isinstance(content, str):
        return content
    blocks = [block for block in content or [] if isinstance(block, dict | str)]
    if any(isinstance(b, dict) and b.get("type") != "text" for b in blocks):
        return [{k: v for k, v in b.items() if k != "id"} if isinstance(b, dict)
                else {"type": "text", "text": b} for b in blocks]
    text = _text_of(blocks)
    structured = artifact.get("structured_content") if isinstance(artifact, dict) else None
    if structured is not None and _same_json(text, structured):
        return structured
    return text


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b if isinstance(b, str) else str(b.get("text", ""))
                     for b in content or [] if isinstance(b, str | dict))


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(orjson.loads(text) == value)
    except orjson.JSONDecodeError:
        return False
