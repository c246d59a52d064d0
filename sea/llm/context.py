"""Context assembly by profile: the message list an LLM node sends to its model.

The profiles and their patterns are in :mod:`sea.llm.patterns`; composing a context from
its parts (Base, Main, Specialized) is :mod:`sea.llm.compose`. This module keeps the
simple entry point: :func:`build_messages` composes a profile's context from the store,
with the persona's pinned items but without short-term memory or guidelines (the call
path, :class:`sea.llm.call.LLMCaller`, adds those). Building a context reads the store and
has no other effect.
"""

from __future__ import annotations

from collections.abc import Mapping

from langchain_core.messages import BaseMessage

from saimemory.base import DEFAULT_BUDGET, MessageStore
from saimemory.records import ROOT_SCOPE, HistoryBudget, Persona
from sea.llm.base import base_prompt, to_chat_message, wrap_system
from sea.llm.compose import compose, read_main
from sea.llm.patterns import PROFILES, profile_named

__all__ = [
    "PROFILES_WITH_HISTORY",
    "PROFILE_MODEL",
    "base_prompt",
    "build_messages",
    "to_chat_message",
    "wrap_system",
]

PROFILE_MODEL: Mapping[str, str] = {name: p.model for name, p in PROFILES.items()}
"""Which model (``normal`` or ``lightweight``) each context profile uses."""

PROFILES_WITH_HISTORY = frozenset(name for name, p in PROFILES.items() if p.has_main)
"""The profiles whose context holds Main (the history)."""


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
    chosen = profile_named(profile)
    main = None
    if chosen.has_main:
        main = read_main(store, persona.id, pulse_id=pulse_id, scope=scope, budget=budget,
                         fold_limit=0, short_term=False)
    return compose(persona, chosen, main=main, summary=None, specialized=None,
                   prompt=prompt).messages
