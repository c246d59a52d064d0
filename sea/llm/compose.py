"""Composing a call's context from its pattern's parts, and saying what went in.

The messages are: one system message holding Base (the persona's prompt, the host's safety
rules), Main's pinned items, Specialized's guidelines and Main's short-term memory, in that
order (the first three are the prompt's stable prefix, byte-identical from call to call
while the persona, its pins and the guidelines stay the same, so a provider's prompt cache
can keep it; the short-term memory, which changes as the conversation grows, comes after
it); then Main's history (the pulse rule: earlier conversation within the budget, then this
pulse's messages); then the node's prompt as a ``<system>`` user message. Each part is
measured (:class:`ContextPart`, in the model's tokens, :mod:`sea.llm.tokens`) so the call record,
and the trace, show which parts a call had and how large each was.

Reading the store (:func:`read_main`) is kept apart from composing (:func:`compose`, pure),
so the short-term memory can be brought up to date in between.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from saimemory.base import MessageStore
from saimemory.fold import cut_below, nothing_cut
from saimemory.pins import Pin, ShortTermMemory
from saimemory.records import ROOT_SCOPE, HistoryBudget, Message, Persona
from sea.lang.trust import neutralize
from sea.llm.base import base_prompt, to_chat_message, wrap_system
from sea.llm.patterns import Profile
from sea.llm.specialized import Specialized
from sea.llm.tokens import ESTIMATE, TokenCounter, fit_history, tokens_of

PartName = Literal["base", "pins", "short_term", "specialized", "history", "prompt"]

PINS_HEADING = "Pinned (keep these in mind):"
SUMMARY_HEADING = "Earlier conversation, summarized (older than the messages below):"
GUIDELINES_HEADING = "Guidelines for this task:"


@dataclass(frozen=True, slots=True)
class ContextPart:
    """One part of a composed context and its size.

    Attributes:
        name: ``base``, ``pins``, ``short_term``, ``specialized``, ``history`` or ``prompt``.
        tokens: Its size in tokens (the model's tokenizer's count, or an estimate).
        detail: What it holds, e.g. ``3 items``, ``PLANNING (plan)``, ``12 messages, cut``.
    """

    name: PartName
    tokens: int
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"part", "tokens", "detail"}``."""
        return {"part": self.name, "tokens": self.tokens, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class MainRead:
    """What Main needs from the store for one call.

    Attributes:
        history: The pulse rule's messages (earlier conversation, then this pulse's).
        pins: The persona's pinned items.
        short_term: The stored short-term memory, if any.
        cut: The history budget left out older conversation.
        unfolded: The newest cut messages the short-term memory does not cover yet,
            oldest first.
        folds: The short-term memory folds what is cut (it is kept, on the main thread).
    """

    history: list[Message]
    pins: list[Pin]
    short_term: ShortTermMemory | None
    cut: bool
    unfolded: list[Message]
    folds: bool = False


@dataclass(frozen=True, slots=True)
class Composition:
    """A composed context: the messages and the parts they were made of.

    ``stable`` is the system message's stable prefix (Base, pins, guidelines): the system
    message starts with it, byte for byte."""

    profile: Profile
    messages: list[BaseMessage]
    parts: tuple[ContextPart, ...]
    specialized: Specialized | None
    stable: str = ""

    def parts_json(self) -> list[dict[str, Any]]:
        """The parts as JSON, in order."""
        return [part.to_json() for part in self.parts]


def read_main(
    store: MessageStore,
    persona: str,
    *,
    pulse_id: str | None,
    scope: str = ROOT_SCOPE,
    budget: HistoryBudget,
    fold_limit: int,
    short_term: bool = True,
    thread: str | None = None,
) -> MainRead:
    """Read Main's parts: history by the pulse rule, pins, and (with ``short_term``) the
    stored summary and the cut conversation it does not cover yet.

    With a ``thread`` (a subagent's sub-thread) the history is that thread's, and there is
    no short-term memory: it summarizes the main conversation, which the thread does not see.
    """
    wanted = short_term and thread is None
    first = store.main_context(  # one round trip on PostgreSQL, what it cut included
        persona, pulse_id=pulse_id, scope=scope, budget=budget, thread=thread,
        short_term=wanted, fold=max(1, fold_limit) if wanted else 0)
    history, pins = first.history, first.pins
    if not wanted or nothing_cut(cut_below(history, pulse_id), budget.max_messages):
        return MainRead(history, pins, None, False, [], wanted)  # no earlier conversation
    return MainRead(history, pins, first.short_term, first.cut, list(first.unfolded), True)


def compose(
    persona: Persona,
    profile: Profile,
    *,
    main: MainRead | None,
    summary: str | None,
    specialized: Specialized | None,
    prompt: str | None,
    safety_rules: str = "",
    counter: TokenCounter = ESTIMATE,
) -> Composition:
    """The messages of a call with this ``profile`` and what they are made of.

    ``summary`` is the short-term memory to show (only when the history was cut);
    ``main`` is None for a pattern without Main; ``counter`` measures the parts.
    """
    blocks: list[str] = []
    parts: list[ContextPart] = []
    base = base_prompt(persona)
    if safety_rules.strip():
        base = f"{base}\n\n{safety_rules.strip()}"
    blocks.append(base)
    parts.append(ContextPart("base", tokens_of(counter, [base])))
    if main is not None and main.pins:
        text = pins_block(main.pins)
        blocks.append(text)
        parts.append(ContextPart("pins", tokens_of(counter, [text]), f"{len(main.pins)} items"))
    if specialized is not None:
        text = f"{GUIDELINES_HEADING}\n{specialized.text}"
        blocks.append(text)
        detail = f"{specialized.label} ({specialized.source})"
        parts.append(ContextPart("specialized", tokens_of(counter, [text]), detail))
    stable = "\n\n".join(blocks)
    history: list[BaseMessage] = []
    if main is not None:
        if summary and main.cut:
            text = f"{SUMMARY_HEADING}\n{neutralize(summary)}"
            blocks.append(text)
            parts.append(ContextPart("short_term", tokens_of(counter, [text])))
        history = [to_chat_message(message) for message in main.history]
    messages: list[BaseMessage] = [SystemMessage(content="\n\n".join(blocks)), *history]
    if main is not None:
        shown = [str(m.text) for m in history]
        detail = f"{len(shown)} messages" + (", cut" if main.cut else "")
        parts.append(ContextPart("history", tokens_of(counter, shown), detail))
    if prompt:
        wrapped = wrap_system(prompt)
        messages.append(HumanMessage(content=wrapped))
        parts.append(ContextPart("prompt", tokens_of(counter, [wrapped])))
    return Composition(profile, messages, tuple(parts), specialized, stable)


def fit_main(
    main: MainRead, pulse_id: str | None, limit: int, counter: TokenCounter, fold_limit: int
) -> MainRead:
    """``main`` with its earlier conversation cut to ``limit`` tokens of the model
    (:func:`sea.llm.tokens.fit_history`). What is left out is cut conversation, which the
    short-term memory (when ``main`` folds) summarizes like what the store's budget cut:
    the newest ``fold_limit`` cut messages it does not cover yet are its next update's."""
    fitted = fit_history(main.history, pulse_id, limit, counter)
    if not fitted.dropped:
        return main
    unfolded = list(main.unfolded)
    if main.folds:
        covered = main.short_term.through_id if main.short_term is not None else 0
        newer = [m for m in fitted.dropped if m.id > covered]
        unfolded = (unfolded + newer)[-max(1, fold_limit):]
    return MainRead(fitted.history, main.pins, main.short_term, True, unfolded, main.folds)


def pins_block(pins: Sequence[Pin]) -> str:
    """The pinned items as the system message shows them."""
    lines = "\n".join(f"- {neutralize(pin.text)}" for pin in pins)
    return f"{PINS_HEADING}\n{lines}"
