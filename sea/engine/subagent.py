"""Subagent calls: a callee that works in a thread of memory of its own and comes back as a
chronicle.

A ``subplay`` or ``exec`` node with ``"execution": "subagent"`` runs its callee in a
sub-thread of the persona's memory (SAIMemory threads): everything the callee writes goes
there, and its model calls see that thread (and what the caller passed as arguments), not
the persona's main conversation. The thread is opened when the call starts and closed when
it ends, however it ends: success, failure, cancellation of the pulse, or a wait for
approval (then it is opened again when the pulse resumes). The thread is never persona-wide
state the engine reads: the frame of the call carries it (:attr:`Frame.threads
<sea.engine.pulse.Frame.threads>`), so a pulse that stops half-way cannot leave the next one
writing in the wrong place.

When the callee ends (a wait for approval is not an end), a **chronicle** is made: the light
model's summary of the thread (``base_specialized`` with the SUMMARY guidelines, through the
pulse's call path, so it is recorded, counted against the budget and replayed like any
call, at ``<node>:subagent_chronicle``), or a bounded transcript of the thread
(:data:`TRANSCRIPT_MAX_CHARS`) when the node says ``"subagent_chronicle": false``, when the
model fails, when the pulse was cancelled or stopped by a bound, or when the thread is empty.
It is recorded as the thread's chronicle, reported by a ``subagent_end`` event (which the
trace keeps) and set as the caller's ``_subagent_chronicle`` variable, also when the call
failed and the node's ``error_next`` takes over. Every piece of it is model, tool or user
text, so any ``<system>`` tag in it is neutralized (:mod:`sea.lang.trust`).

Subagent calls nest at most ``Limits.max_subagent_depth`` deep (2 by default, as in SAIVerse).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

from langgraph.errors import GraphBubbleUp

from saimemory.base import MessageStore
from saimemory.errors import MemoryStoreError
from saimemory.records import Message
from sea.engine.events import SubagentEnded, SubagentStarted
from sea.engine.pulse import Frame
from sea.engine.state import PlaybookState, Update, assign
from sea.errors import (
    BoundExceeded,
    CallDepthExceeded,
    ExecutionError,
    MemoryWriteFailed,
    PulseCancelled,
    SeaError,
)
from sea.lang.models import Playbook
from sea.lang.node_models import CallNode
from sea.lang.trust import neutralize
from sea.llm.call import LLMRequest

CHRONICLE_VARIABLE = "_subagent_chronicle"
"""The caller's variable that receives the chronicle."""

CHRONICLE_NODE = ":subagent_chronicle"
"""Appended to the calling node's id to name the chronicle's model call in records and
traces (``ask:subagent_chronicle``)."""

TRANSCRIPT_MAX_CHARS = 4_000
"""The longest transcript chronicle: the thread's newest messages that fit, with a note of
how many earlier ones were left out (a single message longer than this is cut)."""

SUMMARY_SOURCE_MAX_CHARS = 24_000
"""The longest transcript the light model is given to summarize (cut the same way)."""

EMPTY_THREAD = "(the subagent wrote nothing in its thread)"
UNREADABLE_THREAD = "(the subagent's thread could not be read)"

_READ_LIMIT = 500
"""The most messages of a thread a chronicle is made from (the newest)."""
_NOTE_ROOM = 60
"""Characters kept free in a cut transcript for the note saying so."""

Status = Literal["ok", "error", "cancelled"]
Source = Literal["model", "transcript"]
Call = Callable[[Frame], Awaitable[Update]]
"""Runs the callee with the frame it is given (:func:`sea.engine.calls.call_playbook`)."""


@dataclass(frozen=True, slots=True)
class Chronicle:
    """What a subagent call came to.

    Attributes:
        text: The chronicle (never holds a live ``<system>`` tag).
        source: ``model`` (the light model's summary) or ``transcript``.
        error: Why the summary was asked for and not made (None otherwise).
    """

    text: str
    source: Source
    error: str | None = None


async def run_call(
    frame: Frame, node: CallNode, state: PlaybookState, callee: Playbook, call: Call
) -> Update:
    """Run ``call`` for ``node``: as it is for an inline call, in a sub-thread of its own
    for a subagent call (``_subagent_chronicle`` is then set in the returned update)."""
    if node.execution != "subagent":
        return await call(frame)
    return await _Subagent(frame, node, callee, thread_id(frame, node)).run(call)


def thread_id(frame: Frame, node: CallNode) -> str:
    """The sub-thread of this node run: the same when the run is made again from its
    checkpoint (a resumed or recovered pulse finds its thread again), another for every
    other run."""
    where = f"{frame.pulse.pulse_id}/{frame.step}/{frame.name}.{node.id}"
    digest = hashlib.sha256(where.encode("utf-8")).hexdigest()[:16]
    return f"{frame.pulse.persona.id}:subagent-{digest}"


def transcript(messages: Sequence[Message], max_chars: int) -> str:
    """The messages as ``role: text`` lines, ``<system>`` tags neutralized, at most
    ``max_chars`` long: the newest that fit, after a note of how many were left out."""
    lines = [f"{message.role}: {neutralize(message.content)}" for message in messages]
    whole = "\n".join(lines)
    if len(whole) <= max_chars:
        return whole
    room = max(1, max_chars - _NOTE_ROOM)
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        cost = len(line) + (1 if kept else 0)
        if used + cost > room:
            break
        kept.append(line)
        used += cost
    if not kept:  # the newest message alone is too long: its start, cut
        kept.append(lines[-1][: max(1, room - 1)] + "…")
    left = len(lines) - len(kept)
    note = f"({left} earlier message{'' if left == 1 else 's'} left out)"
    return "\n".join((note, *reversed(kept)))[:max_chars]


def chronicle_prompt(callee: str, status: Status, text: str) -> str:
    """The light model's instruction for summarizing a subagent's thread."""
    ended = {"ok": "finished", "error": "failed", "cancelled": "was cancelled"}[status]
    return (
        f"A subagent ran the playbook {callee!r} in a thread of its own and {ended}. "
        "Summarize for the persona who called it what it was asked, what it found or did, "
        "and how it ended, in a few sentences. Keep names, numbers and results exactly; "
        "add nothing that is not in the thread.\n\n"
        f"The thread:\n{text}"
    )


def with_variable(update: Update, name: str, value: Any) -> Update:
    """``update`` that also sets the variable ``name``."""
    merged = dict(update)
    merged["vars"] = {**(update.get("vars") or {}), **assign({name: value})["vars"]}
    return merged


T = TypeVar("T")


async def _shielded(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to its end even when the pulse is cancelled (again) meanwhile."""
    return await asyncio.shield(work)


@dataclass(frozen=True, slots=True)
class _Subagent:
    frame: Frame
    node: CallNode
    callee: Playbook
    thread: str

    async def run(self, call: Call) -> Update:
        frame, node = self.frame, self.node
        depth = len(frame.threads) + 1
        limit = frame.services.limits.max_subagent_depth
        if depth > limit:
            chain = " → ".join((*frame.stack, self.callee.name))
            raise CallDepthExceeded(
                f"subagent calls nested deeper than {limit} (Limits.max_subagent_depth): "
                f"{chain}; call the inner playbook with \"execution\": \"inline\"",
                playbook=frame.name,
                node=node.id,
            )
        persona = frame.pulse.persona.id
        title = f"Subagent: {self.callee.name}"
        await self._store("open", lambda store: store.open_thread(
            persona, self.thread, title=title, parent=frame.thread))
        frame.emit(SubagentStarted(frame.pulse.pulse_id, frame.name, node.id,
                                   self.callee.name, self.thread, depth))
        try:
            update = await call(replace(frame, threads=(*frame.threads, self.thread)))
        except GraphBubbleUp:  # waits for a person: not an end; opened again on resume
            await _shielded(self._close(None))
            raise
        except (asyncio.CancelledError, PulseCancelled):
            await _shielded(self._end("cancelled", summarize=False))
            raise
        except BoundExceeded:  # ends the pulse: no model call for it
            await _shielded(self._end("error", summarize=False))
            raise
        except ExecutionError as exc:
            chronicle = await self._end("error", summarize=node.subagent_chronicle)
            exc.values = {**exc.values, CHRONICLE_VARIABLE: chronicle.text}
            raise
        except BaseException:
            await _shielded(self._end("error", summarize=False))
            raise
        chronicle = await self._end("ok", summarize=node.subagent_chronicle)
        return with_variable(update, CHRONICLE_VARIABLE, chronicle.text)

    async def _end(self, status: Status, *, summarize: bool) -> Chronicle:
        """Make the chronicle, close the thread with it and report it. A cancellation
        while the light model summarizes still closes the thread, with the transcript."""
        messages, problem = await _shielded(self._read())
        try:
            if problem is not None:
                chronicle = Chronicle(UNREADABLE_THREAD, "transcript", problem)
            else:
                chronicle = await self._chronicle(status, summarize, messages)
        except (asyncio.CancelledError, PulseCancelled):
            cut = Chronicle(transcript(messages, TRANSCRIPT_MAX_CHARS) or EMPTY_THREAD,
                            "transcript", "the pulse was cancelled while the summary was made")
            await _shielded(self._finish("cancelled", cut))
            raise
        await _shielded(self._finish(status, chronicle))
        return chronicle

    async def _read(self) -> tuple[list[Message], str | None]:
        persona = self.frame.pulse.persona.id
        try:
            messages = await self._store("read", lambda store: store.recent(
                persona, thread=self.thread, limit=_READ_LIMIT))
        except MemoryWriteFailed as exc:
            return [], f"the thread could not be read: {exc.detail}"
        return messages, None

    async def _chronicle(
        self, status: Status, summarize: bool, messages: Sequence[Message]
    ) -> Chronicle:
        if not messages:
            return Chronicle(EMPTY_THREAD, "transcript")
        if not summarize:
            return Chronicle(transcript(messages, TRANSCRIPT_MAX_CHARS), "transcript")
        try:
            text = neutralize((await self._summary(status, messages)).strip())
        except PulseCancelled:
            raise
        except SeaError as exc:
            return Chronicle(transcript(messages, TRANSCRIPT_MAX_CHARS), "transcript",
                             f"the light model's summary failed: {exc}")
        if not text:
            return Chronicle(transcript(messages, TRANSCRIPT_MAX_CHARS), "transcript",
                             "the light model's summary was empty")
        return Chronicle(text, "model")

    async def _summary(self, status: Status, messages: Sequence[Message]) -> str:
        frame = self.frame
        request = LLMRequest(
            playbook=frame.name,
            node=f"{self.node.id}{CHRONICLE_NODE}",
            persona=frame.pulse.persona,
            profile="base_specialized",
            prompt=chronicle_prompt(self.callee.name, status,
                                    transcript(messages, SUMMARY_SOURCE_MAX_CHARS)),
            pulse_id=frame.pulse.pulse_id,
            scope=frame.scope,
            specialized="summary",
            refresh_short_term=False,
        )
        return (await frame.pulse.caller.call(request)).text

    async def _finish(self, status: Status, chronicle: Chronicle) -> None:
        """Close the thread with the chronicle, then report it."""
        frame = self.frame
        await self._close(chronicle.text)
        frame.emit(SubagentEnded(frame.pulse.pulse_id, frame.name, self.node.id,
                                 self.callee.name, self.thread, status, chronicle.text,
                                 chronicle.source, chronicle.error))

    async def _close(self, chronicle: str | None) -> None:
        persona = self.frame.pulse.persona.id
        await self._store("close", lambda store: store.close_thread(
            persona, self.thread, chronicle=chronicle))

    async def _store(self, what: str, work: Callable[[MessageStore], T]) -> T:
        try:
            return await asyncio.to_thread(work, self.frame.services.store)
        except MemoryStoreError as exc:
            raise MemoryWriteFailed(
                f"memory could not {what} the subagent thread {self.thread!r} "
                f"({exc.code}): {exc.message}",
                playbook=self.frame.name,
                node=self.node.id,
            ) from exc
