"""``/v1/stats``: statistics of the model and tool calls of the personas a key may see.

The same object as ``sea stats --json``: the totals of the model calls at the top level
(``calls``, ``failures``, ``retries``, ``tokens_in``, ``tokens_out``, ``cost``...) and the
tables beneath (``by_node``, ``by_pattern``, ``by_model``, ``tools``), of one persona
(``persona``) or of every persona of the key's tenant it may reach, from ``since`` on (an
ISO 8601 time with a UTC offset, or a time ago: ``30m``, ``24h``, ``7d``); with ``advise``,
the nodes that stand out and what would likely help (``advice``, as ``sea stats --advise``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter

from sea.errors import InvalidRequest
from sea.llm.advice import advise as advice_of
from sea.llm.stats import since_moment, statistics
from sea.serve.deps import Ctx, Reader

router = APIRouter(prefix="/v1", tags=["stats"])
MAX_PERSONAS = 10_000


def since_time(text: str | None, now: datetime) -> datetime | None:
    """The moment ``since`` names (None when not given; see
    :func:`sea.llm.stats.since_moment`).

    Raises:
        InvalidRequest: neither a time ago (``24h``) nor an ISO 8601 time with an offset.
    """
    if text is None:
        return None
    try:
        return since_moment(text, now)
    except ValueError as wrong:
        raise InvalidRequest(f"since {text!r} {wrong}") from None


@router.get("/stats")
async def stats(ctx: Ctx, principal: Reader, persona: str | None = None,
                since: str | None = None, advise: bool = False) -> dict[str, Any]:
    """``sea stats --json`` of the key's personas (or of ``persona``), from ``since`` on
    (``--advise`` with ``advise``)."""
    moment = since_time(since, datetime.now(UTC))
    if persona is not None:
        visible = {(await ctx.visible_persona(principal, persona)).id}
    else:
        rows = await ctx.call(ctx.records.personas, principal.tenant, limit=MAX_PERSONAS)
        visible = {row.id for row in rows if principal.sees(row.id, row.tenant)}
    records = await ctx.call(ctx.store.call_records, persona, since=moment)
    seen = [r for r in records if r.persona in visible]
    result: dict[str, Any] = statistics(seen).to_json()
    if advise:
        result["advice"] = [a.to_json() for a in advice_of(seen)]
    return result
