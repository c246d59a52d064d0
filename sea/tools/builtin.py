"""Built-in tools: the router's playbook list and the persona's memory.

* ``list_available_playbooks``: router-callable playbooks as ``[{name, description}]``.
* ``memory_search``: full-text search of the persona's memory.
* ``memory_recent``: the persona's newest messages.

Memory results are ``[{role, content, created_at}]``, oldest first for ``memory_recent`` and
best first for ``memory_search``. When the call's metadata names the current pulse
(``sea_pulse_id``, set by :meth:`sea.tools.box.ToolBox.invoke`), messages of that pulse are
left out: a search should find what was said before, not the question being asked.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from saimemory import Message, MessageStore
from sea.models import Playbook

MAX_LIMIT = 50


class PlaybookCatalog(Protocol):
    """What ``list_available_playbooks`` needs from a playbook library."""

    def router_callable(self) -> list[Playbook]:
        """The playbooks a router may choose."""
        ...


class _NoArgs(BaseModel):
    pass


class _SearchArgs(BaseModel):
    query: str = Field(min_length=1, description="Words to look for (any language).")
    limit: int = Field(default=5, ge=1, le=MAX_LIMIT, description="How many messages at most.")
    tags: list[str] | None = Field(
        default=None, description="Only messages with all of these tags, e.g. `conversation`."
    )


class _RecentArgs(BaseModel):
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT, description="How many messages at most.")


def builtin_tools(
    *, store: MessageStore, persona_id: str, library: PlaybookCatalog
) -> list[BaseTool]:
    """The built-in tools for one persona.

    Args:
        store: The persona's message store.
        persona_id: Whose memory the memory tools read.
        library: Where ``list_available_playbooks`` finds router-callable playbooks.
    """
    return [
        _list_playbooks_tool(library),
        _memory_search_tool(store, persona_id),
        _memory_recent_tool(store, persona_id),
    ]


def _list_playbooks_tool(library: PlaybookCatalog) -> BaseTool:
    def run() -> list[dict[str, str]]:
        return [{"name": p.name, "description": p.description} for p in library.router_callable()]

    return _tool(
        run,
        name="list_available_playbooks",
        description="List the playbooks a router may choose, with their descriptions.",
        args_schema=_NoArgs,
    )


def _memory_search_tool(store: MessageStore, persona_id: str) -> BaseTool:
    def run(
        query: str,
        limit: int = 5,
        tags: list[str] | None = None,
        *,
        config: RunnableConfig,
    ) -> list[dict[str, Any]]:
        hits = store.search(persona_id, query, tags=tuple(tags or ()), limit=limit + _spare(config))
        messages = [hit.message for hit in hits]
        return _records(_outside_pulse(messages, config)[:limit])

    return _tool(
        run,
        name="memory_search",
        description="Search the persona's memory (full text) and return the best matches.",
        args_schema=_SearchArgs,
    )


def _memory_recent_tool(store: MessageStore, persona_id: str) -> BaseTool:
    def run(limit: int = 10, *, config: RunnableConfig) -> list[dict[str, Any]]:
        messages = store.recent(persona_id, limit=limit + _spare(config))
        return _records(_outside_pulse(messages, config)[-limit:])

    return _tool(
        run,
        name="memory_recent",
        description="The persona's most recent messages, oldest first.",
        args_schema=_RecentArgs,
    )


def _tool(
    run: Callable[..., Any], *, name: str, description: str, args_schema: type[BaseModel]
) -> BaseTool:
    """A tool of a quick synchronous ``run``, awaited in place (no thread hop).

    The coroutine keeps ``run``'s signature, so a ``config: RunnableConfig`` parameter
    still receives the call's config.
    """

    @functools.wraps(run)
    async def arun(*args: Any, **kwargs: Any) -> Any:
        return run(*args, **kwargs)

    return StructuredTool.from_function(
        func=run, coroutine=arun, name=name, description=description, args_schema=args_schema
    )


_PULSE_SPARE = 20
"""Extra rows read when the current pulse's messages will be filtered out."""


def _pulse_of(config: RunnableConfig | None) -> str | None:
    metadata = (config or {}).get("metadata") or {}
    pulse = metadata.get("sea_pulse_id")
    return pulse if isinstance(pulse, str) else None


def _spare(config: RunnableConfig | None) -> int:
    return _PULSE_SPARE if _pulse_of(config) else 0


def _outside_pulse(messages: Sequence[Message], config: RunnableConfig | None) -> list[Message]:
    pulse = _pulse_of(config)
    return [m for m in messages if pulse is None or m.pulse_id != pulse]


def _records(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [
        {
            "role": m.role,
            "content": m.content,
            "created_at": m.created_at.isoformat(timespec="seconds"),
        }
        for m in messages
    ]
