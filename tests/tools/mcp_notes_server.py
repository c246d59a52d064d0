"""A small real MCP server for the tests, over stdio (FastMCP, from the `mcp` package).

Run as a script: ``python mcp_notes_server.py`` (stdio), or ``python mcp_notes_server.py
--http PORT`` (streamable HTTP at ``http://127.0.0.1:PORT/mcp``). Its tools answer in the
three shapes an MCP tool can: plain text, structured content with its JSON text, and an
error.
"""

from __future__ import annotations

import sys
from typing import TypedDict

from mcp.server.fastmcp import FastMCP

server = FastMCP("notes", log_level="WARNING")


class Count(TypedDict):
    """How long a text is."""

    words: int
    letters: int


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@server.tool()
def count(text: str) -> Count:
    """How many words and letters the text has."""
    return Count(words=len(text.split()), letters=sum(c.isalpha() for c in text))


@server.tool()
def refuse(reason: str) -> str:
    """Always fails, with the reason given."""
    raise ValueError(f"refused: {reason}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.settings.host = "127.0.0.1"
        server.settings.port = int(sys.argv[2])
        server.run(transport="streamable-http")
    else:
        server.run()
