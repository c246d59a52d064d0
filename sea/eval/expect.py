"""What a case's pulse did (:class:`Observation`, gathered from its events and result) and
the checks of a case's expectations against it.

Each expectation kind gives one :class:`Check` (``route``, ``nodes_ran``, ``tool_calls``,
``reply.contains``...): passed or not, and what was found when not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from sea.engine.events import (
    Event,
    MemoryWritten,
    NodeStarted,
    PlanChanged,
    PulseEnded,
    Spoken,
    ToolCalled,
)

ROUTER_OUTPUT = "selected_playbook"
"""The router's output variable (``sub_router_user``'s ``output_schema``)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call the pulse made."""

    tool: str
    args: Mapping[str, Any]
    ok: bool


@dataclass(frozen=True, slots=True)
class Memo:
    """A message a node wrote to memory (``memorize``): not the conversation itself."""

    playbook: str | None
    node: str | None
    content: str
    tags: tuple[str, ...]


@dataclass(slots=True)
class Observation:
    """What the case's last pulse did, from its events (and the router's choice from the
    pulse's outputs when the events do not show it)."""

    status: str = "error"
    reply: str = ""
    route: str | None = None
    nodes: list[str] = field(default_factory=list)
    """``playbook.node`` of every node that started, in order."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    memos: list[Memo] = field(default_factory=list)
    plan_proposed: bool = False
    specs: list[Mapping[str, Any]] = field(default_factory=list)
    error: str | None = None
    latency_s: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """What a run keeps of the pulse (the JSON report's ``observed``)."""
        return {
            "status": self.status, "route": self.route, "reply": self.reply[:2000],
            "nodes": self.nodes, "tools": [c.tool for c in self.tool_calls],
            "plan_proposed": self.plan_proposed, "error": self.error,
        }


def observe(events: Sequence[Event], outputs: Mapping[str, Any], entry: str) -> Observation:
    """The observation of one pulse.

    Args:
        events: Every event the pulse emitted.
        outputs: The entry playbook's outputs (its variables), for the router's choice.
        entry: The entry playbook's name.
    """
    seen = Observation()
    spoken: list[str] = []
    exec_depth: int | None = None
    for event in events:
        if isinstance(event, NodeStarted):
            exec_depth = _started(seen, event, entry, exec_depth)
        elif isinstance(event, Spoken):
            spoken.append(event.text)
        elif isinstance(event, ToolCalled):
            _called(seen, event)
        elif isinstance(event, MemoryWritten):
            if event.node is not None and "conversation" not in event.tags:
                seen.memos.append(Memo(event.playbook, event.node, event.content, event.tags))
        elif isinstance(event, PlanChanged):
            seen.plan_proposed = seen.plan_proposed or event.event == "plan_proposed"
        elif isinstance(event, PulseEnded):
            seen.status, seen.latency_s = event.status, event.duration_s
            if event.error:
                seen.error = f"{event.error.get('code')}: {event.error.get('message')}"
    chosen = outputs.get(ROUTER_OUTPUT)
    if isinstance(chosen, str) and chosen:
        seen.route = chosen
    seen.reply = "\n".join(spoken)
    return seen


def _started(seen: Observation, event: NodeStarted, entry: str,
             exec_depth: int | None) -> int | None:
    """Note a node that started; the route is the playbook the entry's ``exec`` node ran
    (returns the depth of that node once it started)."""
    seen.nodes.append(f"{event.playbook}.{event.node}")
    if exec_depth is not None and event.depth == exec_depth + 1 and seen.route is None:
        seen.route = event.playbook
    if event.playbook == entry and event.node_type == "exec" and seen.route is None:
        return event.depth
    return exec_depth


def _called(seen: Observation, event: ToolCalled) -> None:
    seen.tool_calls.append(ToolCall(event.tool, dict(event.args), event.ok))
    specs = event.args.get("specs")
    if event.tool == "plan_set_action_specs" and isinstance(specs, list):
        seen.specs = [s for s in specs if isinstance(s, dict)]


@dataclass(frozen=True, slots=True)
class Check:
    """One expectation of a case, judged."""

    name: str
    passed: bool | None
    """None: not judged (a rubric without ``--judge``)."""
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        """``{name, passed, detail}``."""
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


def check_all(expect: Mapping[str, Any], seen: Observation) -> list[Check]:
    """Every expectation but the rubric (judged by a model, see :mod:`sea.eval.judge`)."""
    checks: list[Check] = []
    for kind, value in expect.items():
        if kind == "rubric":
            continue
        if kind == "reply":
            checks += [_REPLY[sub](value[sub], seen.reply) for sub in value]
        else:
            checks.append(_CHECKS[kind](value, seen))
    return checks


def _route(value: str, seen: Observation) -> Check:
    return Check("route", seen.route == value, "" if seen.route == value
                 else f"expected {value}, routed to {seen.route}")


def _route_any(value: Sequence[str], seen: Observation) -> Check:
    ok = seen.route in value
    return Check("route", ok, "" if ok else f"expected one of {', '.join(value)}, routed to "
                 f"{seen.route}")


def _ran(node: str, seen: Observation) -> bool:
    return any(n == node or n.endswith(f".{node}") for n in seen.nodes) if "." not in node \
        else node in seen.nodes


def _nodes_ran(value: Sequence[str], seen: Observation) -> Check:
    missing = [n for n in value if not _ran(n, seen)]
    return Check("nodes_ran", not missing, f"did not run: {', '.join(missing)}" if missing else "")


def _nodes_not_ran(value: Sequence[str], seen: Observation) -> Check:
    ran = [n for n in value if _ran(n, seen)]
    return Check("nodes_not_ran", not ran, f"ran: {', '.join(ran)}" if ran else "")


def _args_match(want: Mapping[str, Any], got: Mapping[str, Any], how: str) -> bool:
    if how == "exact":
        return dict(want) == dict(got)
    if how == "pattern":
        return all(name in got and re.search(str(pattern), _text(got[name])) is not None
                   for name, pattern in want.items())
    return all(name in got and got[name] == value for name, value in want.items())


def _text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _json_text(value: Any) -> str:
    return orjson.dumps(value).decode()


def _tool_calls(value: Sequence[Mapping[str, Any]], seen: Observation) -> Check:
    missing = []
    for want in value:
        how = want.get("match", "subset")
        if not any(c.tool == want["tool"] and _args_match(want.get("args") or {}, c.args, how)
                   for c in seen.tool_calls):
            args = f" with {how} args {_text(want.get('args'))}" if want.get("args") else ""
            missing.append(f"{want['tool']}{args}")
    made = ", ".join(f"{c.tool}({_text(dict(c.args))[:80]})" for c in seen.tool_calls) or "none"
    return Check("tool_calls", not missing,
                 f"no call {'; '.join(missing)} (calls: {made})" if missing else "")


def _tools_not_called(value: Sequence[str], seen: Observation) -> Check:
    called = sorted({c.tool for c in seen.tool_calls} & set(value))
    return Check("tools_not_called", not called, f"called: {', '.join(called)}" if called else "")


def _memos(value: Sequence[Mapping[str, Any]], seen: Observation) -> Check:
    missing = []
    for want in value:
        if not any((want.get("tag") is None or want["tag"] in m.tags)
                   and (want.get("contains") is None
                        or want["contains"].casefold() in m.content.casefold())
                   and (want.get("playbook") is None or want["playbook"] == m.playbook)
                   for m in seen.memos):
            missing.append(_text(dict(want)))
    return Check("memos", not missing, f"no memo {'; '.join(missing)} ({len(seen.memos)} "
                 "written)" if missing else "")


def _plan(value: Mapping[str, Any], seen: Observation) -> Check:
    problems = []
    if "proposed" in value and value["proposed"] != seen.plan_proposed:
        problems.append("a plan was proposed" if seen.plan_proposed else "no plan was proposed")
    for want in value.get("specs") or ():
        if not any(all(str(s.get(k, "")) == str(v) for k, v in want.items() if k != "contains")
                   and want.get("contains", "") in str(s.get("content", ""))
                   for s in seen.specs):
            got = ", ".join(f"{s.get('kind')} {s.get('path')}" for s in seen.specs) or "none"
            problems.append(f"no spec {_text(dict(want))} (specs: {got})")
    return Check("plan", not problems, "; ".join(problems))


def _status(value: str, seen: Observation) -> Check:
    ok = seen.status == value
    return Check("status", ok, "" if ok else f"expected {value}, ended {seen.status}"
                 + (f" ({seen.error})" if seen.error else ""))


def _texts(value: str | Sequence[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _contains(value: str | Sequence[str], reply: str) -> Check:
    missing = [t for t in _texts(value) if t.casefold() not in reply.casefold()]
    return Check("reply.contains", not missing,
                 f"lacks {', '.join(map(repr, missing))} (reply: {reply[:120]!r})" if missing
                 else "")


def _not_contains(value: str | Sequence[str], reply: str) -> Check:
    found = [t for t in _texts(value) if t.casefold() in reply.casefold()]
    return Check("reply.not_contains", not found,
                 f"has {', '.join(map(repr, found))}" if found else "")


def _regex(value: str, reply: str) -> Check:
    ok = re.search(value, reply) is not None
    return Check("reply.regex", ok, "" if ok else f"no match for /{value}/ in {reply[:120]!r}")


_MISSING = object()


def json_path(data: Any, path: str) -> Any:
    """The value at ``a.b[0].c`` (a leading ``$.`` is allowed); a sentinel when absent."""
    current = data
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path.removeprefix("$.")):
        if index:
            if not isinstance(current, list) or int(index) >= len(current):
                return _MISSING
            current = current[int(index)]
        elif isinstance(current, dict) and name in current:
            current = current[name]
        else:
            return _MISSING
    return current


def _json(value: Mapping[str, Any], reply: str) -> Check:
    text = reply.strip()
    found = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    try:
        data = orjson.loads(found.group(1) if found else text)
    except orjson.JSONDecodeError:
        return Check("reply.json", False, f"the reply is not JSON: {reply[:120]!r}")
    wrong = []
    for path, want in value.items():
        got = json_path(data, path)
        if got is _MISSING or got != want:
            wrong.append(f"{path}: expected {_json_text(want)}, found "
                         f"{'nothing' if got is _MISSING else _json_text(got)}")
    return Check("reply.json", not wrong, "; ".join(wrong))


_CHECKS: dict[str, Callable[[Any, Observation], Check]] = {
    "route": _route, "route_any": _route_any, "nodes_ran": _nodes_ran,
    "nodes_not_ran": _nodes_not_ran, "tool_calls": _tool_calls,
    "tools_not_called": _tools_not_called, "memos": _memos, "plan": _plan, "status": _status,
}
_REPLY: dict[str, Callable[[Any, str], Check]] = {
    "contains": _contains, "not_contains": _not_contains, "regex": _regex, "json": _json,
}
