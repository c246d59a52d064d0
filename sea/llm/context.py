"""Context assembly by profile: the message list an LLM node sends to its model.

Base = the persona's system prompt; Main = the pulse rule's history (``conversation`` and
``router`` profiles only); Specialized = the node's own prompt as a user message wrapped in
``<system>``. Building a context reads the store and has no other effect.
"""

from __future__ import annotations

from collections.abc import Mapping

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from saimemory.base import DEFAULT_BUDGET, MessageStore
from saimemory.errors import UnknownProfileError
from saimemory.records import ENGINE_MEMO, ROOT_SCOPE, HistoryBudget, Message, Persona
from sea.lang.trust import neutralize

PROFILE_MODEL: Mapping[str, str] = {
    "conversation": "normal",
    "router": "lightweight",
    "worker": "normal",
    "worker_light": "lightweight",
}
"""Which model (``normal`` or ``lightweight``) each context profile uses."""

PROFILES_WITH_HISTORY = frozenset({"conversation", "router"})


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


def build_messages(
    store: MessageStore,
    persona: Persona,
    *,
    profile: str,
    pulse_id: str | None,
    scope: str = ROOT_SCOPE,
    prompt: str | None,
    budget: HistoryBudget = DEFAULT_BUDGET,
) -> list[BaseMessage]:
    """The messages for an LLM node of ``profile`` running in ``pulse_id`` / ``scope``.

    Raises:
        UnknownProfileError: ``profile`` is not one of :data:`PROFILE_MODEL` (MEM007).
    """
    if profile not in PROFILE_MODEL:
        raise UnknownProfileError(
            f"unknown context profile {profile!r}; expected one of {', '.join(PROFILE_MODEL)}"
        )
    messages: list[BaseMessage] = [SystemMessage(content=base_prompt(persona))]
    if profile in PROFILES_WITH_HISTORY:
        history = store.history(persona.id, pulse_id=pulse_id, scope=scope, budget=budget)
        messages.extend(to_chat_message(message) for message in history)
    if prompt:
        messages.append(HumanMessage(content=wrap_system(prompt)))
    return messages
