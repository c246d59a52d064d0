"""A trace entry is what its fact says: each of its fields (but ``seq`` and the few the
recorder gives) is a field of the same name of the event or record it is made from, so the
recorder copies no field by hand and a renamed field cannot be dropped from traces unseen."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel

from saimemory import Persona
from sea.engine.events import (
    ActionsPlanned,
    LLMCalled,
    MemoryWritten,
    NodeStarted,
    PlanChanged,
    RefResolved,
    SubagentEnded,
    ToolCalled,
    ToolSettled,
)
from sea.llm.records import LLMCallRecord, ToolCallRequest
from sea.trace.format import (
    TraceLLMCall,
    TraceMemoryWrite,
    TraceNode,
    TraceNormalization,
    TracePlan,
    TracePlanEvent,
    TraceSettled,
    TraceSubagent,
    TraceToolCall,
)
from sea.trace.recorder import TraceRecorder

ENTRIES: list[tuple[type[BaseModel], type, set[str]]] = [
    (TraceLLMCall, LLMCallRecord, {"seq"}),
    (TraceToolCall, ToolCalled, {"seq"}),
    (TraceNode, NodeStarted, {"seq", "type"}),
    (TracePlan, ActionsPlanned, {"seq", "offered"}),
    (TraceNormalization, RefResolved, set()),
    (TraceMemoryWrite, MemoryWritten, {"seq"}),
    (TracePlanEvent, PlanChanged, {"seq"}),
    (TraceSubagent, SubagentEnded, {"seq"}),
    (TraceSettled, ToolSettled, {"seq"}),
]
"""Each trace entry, the fact it is made from, and the fields the recorder gives it."""


@pytest.mark.parametrize(("entry", "fact", "given"), ENTRIES,
                         ids=[entry.__name__ for entry, _, _ in ENTRIES])
def test_every_field_of_an_entry_is_a_field_of_its_fact(
    entry: type[BaseModel], fact: type, given: set[str]
) -> None:
    facts = {f.name for f in dataclasses.fields(fact)}
    assert set(entry.model_fields) - given <= facts


def _recorder() -> TraceRecorder:
    return TraceRecorder(Persona("aoi", "Aoi"), "pb", "hi", "p1", [],
                         recorded_at=datetime(2026, 1, 1, tzinfo=UTC))


def test_a_model_call_entry_is_its_record_as_json() -> None:
    asked = ToolCallRequest("memory_search", {"query": ("a", "b")}, "c1")
    record = LLMCallRecord(
        "pb", "n", "gpt-x", [{"role": "user", "content": "hi"}],
        {"tool_calls": [asked], "content": ""}, 0.5, 10, 3, 1, "ok", attempts=["x", asked],
        pattern="base_main", stage="PLANNING", context=[{"part": "base", "tokens": 4}],
        model_kind="normal", cost=0.25, fallback="backup", rate_limited=2,
        intent_pattern="base_main",
    )
    recorder = _recorder()
    recorder.observe(LLMCalled("p1", record))
    entry = recorder.trace({}).llm_calls[0]
    call = {"name": "memory_search", "args": {"query": ["a", "b"]}, "id": "c1"}
    shown = entry.model_dump()
    assert shown.pop("seq") == 1
    assert shown == {
        "playbook": "pb", "node": "n", "model": "gpt-x",
        "messages": [{"role": "user", "content": "hi"}],
        "response": {"tool_calls": [call], "content": ""}, "attempts": ["x", call],
        "tokens_in": 10, "tokens_out": 3, "latency_s": 0.5, "retries": 1, "outcome": "ok",
        "error": None, "pattern": "base_main", "stage": "PLANNING", "intent_pattern": "base_main",
        "context": [{"part": "base", "tokens": 4}], "model_kind": "normal", "cost": 0.25,
        "fallback": "backup",
    }


def test_a_tool_call_entry_is_its_event_as_json() -> None:
    recorder = _recorder()
    recorder.observe(NodeStarted("p1", "pb", "t", "tool_call", 0))
    recorder.observe(ToolCalled("p1", "pb", "t", "memory_search", {"query": ("a",)}, False,
                                None, {"code": "tool_failed", "message": "boom"}, 0.5, "a1"))
    trace = recorder.trace({})
    assert trace.nodes[0].model_dump() == {
        "seq": 1, "playbook": "pb", "node": "t", "type": "tool_call", "depth": 0}
    assert trace.tool_calls[0].model_dump() == {
        "seq": 2, "playbook": "pb", "node": "t", "tool": "memory_search",
        "args": {"query": ["a"]}, "ok": False, "result": None,
        "error": {"code": "tool_failed", "message": "boom"}, "action_id": "a1",
    }
