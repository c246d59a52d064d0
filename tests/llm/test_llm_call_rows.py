"""A call's stored row (``sea stats``) is made by the call's own record, and read back the same
from a real store."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from saimemory.sqlite import SQLiteStore
from sea.engine.events import ToolCalled
from sea.llm.records import LLMCallRecord


def _record(**given: object) -> LLMCallRecord:
    fields = {
        "playbook": "pb", "node": "n", "model": "gpt-x", "messages": [], "response": "hi",
        "latency_s": 0.5, "tokens_in": 10, "tokens_out": 3, "retries": 1, "outcome": "ok",
    }
    return LLMCallRecord(**{**fields, **given})  # type: ignore[arg-type]


def test_a_model_call_row_counts_rate_limits_as_retries_and_says_a_fallback_answered() -> None:
    record = _record(retries=2, rate_limited=3, fallback="backup", cost=0.25,
                     pattern="base_main", model_kind="fallback", error=None)
    row = record.call_row("aoi", "p1")
    assert (row.persona, row.kind, row.name, row.outcome, row.pulse_id) == (
        "aoi", "model", "gpt-x", "ok", "p1")
    assert (row.playbook, row.node, row.pattern, row.model_kind) == (
        "pb", "n", "base_main", "fallback")
    assert (row.retries, row.fallback, row.cost, row.latency_s) == (5, True, 0.25, 0.5)
    assert (row.tokens_in, row.tokens_out) == (10, 3)


def test_a_model_call_row_clamps_what_the_store_refuses_and_names_an_unnamed_model() -> None:
    record = _record(model="", playbook="", node="", latency_s=-1.0, tokens_in=-4,
                     tokens_out=-1, retries=-2, rate_limited=-1, cost=-0.5,
                     outcome="error", error="boom")
    row = record.call_row("aoi", "p1")
    assert (row.name, row.playbook, row.node) == ("unknown", None, None)
    assert (row.latency_s, row.tokens_in, row.tokens_out, row.retries, row.cost) == (
        0.0, 0, 0, 0, 0.0)
    assert (row.outcome, row.error, row.fallback) == ("error", "boom", False)


def test_a_tool_call_row_keeps_the_failure_message_or_its_code() -> None:
    ok = ToolCalled("p1", "pb", "t", "memory_search", {}, True, [1], None, 0.25, "a1")
    row = ok.call_row("aoi")
    assert (row.kind, row.name, row.outcome, row.pulse_id, row.latency_s, row.error) == (
        "tool", "memory_search", "ok", "p1", 0.25, None)
    coded = dataclasses.replace(ok, ok=False, error={"code": "tool_failed"}, duration_s=-1.0)
    assert (coded.call_row("aoi").outcome, coded.call_row("aoi").error) == ("error",
                                                                          "tool_failed")
    assert coded.call_row("aoi").latency_s == 0.0
    said = dataclasses.replace(coded, error={"code": "x", "message": "no such file"})
    assert said.call_row("aoi").error == "no such file"
    assert dataclasses.replace(coded, error={}).call_row("aoi").error == "failed"


def test_the_rows_read_back_as_they_were_made(tmp_path: Path) -> None:
    rows = [
        _record(rate_limited=1, fallback="backup", cost=0.125, pattern="base_main",
                model_kind="normal").call_row("aoi", "p1"),
        ToolCalled("p1", "pb", "t", "memory_search", {}, False, None,
                   {"code": "tool_failed", "message": "boom"}, 0.5, None).call_row("aoi"),
    ]
    store = SQLiteStore(tmp_path / "m.db")
    try:
        store.record_calls(rows)
        back = store.call_records("aoi")
    finally:
        store.close()
    assert [dataclasses.replace(r, id=None, created_at=None) for r in back] == rows
    assert all(r.id is not None and r.created_at is not None for r in back)
