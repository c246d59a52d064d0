"""``/v1/stats``: statistics of the model and tool calls of the personas a key may see.

The same object as ``sea stats --json``: the totals of the model calls at the top level
(``calls``, ``failures``, ``retries``, ``tokens_in``, ``tokens_out``, ``cost``...) and the
tables beneath (``by_node``, ``by_pattern``, ``by_model``, ``tools``), of one persona
(``persona``) or of every persona of the key's tenant it may reach, from ``since`` on (an
ISO 8601 time with a UTC offset, or a time ago: ``30m``, ``24h``, ``7d``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter

from sea.errors import InvalidRequest
from sea.llm.stats import statistics
from sea.serve.deps import Ctx, Reader

router = APIRouter(prefix="/v1", tags=["stats"])
_AGO = re.compile(r"(?P<count>\d{1,6})(?P<unit>[smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
MAX_PERSONAS = 10_000


def since_time(text: str | None, now: datetime) -> datetime | None:
    """The moment ``since`` names (None when not given).

    Raises:
        InvalidRequest: neither a time ago (``24h``) nor an ISO 8601 time with an offset.
    """
    if text is None:
        return None
    ago = _AGO.fullmatch(text.strip())
    if ago is not None:
        return now - timedelta(**{_UNITS[ago["unit"]]: int(ago["count"])})
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidRequest(f"since {text!r} is neither a time ago (30m, 24h, 7d) nor an "
                             "ISO 8601 time") from None
    if moment.tzinfo is None:
        raise InvalidRequest(f"since {text!r} needs a UTC offset, e.g. {text}+00:00")
    return moment


@router.get("/stats")
async def stats(ctx: Ctx, principal: Reader, persona: str | None = None,
                since: str | None = None) -> dict[str, Any]:
    """``sea stats --json`` of the key's personas (or of ``persona``), from ``since`` on."""
    moment = since_time(since, datetime.now(UTC))
    if persona is not None:
        visible = {(await ctx.visible_persona(principal, persona)).id}
    else:
        rows = await ctx.call(ctx.records.personas, principal.tenant, limit=MAX_PERSONAS)
        visible = {row.id for row in rows if principal.sees(row.id, row.tenant)}
    records = await ctx.call(ctx.store.call_records, persona, since=moment)
    found = statistics([r for r in records if r.persona in visible])
    result: dict[str, Any] = found.to_json()
    return result
