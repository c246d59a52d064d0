"""Running one tool for a node: approval when the host asks for it, the call, its event."""

from __future__ import annotations

from collections.abc import Mapping
from time import perf_counter
from typing import Any

from sea.approval import require_approval
from sea.errors import ExecutionError
from sea.events import ToolCalled
from sea.pulse import Frame


async def run_tool(frame: Frame, node: str, name: str, args: Mapping[str, Any]) -> Any:
    """Call tool ``name`` with ``args`` for ``node``; failures raise ExecutionError subclasses."""
    pulse = frame.pulse
    if name in frame.services.limits.approval_tools:
        require_approval(frame, node, f"tool {name!r}", {"tool": name, "args": dict(args)})
    started = perf_counter()
    try:
        result = await pulse.toolbox.invoke(
            name, args, playbook=frame.name, node=node, pulse_id=pulse.pulse_id
        )
    except ExecutionError as exc:
        took = perf_counter() - started
        error = {"code": exc.code, "message": exc.detail}
        frame.emit(ToolCalled(pulse.pulse_id, frame.name, node, name, dict(args), False, None,
                              error, took))
        raise
    took = perf_counter() - started
    frame.emit(ToolCalled(pulse.pulse_id, frame.name, node, name, dict(args), True, result,
                          None, took))
    return result
