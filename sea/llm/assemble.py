"""Assembling one call's context: read what its pattern needs from the store, bring the
short-term memory up to date, choose the Specialized part, compose.

Store reads run in a worker thread (the store is synchronous). The short-term memory update
is a model call of its own, made through the ``summarize`` callback (the call path), so it is
recorded and counted against the pulse's budget like any other call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from saimemory.base import MessageStore
from saimemory.errors import MemoryStoreError
from saimemory.pins import ShortTermMemory
from saimemory.records import HistoryBudget, Persona
from sea.errors import PulseCancelled, SeaError
from sea.llm.compose import Composition, MainRead, compose, fit_main, read_main
from sea.llm.options import LLMOptions
from sea.llm.patterns import Profile
from sea.llm.shortterm import SHORT_TERM_NODE, fold_prompt, summary_text
from sea.llm.specialized import Specialized, Stage
from sea.llm.tokens import ESTIMATE, TokenCounter

Summarize = Callable[[str, str], Awaitable[str]]
"""Makes the short-term memory update call: ``(node, prompt) -> the model's answer``."""


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """What a context is assembled for."""

    persona: Persona
    profile: Profile
    node: str
    prompt: str | None
    pulse_id: str | None
    scope: str
    specialized: str | None
    refresh: bool = True
    """Bring the short-term memory up to date when it is behind (False for the update
    call itself)."""
    thread: str | None = None
    """The memory thread whose history Main holds (None: the main thread)."""
    intent_stage: Stage | None = None
    """The stage the pulse's intent implies, for a node that took the intent's pattern (used
    when neither the node nor an active plan names one)."""
    counter: TokenCounter = ESTIMATE
    """How the called model's tokens are counted (the parts' sizes, the token budget)."""
    history_tokens: int | None = None
    """The most tokens of earlier conversation the history may hold (None: no bound but
    the store's history budget)."""


@dataclass(frozen=True, slots=True)
class _Read:
    main: MainRead | None
    plan_status: str | None


class ContextAssembler:
    """Assembles contexts for one caller.

    Args:
        store: Where history, pins, short-term memory and the current plan are read.
        budget: How much earlier conversation a context may hold.
        options: The host's settings (safety rules, short-term memory, guidelines).
    """

    def __init__(self, store: MessageStore, budget: HistoryBudget, options: LLMOptions) -> None:
        self._store = store
        self._budget = budget
        self._options = options

    async def assemble(
        self, request: ContextRequest, summarize: Summarize, warnings: list[str]
    ) -> Composition:
        """The composed context of ``request``; problems that did not stop it go to
        ``warnings``.

        Raises:
            UsageError: the node's ``specialized`` names a file that cannot be read.
            MemoryStoreError: the store could not be read.
        """
        profile = request.profile
        specialized = None
        if profile.has_specialized and request.specialized:
            specialized = self._options.guidelines.for_node(request.specialized)
        read = await asyncio.to_thread(self._read, request, specialized is None)
        if profile.has_specialized and specialized is None:
            specialized = self._options.guidelines.for_plan(read.plan_status)
        if profile.has_specialized and specialized is None and request.intent_stage:
            specialized = self._options.guidelines.for_intent(request.intent_stage)
        summary = None
        if read.main is not None:
            summary = await self._summary(request, read.main, summarize, warnings)
        return compose(
            request.persona, profile, main=read.main, summary=summary, specialized=specialized,
            prompt=request.prompt, safety_rules=self._options.safety_rules,
            counter=request.counter,
        )

    def _read(self, request: ContextRequest, wants_plan: bool) -> _Read:
        main = None
        if request.profile.has_main:
            main = read_main(
                self._store, request.persona.id, pulse_id=request.pulse_id, scope=request.scope,
                budget=self._budget, fold_limit=self._options.fold_limit,
                short_term=self._options.short_term_memory, thread=request.thread,
            )
            if request.history_tokens is not None:
                main = fit_main(main, request.pulse_id, request.history_tokens,
                                request.counter, self._options.fold_limit)
        status = None
        if request.profile.has_specialized and wants_plan:
            plan = self._store.current_plan(request.persona.id)
            status = None if plan is None else plan.state.status
        return _Read(main, status)

    async def _summary(
        self, request: ContextRequest, main: MainRead, summarize: Summarize, warnings: list[str]
    ) -> str | None:
        current = main.short_term.text if main.short_term is not None else None
        if not (main.unfolded and request.refresh):
            return current
        prompt = fold_prompt(current, main.unfolded, self._options.summary_words)
        try:
            answer = await summarize(f"{request.node}{SHORT_TERM_NODE}", prompt)
            text = summary_text(answer)
            if not text:
                warnings.append("short-term memory not updated: the model's summary was empty")
                return current
            saved: ShortTermMemory = await asyncio.to_thread(
                self._store.save_short_term, request.persona.id, text, main.unfolded[-1].id
            )
        except (asyncio.CancelledError, PulseCancelled):
            raise
        except (SeaError, MemoryStoreError) as exc:
            warnings.append(f"short-term memory not updated: {exc}")
            return current
        return saved.text


def specialized_label(composition: Composition) -> str | None:
    """The stage (or file) of a composition's Specialized part, if it has one."""
    found: Specialized | None = composition.specialized
    return None if found is None else found.label
