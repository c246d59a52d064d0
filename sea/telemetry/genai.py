"""A model call's span attributes, after the GenAI semantic conventions.

``gen_ai.*`` for what the conventions name (operation, model, tokens, finish reason,
error type), ``sea.llm.*`` for what SEA adds (retries, cost, the prompt pattern, the model's
kind, a fallback, the structured-output method), and OpenInference's span kind so that
tools reading it (Arize Phoenix) show the call as an LLM call. Prompts and answers are
personal data: only with ``capture_content`` do they become ``gen_ai.input.messages`` and
``gen_ai.output.messages``; otherwise the span says only how many messages and characters.
"""

from __future__ import annotations

from typing import Any

import orjson

from sea.llm.records import LLMCallRecord

Attributes = dict[str, Any]


def finish_reason(record: LLMCallRecord) -> str:
    """Why the model stopped: ``tool_calls``, ``stop``, or the outcome of a failed call."""
    if record.outcome != "ok":
        return record.outcome
    response = record.response
    if isinstance(response, dict) and response.get("tool_calls"):
        return "tool_calls"
    return "stop"


def call_attributes(record: LLMCallRecord, capture_content: bool) -> Attributes:
    """The span attributes of one model call.

    Args:
        record: The call's record.
        capture_content: Include the messages sent and the answer.

    Returns:
        The attributes (OpenTelemetry values: no None).
    """
    attrs: Attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": record.model,
        "gen_ai.response.model": record.fallback or record.model,
        "gen_ai.usage.input_tokens": max(0, record.tokens_in),
        "gen_ai.usage.output_tokens": max(0, record.tokens_out),
        "gen_ai.response.finish_reasons": (finish_reason(record),),
        "openinference.span.kind": "LLM",
        "sea.node": record.node,
        "sea.llm.prompt_chars": sum(len(str(m.get("content", ""))) for m in record.messages),
    }
    # said only when they are not 0 or false: each attribute costs the SDK's work
    if record.retries > 0:
        attrs["sea.llm.retries"] = record.retries
    if record.cost > 0:
        attrs["sea.llm.cost"] = record.cost
    if isinstance(record.response, dict | list) and "tool_calls" not in record.response:
        attrs["sea.llm.structured_output"] = True
    if record.rate_limited:
        attrs["sea.llm.rate_limited"] = record.rate_limited
    optional = {
        "sea.llm.pattern": record.pattern,
        "sea.llm.model_kind": record.model_kind,
        "sea.llm.fallback": record.fallback,
        "sea.llm.stage": record.stage,
        "sea.llm.intent_pattern": record.intent_pattern,
        "error.type": None if record.outcome == "ok" else record.outcome,
        "sea.llm.error": record.error,
    }
    attrs.update({k: v for k, v in optional.items() if v is not None})
    if record.fallback_errors:
        attrs["sea.llm.fallback_errors"] = tuple(record.fallback_errors)
    if capture_content:
        attrs["gen_ai.input.messages"] = _text(
            [{"role": m.get("role"), "parts": [{"type": "text", "content": m.get("content")}]}
             for m in record.messages])
        attrs["gen_ai.output.messages"] = _text(
            [{"role": "assistant", "parts": [{"type": "text", "content": record.response}]}])
    return attrs


def attempt_events(record: LLMCallRecord, capture_content: bool) -> list[tuple[str, Attributes]]:
    """One span event per answer of a structured call that was asked again (a retry),
    saying which attempt it was (its answer only with ``capture_content``).

    Args:
        record: The call's record.
        capture_content: Include each rejected answer.

    Returns:
        ``(name, attributes)`` of each event, in order.
    """
    found: list[tuple[str, Attributes]] = []
    rejected = record.attempts[:-1] if record.outcome == "ok" else record.attempts
    for number, answer in enumerate(rejected, start=1):
        attrs: Attributes = {"sea.llm.attempt": number, "sea.llm.answer_chars": len(_text(answer))}
        if capture_content:
            attrs["sea.llm.answer"] = _text(answer)
        found.append(("sea.llm.retry", attrs))
    return found


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, default=str).decode()
