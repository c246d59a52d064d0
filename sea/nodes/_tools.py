"""Running one tool for a node: approval when the host asks for it, the call, its event, and
the person's answer a gated tool's result waits for."""

from __future__ import annotations

from collections.abc import Mapping
from time import perf_counter
from typing import Any, NoReturn

import orjson
from pydantic import BaseModel

from sea.engine.approval import ask, require_approval
from sea.engine.events import ToolCalled, ToolSettled
from sea.engine.gates import ToolGate
from sea.engine.pulse import Frame
from sea.errors import ExecutionError, NodeFailed, SeaError, SizeLimitExceeded, ToolFailed
from sea.jsontypes import json_size


async def run_tool(
    frame: Frame,
    node: str,
    name: str,
    args: Mapping[str, Any],
    *,
    action_id: str | None = None,
    approved: bool = False,
    resumed: Mapping[str, Any] | None = None,
    context: Mapping[str, Any] | None = None,
) -> Any:
    """Call tool ``name`` with ``args`` for ``node``; failures raise ExecutionError subclasses.

    ``action_id``: the pipeline action the call carries out (kept on its event);
    ``approved``: a person already approved this call (the host's approval policy is not
    asked again). A gated tool's result (:mod:`sea.engine.gates`) may make the pulse wait
    for a person; the request then carries the result and ``context`` (what the caller
    needs to go on without redoing anything), and when the pulse is resumed the tool is not
    called again: its result is taken from the request (``resumed``: the request the caller
    already took from the pulse, else it is taken here).
    """
    pulse = frame.pulse
    if name in pulse.approval_tools and not approved:
        require_approval(frame, node, f"tool {name!r}", {"tool": name, "args": dict(args)})
    gate = pulse.gates.get(name)
    if gate is None:
        waited = resumed if resumed is not None else pulse.pending_request(frame.name, node)
        if _asked_about(waited, name, action_id):
            raise ToolFailed(
                f"the pulse waited for a person's answer about tool {name!r}, and this "
                "runtime cannot take it: it has no such tool that waits for answers (the plan "
                "tools need the workspace the pulse ran with; resume with the same "
                "--workspace)", playbook=frame.name, node=node)
        return await _call(frame, node, name, args, action_id)
    shown = resumed if resumed is not None else pulse.take_pending(frame.name, node)
    if shown is not None and _asked_about(shown, name, action_id):
        value = shown["result"]  # it ran before the pulse waited: not again
    else:
        value = await _call(frame, node, name, args, action_id)
    return await _settle(frame, node, name, gate, value, action_id, context)


def _asked_about(request: Mapping[str, Any] | None, name: str, action_id: str | None) -> bool:
    """Whether ``request`` is a gated call's of tool ``name`` (for action ``action_id``)."""
    return (request is not None and request.get("tool") == name
            and request.get("action_id") == action_id and "result" in request)


async def _call(
    frame: Frame, node: str, name: str, args: Mapping[str, Any], action_id: str | None
) -> Any:
    """The call itself and its ``tool_call`` event (whose arguments are the checked and
    normalized ones the tool received)."""
    pulse = frame.pulse
    started = perf_counter()
    box = pulse.toolbox
    try:
        args = box.check(name, args, playbook=frame.name, node=node)  # as the tool gets them
        result = await box.invoke(
            name, args, playbook=frame.name, node=node, pulse_id=pulse.pulse_id, checked=True,
            timeout_s=frame.services.limits.tool_timeout_s,
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


async def _settle(
    frame: Frame,
    node: str,
    name: str,
    gate: ToolGate,
    value: Any,
    action_id: str | None,
    context: Mapping[str, Any] | None,
) -> Any:
    """Ask a person about a gated tool's result when its gate says so; the settled value."""
    request = gate.request(value)
    answer = None
    if request is not None:
        detail = {**request, "tool": name, "action_id": action_id, "result": value,
                  **(context or {})}
        answer = ask(frame, node, str(detail.pop("action", f"tool {name!r}")), detail)
    try:
        settled = await gate.settle(value, answer, playbook=frame.name, node=node)
    except SeaError as exc:
        raise ToolFailed(f"tool {name!r} could not take the answer: {exc}",
                         playbook=frame.name, node=node) from exc
    received = state_value(settled, frame, node, name)
    frame.emit(ToolSettled(frame.pulse.pulse_id, frame.name, node, name, action_id,
                           request is not None, answer, received))
    return received


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    raise TypeError(type(value).__name__)


def state_value(result: Any, frame: Frame, node: str, tool: str) -> Any:
    """A tool's result as JSON data (what state, checkpoints and memory can keep).

    Tuples become lists, pydantic models their JSON form; anything else that is not JSON
    data fails the node with a message that names the tool and the type. A result larger
    than ``Limits.max_tool_result_chars`` fails it with :class:`SizeLimitExceeded`.

    The result is written as JSON once, in C, and read back (the copy state keeps); its
    characters are counted only when that text has more bytes than the limit (a character
    takes at least one byte). A text or a list or object whose own length is past the limit
    is refused before it is written, so a tool's flood of text is never copied.
    """
    limit = frame.services.limits.max_tool_result_chars
    if type(result) in _SIZED and len(result) > limit:
        _size_exceeded(limit, frame, node, tool)
    try:
        text = orjson.dumps(result, default=_default)
        value = orjson.loads(text)
    except TypeError as exc:
        raise NodeFailed(
            f"tool {tool!r} returned {type(result).__name__} data that is not JSON ({exc}); "
            "a tool must return strings, numbers, booleans, lists or objects",
            playbook=frame.name,
            node=node,
        ) from exc
    if len(text) > limit and json_size(value, limit) > limit:
        _size_exceeded(limit, frame, node, tool)
    return value


_SIZED = frozenset({str, dict, list, tuple})
"""Types whose ``len`` bounds their JSON text from below (a character or a member each)."""


def _size_exceeded(limit: int, frame: Frame, node: str, tool: str) -> NoReturn:
    """Raise :class:`SizeLimitExceeded` for a result over ``limit`` characters."""
    raise SizeLimitExceeded(
        f"tool {tool!r} returned more than {limit:,} characters "
        "(Limits.max_tool_result_chars); the result was dropped",
        limit="max_tool_result_chars",
        playbook=frame.name,
        node=node,
    )
