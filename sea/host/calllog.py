"""Keeping a pulse's call records in SAIMemory (the ``call_records`` table), for ``sea stats``.

A :class:`CallLog` watches the events of one drive of a pulse, turns each model call
(``llm_call``) and tool call (``tool_call``) into its stored row (a
:class:`saimemory.calls.CallRecord`, which the call's own record makes:
``LLMCallRecord.call_row``, ``ToolCalled.call_row``), and writes them in one transaction when
the drive ends (ended, failed, cancelled or waiting), so the store is not written once per call
while the pulse runs. A store that refuses them costs the pulse nothing but a warning.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from saimemory.base import MessageStore
from saimemory.errors import MemoryStoreError
from sea.engine.events import Event, LLMCalled, ToolCalled, WarningRaised

_CALLS = (LLMCalled, ToolCalled)
"""The events that are calls (a tuple: ``A | B`` would build a union at every event)."""


class CallLog:
    """Collects one drive's calls and stores them when it ends."""

    def __init__(self, store: MessageStore) -> None:
        self._store = store
        self._calls: list[tuple[str, LLMCalled | ToolCalled]] = []
        """(persona, event) of each call noted: records are made when they are stored, not
        while the pulse runs."""

    def watch(
        self, sink: Callable[[Event | None], None], persona: Callable[[], str | None]
    ) -> Callable[[Event | None], None]:
        """A sink that notes the calls, then passes every event on to ``sink``;
        ``persona`` says whose pulse it is (None until the drive has loaded it)."""

        def noting(event: Event | None) -> None:
            if isinstance(event, _CALLS):
                whose = persona()
                if whose is not None:
                    self._calls.append((whose, event))
            sink(event)

        return noting

    async def flush(self, pulse_id: str, sink: Callable[[Event | None], None]) -> None:
        """Store the calls noted so far (then forget them); a refusal becomes a warning."""
        calls, self._calls = self._calls, []
        if not calls:
            return
        records = [
            event.record.call_row(whose, event.pulse_id) if isinstance(event, LLMCalled)
            else event.call_row(whose)
            for whose, event in calls
        ]
        try:
            await asyncio.to_thread(self._store.record_calls, records)
        except MemoryStoreError as exc:
            sink(WarningRaised(pulse_id, "call_records", f"the call records of this drive "
                               f"were not stored ({exc.code}): {exc.message}"))
