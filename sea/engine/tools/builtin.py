"""Built-in tools: the router's playbook list and the persona's memory.

* ``list_available_playbooks``: router-callable playbooks as ``[{name, description}]``.
* ``rank_playbooks``: the same playbooks ranked for a message by a lexical prior over their
  ``examples`` and descriptions (:mod:`sea.engine.tools.route_prior`): the few candidates a
  router's model should choose among, or the one choice when nothing is left to choose.
* ``spot_file_question``: whether the user's message is a simple file question (is there a
  file, what a folder holds) and the ``file_exists`` or ``list_files`` call that answers it,
  by a structural rule over the message and the workspace's real paths
  (:mod:`sea.engine.tools.file_prior`); never one without a workspace.
* ``memory_search``: full-text search of the persona's memory; by default a natural-language
  query (``match="any"``: one word suffices, punctuation is ignored, rare words rank first),
  or with ``match="all"`` every word as written.
* ``memory_recent``: the persona's newest messages.
* ``plan_memory``: the persona's plan in progress, summarized with seed 001's instruction
  for a router's or planner's prompt (:func:`sea.engine.tools.plan_memory.plan_memory`); it reads
  the store only, so it is there with or without a workspace.

Memory results are ``[{role, content, created_at}]``, oldest first for ``memory_recent`` and
best first for ``memory_search``. When the call's metadata names the current pulse
(``sea_pulse_id``, set by :meth:`sea.engine.tools.box.ToolBox.invoke`), messages of that pulse are
left out: a search should find what was said before, not the question being asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal, Protocol

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from saimemory import Message, MessageStore
from sea.engine.tools.box import ToolMaker
from sea.engine.tools.engine_tool import engine_tool
from sea.engine.tools.file_spotting import spot_file_question_tool
from sea.engine.tools.plan_memory import plan_memory
from sea.engine.tools.ranking import rank_playbooks_tool
from sea.engine.tools.signatures import ARGUMENTS
from sea.engine.tools.workspace import Workspace
from sea.lang.models import Playbook


class PlaybookCatalog(Protocol):
    """What ``list_available_playbooks`` needs from a playbook library."""

    def router_callable(self) -> list[Playbook]:
        """The playbooks a router may choose."""
        ...


def builtin_tools(
    *, store: MessageStore, persona_id: str, library: PlaybookCatalog,
    workspace: Workspace | None = None,
) -> list[BaseTool]:
    """The built-in tools for one persona.

    Args:
        store: The persona's message store.
        persona_id: Whose memory the memory tools read.
        library: Where ``list_available_playbooks`` finds router-callable playbooks.
        workspace: The workspace whose paths ``spot_file_question`` matches (None: none).
    """
    return [make() for make in builtin_tool_makers(
        store=store, persona_id=persona_id, library=library, workspace=workspace).values()]


def builtin_tool_makers(
    *, store: MessageStore, persona_id: str, library: PlaybookCatalog,
    workspace: Workspace | None = None,
) -> dict[str, ToolMaker]:
    """:func:`builtin_tools`, each made when first needed (for a :class:`ToolBox`)."""
    return {
        "list_available_playbooks": partial(_list_playbooks_tool, library),
        "rank_playbooks": partial(rank_playbooks_tool, library),
        "spot_file_question": partial(spot_file_question_tool, workspace),
        "memory_search": partial(_memory_search_tool, store, persona_id),
        "memory_recent": partial(_memory_recent_tool, store, persona_id),
        "plan_memory": partial(_plan_memory_tool, store, persona_id),
    }


def _list_playbooks_tool(library: PlaybookCatalog) -> BaseTool:
    def run() -> list[dict[str, str]]:
        return [{"name": p.name, "description": p.description} for p in library.router_callable()]

    return _tool(
        run,
        name="list_available_playbooks",
        description="List the playbooks a router may choose, with their descriptions.",
        inline=True,  # it reads no store: the list is the pulse's, worked out once
    )


def _memory_search_tool(store: MessageStore, persona_id: str) -> BaseTool:
    def run(
        query: str,
        limit: int = 5,
        tags: list[str] | None = None,
        match: Literal["any", "all"] = "any",
        *,
        config: RunnableConfig,
    ) -> list[dict[str, Any]]:
        def search(n: int) -> list[Message]:
            hits = store.search(persona_id, query, tags=tuple(tags or ()), limit=n, match=match)
            return [hit.message for hit in hits]

        return _records(_outside_pulse(store, persona_id, config, limit, search)[:limit])

    return _tool(
        run,
        name="memory_search",
        description="Search the persona's memory (full text) and return the best matches. "
        "By default (`match: any`) the query may be natural language, e.g. the user's "
        "question: a message needs only one of its words, and rare words rank first.",
    )


def _memory_recent_tool(store: MessageStore, persona_id: str) -> BaseTool:
    def run(limit: int = 10, *, config: RunnableConfig) -> list[dict[str, Any]]:
        def recent(n: int) -> list[Message]:
            return store.recent(persona_id, limit=n)

        return _records(_outside_pulse(store, persona_id, config, limit, recent)[-limit:])

    return _tool(
        run,
        name="memory_recent",
        description="The persona's most recent messages, oldest first.",
    )


def _plan_memory_tool(store: MessageStore, persona_id: str) -> BaseTool:
    def run() -> dict[str, Any]:
        return plan_memory(store.current_plan(persona_id))

    return _tool(
        run,
        name="plan_memory",
        description="The persona's plan in progress (title, status, next specs), or that "
        "there is none, with what to do about it: {active, plan_id, title, status, "
        "next_specs, summary, instruction, note}.",
    )


def _tool(
    run: Callable[..., Any], *, name: str, description: str, inline: bool = False
) -> BaseTool:
    """A tool of a synchronous ``run``; called from a pulse, it runs in a worker thread
    (as the pulse's memory writes do), so a slow store never blocks the event loop, unless
    it is ``inline`` (it reads no store: a thread would cost more than the call).
    A ``config: RunnableConfig`` parameter of ``run`` receives the call's config."""
    coroutine = None
    if inline:
        async def at_once(**kwargs: Any) -> Any:
            return run(**kwargs)

        coroutine = at_once
    return engine_tool(
        func=run, coroutine=coroutine, name=name, description=description,
        args_schema=ARGUMENTS[name], reads_only=True,  # each only reads
    )


def _pulse_of(config: RunnableConfig | None) -> str | None:
    metadata = (config or {}).get("metadata") or {}
    pulse = metadata.get("sea_pulse_id")
    return pulse if isinstance(pulse, str) else None


def _outside_pulse(
    store: MessageStore,
    persona_id: str,
    config: RunnableConfig | None,
    limit: int,
    fetch: Callable[[int], list[Message]],
) -> list[Message]:
    """What ``fetch(n)`` finds, without the current pulse's messages, in ``fetch``'s order.

    ``fetch`` is asked for ``limit`` messages more than the pulse has written, so at least
    ``limit`` others remain whenever the store holds that many.
    """
    pulse = _pulse_of(config)
    if pulse is None:
        return fetch(limit)
    own = len(store.pulse_messages(persona_id, pulse))
    return [m for m in fetch(limit + own) if m.pulse_id != pulse]


def _records(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [
        {
            "role": m.role,
            "content": m.content,
            "created_at": m.created_at.isoformat(timespec="seconds"),
        }
        for m in messages
    ]
