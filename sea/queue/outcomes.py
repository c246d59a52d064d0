"""What a worker keeps of an attempt: its result (a fault below the runtime included) in
the form a pulse row holds."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from sea.errors import ExecutionError
from sea.host.result import PulseResult
from sea.jsontypes import json_text
from sea.queue.records import PulseRecord


async def guarded(record: PulseRecord, run: Callable[[], Awaitable[PulseResult]]) -> PulseResult:
    """The run's result; anything it raises but cancellation becomes an error result, so
    the attempt is recorded and retried like any failed attempt. (The runtime turns what
    a pulse raises into its result; a fault below it, such as a native extension's panic,
    which is no ``Exception``, would otherwise fail the job and leave the pulse
    ``running`` for good.)"""
    try:
        return await run()
    except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # recorded as the attempt's error
        error = {"code": ExecutionError.code, "message": f"{type(exc).__name__}: {exc}",
                 "playbook": record.playbook, "node": None}
        return PulseResult(pulse_id=record.id, status="error", spoken=[], outputs={},
                           texts=[], error=error, llm_calls=[], memory_writes=[], usage={})


def summary(result: PulseResult) -> dict[str, Any]:
    """What a pulse row keeps of a run's result."""
    return json_safe({
        "status": result.status,
        "spoken": result.spoken,
        "texts": result.texts,
        "outputs": result.outputs,
        "usage": result.usage,
        "handled_errors": result.handled_errors,
        "approval": result.approval,
    })


def json_safe(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` with everything JSON cannot hold written as text."""
    loaded: dict[str, Any] = orjson.loads(json_text(value))
    return loaded
