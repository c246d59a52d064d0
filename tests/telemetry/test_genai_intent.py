"""A model call's span says which pattern the pulse's intent steered it to, when it did."""

from __future__ import annotations

from sea.llm.records import LLMCallRecord
from sea.telemetry.genai import call_attributes


def record(intent_pattern: str | None) -> LLMCallRecord:
    return LLMCallRecord("sub_speak", "compose", "gpt-x", [], "Hi", 0.1, 5, 1, 0, "ok",
                         pattern="base_main_specialized", stage="PLANNING",
                         intent_pattern=intent_pattern)


def test_a_steered_calls_span_carries_the_intents_pattern() -> None:
    steered = call_attributes(record("base_main_specialized"), capture_content=False)
    assert steered["sea.llm.intent_pattern"] == "base_main_specialized"
    assert steered["sea.llm.pattern"] == "base_main_specialized"
    assert "sea.llm.intent_pattern" not in call_attributes(record(None), capture_content=False)
