"""Base, and how stored messages reach a model: the persona's system prompt, the
``<system>`` wrapping of engine text, and a stored message as a chat message."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from saimemory.records import ENGINE_MEMO, Message, Persona
from sea.lang.trust import neutralize


def wrap_system(text: str) -> str:
    """``text`` inside ``<system>`` tags, unless it already starts with ``<system>``."""
    if text.lstrip().startswith("<system>"):
        return text
    return f"<system>\n{text}\n</system>"


def base_prompt(persona: Persona) -> str:
    """The persona's system prompt; names the persona when the prompt does not."""
    prompt = persona.system_prompt.strip()
    if not prompt:
        return f"You are {persona.name}."
    if persona.name and persona.name not in prompt:
        return f"You are {persona.name}.\n\n{prompt}"
    return prompt


def to_chat_message(message: Message) -> BaseMessage:
    """A stored message as the model sees it.

    Only a message the engine wrote (``ENGINE_MEMO`` in its metadata) keeps its
    ``<system>`` marker; in any other (typed input, a model's answer, an import) the tags
    are neutralized (:mod:`sea.lang.trust`). A stored ``system`` row the engine wrote
    becomes a ``<system>`` user message; any other is shown as ordinary text.
    """
    engine = message.role != "assistant" and message.metadata.get(ENGINE_MEMO) is True
    content = message.content if engine else neutralize(message.content)
    if message.role == "assistant":
        return AIMessage(content=content)
    if message.role == "system" and engine:
        return HumanMessage(content=wrap_system(content))
    return HumanMessage(content=content)
