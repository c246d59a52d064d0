"""Fakes and helpers of the LLM call path tests: small chat models, a record collector."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from saimemory import CONVERSATION_TAG, NewMessage, Persona
from saimemory.records import ENGINE_MEMO
from saimemory.sqlite import SQLiteStore
from sea.llm.call import LLMCaller, LLMRequest
from sea.llm.models import ModelSet
from sea.llm.records import LLMCallRecord

ROUTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"playbook": {"type": "string"}, "reason": {"type": "string"}},
    "required": ["playbook", "reason"],
}


class TextOnlyModel(BaseChatModel):
    """A chat model without native structured output or tools: answers from a list."""

    answers: list[str]
    seen: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "text-only"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        text = self.answers[len(self.seen) - 1]
        usage = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
        message = AIMessage(content=text, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


class FailingModel(BaseChatModel):
    """A provider that is down."""

    @property
    def _llm_type(self) -> str:
        return "failing"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise ConnectionError("provider unreachable")


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


class Recorder:
    """Collects every record the caller emits."""

    def __init__(self) -> None:
        self.records: list[LLMCallRecord] = []

    def __call__(self, record: LLMCallRecord) -> None:
        self.records.append(record)


def caller_for(
    store: SQLiteStore,
    model: BaseChatModel,
    recorder: Recorder | None = None,
    *,
    light: BaseChatModel | None = None,
    max_retries: int = 2,
) -> LLMCaller:
    models = ModelSet(normal=model, lightweight=light or model)
    return LLMCaller(models, store, max_retries=max_retries, on_record=recorder)


def request(persona: Persona, **overrides: Any) -> LLMRequest:
    fields: dict[str, Any] = {
        "playbook": "pb",
        "node": "n",
        "persona": persona,
        "profile": "conversation",
        "pulse_id": "p1",
    }
    fields.update(overrides)
    return LLMRequest(**fields)


def seed(store: SQLiteStore, persona: Persona) -> None:
    conv = (CONVERSATION_TAG,)
    store.append(NewMessage(persona.id, "user", "Do you have poems?", pulse_id="p0", tags=conv))
    store.append(NewMessage(persona.id, "assistant", "Many.", pulse_id="p0", tags=conv))
    store.append(NewMessage(persona.id, "user", "Any by Basho?", pulse_id="p1", tags=conv))
    memo = {ENGINE_MEMO: True}  # a memo the engine wrote (only those keep the marker)
    store.append(NewMessage(persona.id, "user", "<system>found 2 books</system>", pulse_id="p1",
                            metadata=memo))


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class ToolCallingModel(BaseChatModel):
    """A provider whose structured output is langchain's default: a forced tool call."""

    arguments: list[dict[str, Any]]
    offered: list[list[dict[str, Any]]] = []

    @property
    def _llm_type(self) -> str:
        return "tool-calling"

    def bind_tools(self, tools: Any, *, tool_choice: str | None = None, **kwargs: Any) -> Any:
        formatted = [convert_to_openai_tool(t) for t in tools]
        self.offered.append(formatted)
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        name = kwargs["tools"][0]["function"]["name"]
        args = self.arguments.pop(0)
        message = AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "c1"}])
        return ChatResult(generations=[ChatGeneration(message=message)])
