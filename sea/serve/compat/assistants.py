"""Assistants: SEA's top-level playbooks as LangGraph assistants.

An assistant is a playbook a host may offer at the top level (``user_selectable``, or the
server's default playbook); ``agent`` names the default one (agent-chat-ui's default
assistant). ``assistant_id`` is a UUID derived from the name; both the UUID and the name
(``graph_id``) are accepted wherever an assistant is named.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict

from sea.errors import ResourceNotFound
from sea.lang.models import Playbook
from sea.serve.context import ServeContext
from sea.serve.deps import Ctx, Reader

router = APIRouter(tags=["assistants"])
NAMESPACE = uuid.UUID("5ea5e7ae-0b1c-4c6e-9d43-3a55a1a7e001")
ALIAS = "agent"
CREATED = "1970-01-01T00:00:00+00:00"


@dataclass(frozen=True, slots=True)
class Assistant:
    """An assistant: its graph id (the name clients use) and the playbook it runs."""

    graph_id: str
    playbook: Playbook

    @property
    def assistant_id(self) -> str:
        """The assistant's UUID."""
        return str(uuid.uuid5(NAMESPACE, self.graph_id))

    def to_json(self) -> dict[str, Any]:
        """The assistant as LangGraph's ``Assistant``."""
        return {
            "assistant_id": self.assistant_id, "graph_id": self.graph_id,
            "name": self.graph_id, "description": self.playbook.description,
            "config": {}, "context": {}, "metadata": {"playbook": self.playbook.name},
            "version": 1, "created_at": CREATED, "updated_at": CREATED,
        }


def assistants(ctx: ServeContext) -> list[Assistant]:
    """Every assistant: ``agent`` (the default playbook), then the top-level playbooks."""
    library = ctx.library
    default = library.get(ctx.settings.default_playbook)
    found = [Assistant(ALIAS, default)]
    for name in sorted(library.names()):
        try:
            playbook = library.get(name)
        except Exception:  # a broken file is no assistant (`sea validate` reports it)
            continue
        if playbook.user_selectable or name == default.name:
            found.append(Assistant(name, playbook))
    return found


def assistant(ctx: ServeContext, given: str) -> Assistant:
    """The assistant named by UUID or graph id.

    Raises:
        ResourceNotFound: no such assistant.
    """
    for each in assistants(ctx):
        if given in (each.assistant_id, each.graph_id):
            return each
    raise ResourceNotFound(f"assistant {given!r} not found (assistants are SEA's top-level "
                           f"playbooks; {ALIAS!r} is the default one)")


class AssistantSearch(BaseModel):
    """``POST /assistants/search`` and ``/count``."""

    model_config = ConfigDict(extra="allow")
    metadata: dict[str, Any] | None = None
    graph_id: str | None = None
    name: str | None = None
    limit: int = 10
    offset: int = 0


def _matching(ctx: ServeContext, body: AssistantSearch) -> list[Assistant]:
    found = assistants(ctx)
    if body.graph_id is not None:
        found = [a for a in found if a.graph_id == body.graph_id]
    if body.name is not None:
        found = [a for a in found if body.name.lower() in a.graph_id.lower()]
    wanted = body.metadata or {}
    return [a for a in found if all(a.to_json()["metadata"].get(k) == v
                                    for k, v in wanted.items())]


@router.post("/assistants/search")
async def search(body: AssistantSearch, ctx: Ctx,
                 _: Reader) -> list[dict[str, Any]]:
    """Assistants matching the search."""
    found = await ctx.call(_matching, ctx, body)
    return [a.to_json() for a in found[body.offset:body.offset + body.limit]]


@router.post("/assistants/count")
async def count(body: AssistantSearch, ctx: Ctx,
                _: Reader) -> int:
    """How many assistants match the search."""
    return len(await ctx.call(_matching, ctx, body))


@router.get("/assistants/{assistant_id}")
async def get(assistant_id: str, ctx: Ctx,
              _: Reader) -> dict[str, Any]:
    """One assistant."""
    return (await ctx.call(assistant, ctx, assistant_id)).to_json()


@router.get("/assistants/{assistant_id}/graph")
async def graph(assistant_id: str, xray: bool | int = False,
                *, ctx: Ctx,
                _: Reader) -> dict[str, Any]:
    """The playbook's graph, as LangChain's ``Graph.to_json()``: its nodes (``__start__``,
    each node, ``__end__``) and edges (labelled when they are a branch, ``conditional``
    when a node has several)."""
    playbook = (await ctx.call(assistant, ctx, assistant_id)).playbook
    nodes: list[dict[str, Any]] = [{"id": "__start__", "type": "schema", "data": "__start__"}]
    edges: list[dict[str, Any]] = [{"source": "__start__", "target": playbook.start_node}]
    for node in playbook.nodes:
        nodes.append({"id": node.id, "type": "runnable",
                      "data": {"id": ["sea", "nodes", node.node_type()], "name": node.id}})
        out = list(node.edges())
        for edge in out:
            item: dict[str, Any] = {"source": node.id, "target": edge.target or "__end__"}
            if edge.label is not None or edge.on_error:
                item["data"] = "error" if edge.on_error else edge.label
            if len(out) > 1:
                item["conditional"] = True
            edges.append(item)
    nodes.append({"id": "__end__", "type": "schema", "data": "__end__"})
    return {"nodes": nodes, "edges": edges}


@router.get("/assistants/{assistant_id}/schemas")
async def schemas(assistant_id: str, ctx: Ctx,
                  _: Reader) -> dict[str, Any]:
    """The assistant's input, output and state schemas (JSON Schema)."""
    found = await ctx.call(assistant, ctx, assistant_id)
    message = {"type": "object", "properties": {"type": {"type": "string"},
                                                "content": {}, "id": {"type": "string"}}}
    state = {"type": "object", "title": "State",
             "properties": {"messages": {"type": "array", "items": message}}}
    args = {p.name: {"description": getattr(p, "description", None) or ""}
            for p in found.playbook.input_schema}
    return {"graph_id": found.graph_id, "input_schema": state, "output_schema": state,
            "state_schema": state,
            "config_schema": {"type": "object", "properties": {}},
            "context_schema": {"type": "object", "title": "Arguments", "properties": args}}


@router.get("/assistants/{assistant_id}/subgraphs")
async def subgraphs(assistant_id: str, ctx: Ctx,
                    _: Reader) -> dict[str, Any]:
    """Subgraphs: none are exposed (a called playbook is an assistant of its own)."""
    await ctx.call(assistant, ctx, assistant_id)
    return {}
