"""Playbooks called like functions: argument binding, the child run, results back.

Shared by ``subplay`` (a named callee) and ``exec`` (a callee chosen at run time) and by the
runtime for the top-level playbook. Arguments are checked against the callee's
``input_schema`` (required, defaults, types); the callee's ``output_schema`` keys are copied
back into the caller's variables (``None`` for a key the callee did not set, so a value
from an earlier loop iteration never survives by accident).

SAIVerse's implicit rules (:mod:`sea.lang.saiverse`) apply: a callee's ``input`` is the
node's ``args.input``, else the caller's ``input``, else its ``last``; ``metadata`` (the user
message's metadata) is passed on to every callee that does not declare it; a parameter
declared without a type takes any JSON value. The intent's prompt pattern and stage
(:data:`~sea.lang.variables.INTENT_VARIABLES`) are passed on the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from langgraph.errors import GraphBubbleUp

from sea.engine.events import WarningRaised
from sea.engine.pulse import CompiledPlaybook, Frame, Pulse, as_text
from sea.engine.state import PlaybookState, Update, assign, variables
from sea.engine.sub_line import copy_messages, report_back
from sea.engine.tools.engine_tool import replayable
from sea.engine.waits import ALWAYS, Policy, Waits, may_wait
from sea.errors import (
    BoundExceeded,
    CallArgumentError,
    CallDepthExceeded,
    CallTargetError,
    ExecutionError,
    PulseCancelled,
    SeaError,
)
from sea.lang import saiverse
from sea.lang.models import REPORT_KEY, Playbook
from sea.lang.node_models import CallNode
from sea.lang.templates import MISSING, render, resolve_path
from sea.lang.variables import INTENT_VARIABLES, SAIVERSE_RUN_VARIABLES, RunVariables


def bind_args(
    callee: Playbook,
    args: Mapping[str, Any],
    *,
    strict: bool = True,
    playbook: str | None = None,
    node: str | None = None,
) -> dict[str, Any]:
    """The callee's declared inputs from ``args``, with defaults, checked.

    Args:
        callee: The playbook being called.
        args: The arguments given.
        strict: An argument the callee does not declare is an error (else it is dropped).
        playbook: The caller's name (for the error).
        node: The calling node (for the error).

    Raises:
        CallArgumentError: every problem at once (missing, wrong type, unknown).
    """
    problems: list[str] = []
    bound: dict[str, Any] = {}
    for param in callee.input_schema:
        if param.name in args and args[param.name] is not None:
            value = args[param.name]
            problem = None if saiverse.untyped(param) else param.problem_with(value)
            if problem:
                problems.append(f"argument {param.name!r} {problem}")
            bound[param.name] = value
        elif param.default is not None:
            bound[param.name] = param.default
        elif param.required:
            problems.append(f"required argument {param.name!r} is missing")
        else:
            bound[param.name] = None
    for name in SAIVERSE_RUN_VARIABLES:  # ``metadata``: passed on, declared or not
        if name in args and name not in bound and args[name] is not None:
            if not isinstance(args[name], dict):
                problems.append(f"argument {name!r} must be an object")
            bound[name] = args[name]
    unknown = unknown_args(callee, args)
    if strict and unknown:
        names = ", ".join(sorted(p.name for p in callee.input_schema)) or "none"
        problems.append(f"unknown argument(s) {', '.join(unknown)} (parameters: {names})")
    if problems:
        raise CallArgumentError(
            f"cannot call playbook {callee.name!r}: " + "; ".join(problems),
            playbook=playbook,
            node=node,
        )
    return bound


def unknown_args(callee: Playbook, args: Mapping[str, Any]) -> list[str]:
    """Names in ``args`` the callee does not declare (``input`` and ``metadata`` are
    always accepted)."""
    declared = {p.name for p in callee.input_schema} | {"input"} | SAIVERSE_RUN_VARIABLES
    return sorted(k for k in args if k not in declared)


def initial_state(
    frame: Frame, bound: Mapping[str, Any], *, input: str, steps: int = 0
) -> PlaybookState:
    """The state a playbook run starts from: builtins, then its bound inputs."""
    persona = frame.pulse.persona
    builtins: RunVariables = {
        "input": input,
        "persona_id": persona.id,
        "persona_name": persona.name,
        "pulse_id": frame.pulse.pulse_id,
    }
    return {
        "vars": {**builtins, **bound},
        "last": bound.get("input", input),
        "error": None,
        "fault": None,
        "outputs": [],
        "spoken": [],
        "steps": steps,
        "visits": {},
    }


def child_scope(frame: Frame, node: CallNode, state: PlaybookState, isolate: bool) -> str | None:
    """The memory scope of a callee: its own (stable across a resume) when isolated."""
    if not isolate:
        return None
    visit = (state.get("visits") or {}).get(node.id, 0)
    return f"{frame.scope}/{frame.name}.{node.id}.{visit}"


def check_call(frame: Frame, callee: Playbook, node: str) -> None:
    """Refuse a call that would nest too deep or recurse."""
    limit = frame.services.limits.max_depth
    if frame.depth + 1 > limit:
        chain = " → ".join((*frame.stack, callee.name))
        raise CallDepthExceeded(
            f"sub-playbook calls nested deeper than {limit} (Limits.max_depth): {chain}",
            playbook=frame.name,
            node=node,
        )
    if callee.name in frame.stack:
        chain = " → ".join((*frame.stack, callee.name))
        raise CallTargetError(
            f"recursive call of playbook {callee.name!r}: {chain}",
            playbook=frame.name,
            node=node,
        )


async def call_playbook(
    frame: Frame,
    node: CallNode,
    state: PlaybookState,
    callee: Playbook,
    args: Mapping[str, Any],
    *,
    strict: bool = True,
) -> Update:
    """Run ``callee`` as a function of this node and return the caller's update."""
    check_call(frame, callee, node.id)
    caller = variables(state)
    if node.input_template is not None and args.get("input") in (None, ""):
        args = {**args, "input": render(node.input_template, caller, missing="keep")}
    args = sourced_args(callee, implicit_args(node, args, caller), caller)
    bound = bind_args(callee, args, strict=strict, playbook=frame.name, node=node.id)
    for name in (*SAIVERSE_RUN_VARIABLES, *INTENT_VARIABLES):  # the user message's metadata
        if name in caller.maps[-1]:  # and the intent's pattern and stage reach every callee
            bound.setdefault(name, caller[name])
    dropped = [] if strict else unknown_args(callee, args)
    if dropped:
        frame.emit(
            WarningRaised(
                frame.pulse.pulse_id,
                "arguments_dropped",
                f"playbook {callee.name!r} declares no parameter(s) {', '.join(dropped)}; "
                "they were not passed",
                frame.name,
                node.id,
            )
        )
    sub = getattr(node, "line", "main") == "sub"
    isolate = bool(node.isolate_pulse_context) or node.execution == "subagent" or sub
    child = frame.child(callee, scope=child_scope(frame, node, state, isolate), sub_line=sub)
    if sub:
        await copy_messages(frame, child)
    services = frame.services
    _, compiled = frame.pulse.playbook(callee.name)
    start = int(state.get("steps") or 0) + 1
    first = initial_state(child, bound, input=_input_of(bound, args), steps=start)
    first["spent"] = dict(state.get("spent") or {})  # the callee's nodes count on from here
    limit = services.limits.recursion_limit
    try:
        final: Mapping[str, Any]
        kept = _kept(frame, node, compiled, sub)
        if kept is not None:
            journals = frame.pulse.journals
            journal = None if not kept or journals is None else await journals.open(
                f"{'/'.join(frame.stack)}.{node.id}@{frame.step}", kept,
                frame.pulse.caller.meter)
            final = await compiled.direct.run(first, replace(child, direct=True), limit,
                                              journal)
        else:
            final = await compiled.graph.ainvoke(
                first, config={"recursion_limit": limit}, context=child
            )
    except (GraphBubbleUp, BoundExceeded, PulseCancelled):
        raise
    except ExecutionError as exc:
        failure = ExecutionError(f"playbook {callee.name!r} failed: {exc}", code=exc.code)
        failure.steps = exc.steps  # the caller's step count includes the callee's nodes
        raise failure from exc
    update = _results(callee, node, final, start)
    if sub:
        report = (update.get("vars") or {}).get(REPORT_KEY)
        await report_back(frame, node.id, callee.name, final, report)
    return update


def _kept(frame: Frame, node: CallNode, compiled: CompiledPlaybook, sub: bool
          ) -> frozenset[str] | None:
    """Whether the callee runs without a LangGraph run of its own, in its caller's step
    (None: it does not), and which of its nodes' runs are then kept
    (:mod:`sea.engine.journal`). It runs so in a run without one, in a pulse that reads no
    callee's checkpoint (keeping none), and in a recoverable pulse when called by a node
    that does nothing after it (not a sub line's report, not a subagent's chronicle): then
    it keeps none when it runs as one step would (:meth:`Compiled.one_step`: its caller's
    step's checkpoint keeps what its own would, and nothing that can fail runs between the
    two), and otherwise keeps the runs of its nodes that may not run again harmlessly,
    unless one of them may call a playbook (:meth:`Compiled.kept`). None that can pause
    for a person in this pulse."""
    if frame.direct:
        return frozenset()
    pulse = frame.pulse
    if pulse.direct_calls:
        return None if can_wait(pulse, compiled.waits) else frozenset()
    if not pulse.recoverable or sub or node.execution == "subagent" \
            or can_wait(pulse, compiled.waits):
        return None
    replay = partial(_replayable, pulse)
    if compiled.one_step(replay):
        return frozenset()
    return None if pulse.journals is None else compiled.kept(replay)


def _replayable(pulse: Pulse, name: str) -> bool:
    """Whether the pulse's tool ``name`` may be called again harmlessly."""
    return name in pulse.toolbox and replayable(pulse.toolbox.get(name))


def can_wait(pulse: Pulse, waits: Waits) -> bool:
    """Whether a run with these ``waits`` can pause for a person in this pulse."""
    def callee(name: str) -> Waits:
        try:
            return pulse.playbook(name)[1].waits
        except SeaError:  # it fails where it is called, as it would in a nested run
            return ALWAYS

    def router_callable() -> list[str]:
        return [playbook.name for playbook in pulse.router_callable()]

    asked = pulse.approval_tools | pulse.gates.keys()
    unlisted = pulse.services.limits.unlisted_exec == "ask"
    return may_wait(
        waits, Policy(asked, unlisted, callee, router_callable, pulse.services.library.names)
    )


def implicit_args(
    node: CallNode, args: Mapping[str, Any], caller: Mapping[str, Any]
) -> dict[str, Any]:
    """``args`` with the arguments the node's callee receives implicitly filled in
    (:data:`sea.lang.saiverse.IMPLICIT_ARGUMENTS`: ``input``). A value the node passes
    itself is left as it is (and checked like any argument)."""
    filled = dict(args)
    for rule in saiverse.implicit_arguments(node.node_type()):
        if args.get(rule.name) not in (None, ""):
            continue
        value = saiverse.implicit_argument(rule, args, caller)
        if value is not None:
            filled[rule.name] = as_text(value) if rule.text else value
    return filled


def sourced_args(
    callee: Playbook, args: Mapping[str, Any], caller: Mapping[str, Any]
) -> dict[str, Any]:
    """``args`` with the arguments the callee's parameters take from their legacy ``source``
    when the caller passes none: ``input`` (the callee's input), ``parent.X`` (the
    caller's variable ``X``; absent: not passed)."""
    filled = dict(args)
    for param in callee.input_schema:
        if param.source is None or filled.get(param.name) is not None:
            continue
        if param.source == "input":
            value = filled.get("input")
        else:
            value = resolve_path(caller, param.source.removeprefix("parent."))
        if value is not None and value is not MISSING:
            filled[param.name] = value
    return filled


def _input_of(bound: Mapping[str, Any], args: Mapping[str, Any]) -> str:
    value = bound.get("input", args.get("input"))
    return value if isinstance(value, str) else ""


def _results(callee: Playbook, node: CallNode, final: Mapping[str, Any], start: int) -> Update:
    child_vars = variables(final)
    outputs = list(final.get("outputs") or [])
    update: Update = {
        "last": outputs[-1] if outputs else "",
        "steps": int(final.get("steps") or start) - start,
        "spoken": list(final.get("spoken") or []),
    }
    copied = {key: child_vars.get(key) for key in callee.output_schema or ()}
    if callee.report_template is not None:  # rendered from the final state, no model call
        copied[REPORT_KEY] = render(callee.report_template, child_vars, missing="keep")
    if copied:
        update.update(assign(copied))
    if node.propagate_output and outputs:
        update["outputs"] = outputs
    return update
