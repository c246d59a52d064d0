"""The peer of ``bench_serve.py``'s ``chat`` playbook, written by hand as one LangGraph graph.

One node, ``reply``, asks a scripted chat model and returns its message; the model streams
the bench's reply a chunk per word, as SEA's scripted model does, without delay (16 words;
langchain-core adds an empty last chunk, which LangGraph streams too: 17 ``messages``
events a run where ``sea serve`` sends 16). ``graph`` is what LangGraph's server loads (it adds its
own checkpointer); ``compiled(checkpointer)`` is the same graph for a run in process.

Imports LangGraph only: it runs in the peer's own virtualenv (``bench_serve_peer.py``).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

REPLY = "Hello there, friend. It is good to hear from you again; how was the walk today?"
_WORD = re.compile(r"\S+\s*|\s+")  # SEA's scripted model's chunks, for text without wide script


class ScriptedReply(BaseChatModel):
    """Answers every call with ``REPLY``; streams it a word per chunk."""

    @property
    def _llm_type(self) -> str:
        return "scripted-reply"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=REPLY))])

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        for word in _WORD.findall(REPLY):
            yield ChatGenerationChunk(message=AIMessageChunk(content=word))

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._stream(messages, stop):
            yield chunk


MODEL = ScriptedReply()


async def reply(state: MessagesState) -> dict[str, list[BaseMessage]]:
    """The ``chat`` playbook's one node: the model's answer to the conversation."""
    return {"messages": [await MODEL.ainvoke(state["messages"])]}


def builder() -> StateGraph[MessagesState]:
    graph = StateGraph(MessagesState)
    graph.add_node("reply", reply)
    graph.add_edge(START, "reply")
    return graph


def compiled(checkpointer: BaseCheckpointSaver[Any] | None
             ) -> CompiledStateGraph[MessagesState, None, MessagesState, MessagesState]:
    return builder().compile(checkpointer=checkpointer, name="agent")


graph = compiled(None)
