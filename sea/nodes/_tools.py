"""Running one tool for a node: approval when the host asks for it, the call, its event."""

from __future__ import annotations

from collections.abc import Mapping
from time import perf_counter
from typing import Any

import orjson
from pydantic import BaseModel

from sea.engine.approval import require_approval
from sea.engine.events import ToolCalled
from sea.engine.pulse import Frame
from sea.errors import ExecutionError, NodeFailed


async def run_tool(
    frame: Frame,
    node: str,
    name: str,
    args: Mapping[str, Any],
    *,
    action_id: str | None = None,
    approved: bool = False,
) -> Any:
    """Call tool ``name`` with ``args`` for ``node``; failures raise ExecutionError subclasses.

    ``action_id``: the pipeline action the call carries out (kept on its event);
    ``approved``: a person already approved this call (the host's approval policy is not
    asked again).
    """
    pulse = frame.pulse
    if name in pulse.approval_tools and not approved:
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
                              error, took, action_id))
        raise
    took = perf_counter() - started
    value = state_value(result, frame, node, name)
    frame.emit(ToolCalled(pulse.pulse_id, frame.name, node, name, dict(args), True, value,
                          None, took, action_id))
    return value


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    raise TypeError(type(value).__name__)


def state_value(result: Any, frame: Frame, node: str, tool: str) -> Any:
    """A tool's result as JSON data (what state, checkpoints and memory can keep).

    Tuples become lists, pydantic models their JSON form; anything else that is not JSON
    data fails the node with a message that names the tool and the type.
    """
    try:
        return orjson.loads(orjson.dumps(result, default=_default))
    except TypeError as exc:
        raise NodeFailed(
            f"tool {tool!r} returned {type(result).__name__} data that is not JSON ({exc}); "
            "a tool must return strings, numbers, booleans, lists or objects",
            playbook=frame.name,
            node=node,
        ) from exc
