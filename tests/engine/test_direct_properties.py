"""Property: any playbook of counters, branches, loops, failures and calls a person is asked
about makes the same pulse run directly (:mod:`sea.engine.direct`, its graph taking over
before the first node that may pause) as in LangGraph graphs of its own: the same events,
writes, outputs and errors, as the pulse itself and as a called playbook, and again at each
resume until it ends."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.limits import Limits
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.loader import check_document
from sea.llm.models import ModelSet
from tests.engine.test_direct_calls import _seen
from tests.engine.test_runtime import send_mail

STEPS: dict[str, dict[str, Any]] = {
    "count": {"type": "set", "assignments": {"x": "={x} + 1", "label": "x={x}"}},
    "double": {"type": "set", "assignments": {"y": "={x} * 2"}},
    "note": {"type": "memorize", "action": "at {x}", "role": "user"},
    "say": {"type": "say", "action": "x is {x}"},
    "nothing": {"type": "pass"},
    "broken": {"type": "set", "assignments": {"z": "={input} * 2"}},  # a string times 2
    "refused": {"type": "tool", "action": "refuse", "args": {"why": "x={x}"}},
    "ask": {"type": "tool", "action": "send_mail", "args": {"to": "x={x}"}},
}
RESUMES = 4
"""How many times a waiting pulse is answered (a loop may ask again) before it is left."""


@tool
def refuse(why: str) -> str:
    """Always fails."""
    raise ValueError(f"refused: {why}")


def _reachable(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The nodes reachable from the first one."""
    by_id = {node["id"]: node for node in nodes}
    seen, todo = set(), [nodes[0]["id"]]
    while todo:
        node = by_id[todo.pop()]
        if node["id"] in seen:
            continue
        seen.add(node["id"])
        branch = node.get("conditional_next") or {}
        targets = [node.get("next"), node.get("error_next"), branch.get("default"),
                   *branch.get("cases", {}).values()]
        todo.extend(t for t in targets if t is not None and t not in seen)
    return [node for node in nodes if node["id"] in seen]


@st.composite
def playbooks(draw: st.DrawFn) -> dict[str, Any]:
    """A playbook of 2–6 steps: each goes on, ends, or loops back, maybe by a branch on
    ``x``; a refused tool call and a failing ``set`` may have an ``error_next``.
    Unreachable steps are left out."""
    size = draw(st.integers(2, 6))
    ids = [f"n{i}" for i in range(size)]
    targets = st.one_of(st.none(), st.sampled_from(ids))
    nodes = []
    for i, node_id in enumerate(ids):
        step = draw(st.sampled_from(sorted(STEPS)))
        node: dict[str, Any] = {"id": node_id, **STEPS[step]}
        following = ids[i + 1] if i + 1 < size else None
        node["next"] = draw(st.one_of(st.just(following), targets))
        if draw(st.booleans()):
            node["conditional_next"] = {
                "field": "x", "operator": "gte",
                "cases": {str(draw(st.integers(1, 4))): draw(targets)},
                "default": node.pop("next"),
            }
        if step in ("refused", "broken") and draw(st.booleans()):
            node["error_next"] = draw(st.sampled_from(ids))
        nodes.append(node)
    return {
        "name": "generated", "description": "A generated playbook.",
        "input_schema": [{"name": "x", "type": "integer", "required": False, "default": 0}],
        "output_schema": ["x", "y", "label"], "start_node": "n0", "nodes": _reachable(nodes),
    }


CALLER = {
    "name": "caller", "description": "Calls the generated playbook, then may ask a person.",
    "output_schema": ["x", "y", "label"], "start_node": "call",
    "nodes": [
        {"id": "call", "type": "subplay", "playbook": "generated", "args": {"x": 1},
         "next": "ask", "error_next": "ask"},
        {"id": "ask", "type": "tool", "action": "send_mail", "args": {"to": "{label}"}},
    ],
}


def _pulse(folder: Path, playbook: str, kept: bool) -> list[dict[str, Any]]:
    """What a host sees of the pulse, and of each resume while it waits."""
    persona = Persona("aiko", "Aiko", "")
    store = SQLiteStore(folder / f"{kept}.sqlite")
    limits = Limits(max_steps=25, max_visits=4, approval_tools=frozenset({"send_mail"}))
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                      tools=[send_mail, refuse], library=folder, limits=limits,
                      keep_checkpoints=kept), checkpointer=InMemorySaver())
    try:
        result = runtime.run_pulse(persona, playbook, "", pulse_id="p")
        seen = [_seen(result, store, persona)]
        for _ in range(RESUMES):
            if result.status != "waiting":
                break
            result = runtime.run_resume("p", "approve")
            seen.append(_seen(result, store, persona))
        return seen
    finally:
        runtime.close()
        store.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=playbooks(), called=st.booleans())
def test_any_playbook_runs_directly_as_it_runs_in_graphs(
    document: dict[str, Any], called: bool
) -> None:
    checked = check_document(json.dumps(document))
    assume(checked.playbook is not None)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "generated.json").write_text(json.dumps(document))
        (folder / "caller.json").write_text(json.dumps(CALLER))
        top = "caller" if called else "generated"
        direct = _pulse(folder, top, kept=False)
        graphs = _pulse(folder, top, kept=True)
    last = direct[-1]
    event(f"{last['status']} {(last['error'] or {}).get('code', '')}".strip())
    event(f"resumed {len(direct) - 1} times")
    assert direct == graphs
