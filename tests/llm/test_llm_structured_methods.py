"""Structured output negotiates a method per model, remembers it, and can be forced."""

from __future__ import annotations

import io
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from rich.console import Console

from saimemory import Persona
from saimemory.sqlite import SQLiteStore
from sea.llm.call import LLMCaller
from sea.llm.models import ModelSet
from sea.llm.structured import MethodMemory
from tests.llm.fakes import ROUTER_SCHEMA, request, run

ANSWER = '{"playbook": "basic_chat", "reason": "a greeting"}'


class ServerLikeModel(BaseChatModel):
    """Like an OpenAI-protocol server that takes `json_object` but not `json_schema`."""

    refuses: tuple[str, ...] = ("json_schema",)
    asked: list[str] = []
    seen: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "server-like"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        message = AIMessage(content=ANSWER, usage_metadata={
            "input_tokens": 11, "output_tokens": 5, "total_tokens": 16})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def with_structured_output(  # type: ignore[override]
        self, schema: Any, *, include_raw: bool = False, method: str = "json_schema",
        **kwargs: Any,
    ) -> Runnable[Any, Any]:
        def answer(messages: list[BaseMessage]) -> dict[str, Any]:
            self.asked.append(method)
            if method in self.refuses:
                raise RuntimeError(
                    "Error code: 500 - response_format.type: Input should be 'text' or "
                    "'json_object'"
                )
            raw = self.invoke(messages)
            import json

            return {"raw": raw, "parsed": json.loads(str(raw.content)), "parsing_error": None}

        return RunnableLambda(answer)


def _caller(store: SQLiteStore, models: ModelSet) -> LLMCaller:
    return LLMCaller(models, store)


def test_a_refused_method_gives_way_to_the_next_and_the_winner_is_remembered(
    store: SQLiteStore, persona: Persona
) -> None:
    model = ServerLikeModel(asked=[], seen=[])
    models = ModelSet.single(model)
    first = run(_caller(store, models).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert first.parsed == {"playbook": "basic_chat", "reason": "a greeting"}
    assert model.asked == ["json_schema", "json_mode"]
    assert any("json_schema" in w and "json_object" in w for w in first.record.warnings)
    assert "the schema was in the prompt" in first.record.warnings[-1]
    assert "JSON Schema" in str(model.seen[-1][-1].content)  # json mode: schema in the prompt
    second = run(_caller(store, models).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert second.parsed == first.parsed
    assert model.asked == ["json_schema", "json_mode", "json_mode"]  # remembered, not re-tried
    assert models.structured.method_of(model) == "json_mode"


def test_when_every_provider_method_is_refused_the_prompt_path_answers(
    store: SQLiteStore, persona: Persona
) -> None:
    model = ServerLikeModel(asked=[], seen=[], refuses=("json_schema", "json_mode",
                                                       "function_calling"))
    models = ModelSet.single(model, MethodMemory())
    caller = _caller(store, models)
    result = run(caller.call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert model.asked == ["json_schema", "json_mode", "function_calling"]
    assert result.parsed == {"playbook": "basic_chat", "reason": "a greeting"}  # the prompt path
    assert result.record.warnings[-1].startswith("no native structured output")
    assert models.structured.method_of(model) == "prompt"


def test_a_forced_method_is_the_only_one_tried(store: SQLiteStore, persona: Persona) -> None:
    from sea.llm.errors import ModelError

    model = ServerLikeModel(asked=[], seen=[])
    models = ModelSet.single(model, MethodMemory("json_schema"))
    with pytest.raises(ModelError, match="json_object"):
        run(_caller(store, models).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert model.asked == ["json_schema"]
    with pytest.raises(ValueError, match="unknown structured method"):
        MethodMemory("xml")  # type: ignore[arg-type]


class NoUsageModel(BaseChatModel):
    """A provider that reports no token usage (as some servers do while streaming)."""

    @property
    def _llm_type(self) -> str:
        return "no-usage"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="x" * 40))])


def test_missing_usage_is_estimated_and_said_so(store: SQLiteStore, persona: Persona) -> None:
    from sea.cli._view import call_table
    from sea.llm.call import ESTIMATED_TOKENS

    result = run(_caller(store, ModelSet.single(NoUsageModel())).call(request(persona)))
    record = result.record
    assert record.tokens_out == 10  # forty characters, about four a token
    assert record.tokens_in > 0
    assert ESTIMATED_TOKENS in record.warnings
    console = Console(file=io.StringIO(), width=120)
    console.print(call_table([record]))
    assert f"~{record.tokens_out}" in console.file.getvalue()  # type: ignore[attr-defined]
