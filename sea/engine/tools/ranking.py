"""The ``rank_playbooks`` tool: a router's lexical prior (:mod:`sea.engine.tools.route_prior`)
over the playbooks the pulse offers.

It answers ``{candidates, best, decided, confidence, scores, listing}``: the playbooks left
for the router's model to choose among, best first (``basic_chat``, the safe choice, among
them), the first of them, whether only one is left (no model needed), the best score (0–1),
every offered playbook's score, and the candidates as ``[{name, description}]`` for the
model's prompt. An ``llm`` node's ``choices_from`` narrows its ``playbook`` answer to the
candidates under the grammar.
"""

from __future__ import annotations

from typing import Any, Protocol

from langchain_core.tools import BaseTool

from sea.engine.tools.engine_tool import engine_tool
from sea.engine.tools.route_prior import Entry, rank
from sea.engine.tools.signatures import ARGUMENTS
from sea.lang.models import Playbook


class Offers(Protocol):
    """What the tool needs: the playbooks a router may choose."""

    def router_callable(self) -> list[Playbook]:
        """The playbooks a router may choose."""
        ...


def rank_playbooks_tool(library: Offers) -> BaseTool:
    """The tool, over the playbooks ``library`` offers a router."""

    def run(query: str, max_candidates: int = 3, keep_fallback: bool = False) -> dict[str, Any]:
        playbooks = library.router_callable()
        entries = [Entry(p.name, p.description, tuple(p.examples)) for p in playbooks]
        ranking = rank(query, entries, max_candidates=max_candidates,
                       keep_fallback=keep_fallback)
        described = {p.name: p.description for p in playbooks}
        return {
            "candidates": ranking.candidates,
            "best": ranking.best,
            "decided": ranking.decided,
            "confidence": ranking.confidence,
            "scores": ranking.scores,
            "listing": [{"name": name, "description": described.get(name, "")}
                        for name in ranking.candidates],
        }

    async def at_once(query: str, max_candidates: int = 3,
                      keep_fallback: bool = False) -> dict[str, Any]:
        return run(query, max_candidates, keep_fallback)  # reads no store: no worker thread

    return engine_tool(
        func=run, coroutine=at_once, name="rank_playbooks", reads_only=True,
        description="Rank the playbooks a router may choose for the user's message (a lexical "
        "prior over their examples and descriptions): the few candidates left to choose "
        "among, best first, and whether only one is left.",
        args_schema=ARGUMENTS["rank_playbooks"],
    )
