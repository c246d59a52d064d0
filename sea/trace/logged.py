"""The trace of a pulse a host ran and logged, made after the fact from its logged events.

``sea run --record`` records a trace as the pulse runs. A server logs every event of every
run instead (as ``Event.to_json()``); while a run's log is kept, those events are the same
facts the recorder takes, so the trace is made by feeding them, read back, to the same
:class:`~sea.trace.recorder.TraceRecorder`. What the recorder snapshots before a pulse
starts is taken from the store afterwards: the earlier conversation is the persona's
history as the store holds it now, without the pulse's own messages and anything stored
after the pulse began; the short-term memory is not snapshotted (a replay composes Main
without it). The playbook hashes are those of the playbooks as they are now.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from saimemory import HistoryBudget, MessageStore, Persona
from sea.engine.events import PulseStarted, event_from_json
from sea.trace.format import Trace
from sea.trace.recorder import TraceRecorder, history_snapshot

HOST_KINDS = frozenset({"metadata", "values", "end", "log_truncated"})
"""Entries of a server's log that are the host's own, not the pulse's events."""


def trace_of_logged(
    events: Iterable[Mapping[str, Any]],
    *,
    persona: Persona,
    playbook: str,
    pulse_id: str,
    started: datetime,
    store: MessageStore,
    budget: HistoryBudget,
    hashes: Any,
    playbook_dirs: list[str] | None = None,
) -> Trace:
    """The trace of the pulse whose logged events (every run's, in order) are ``events``.

    Args:
        events: The ``to_json()`` of each event (host entries and unknown kinds skipped).
        persona: The persona it ran for.
        playbook: Its top-level playbook.
        pulse_id: The pulse.
        started: When it began (messages stored later are not its earlier conversation).
        store: The persona's store (its history).
        budget: The history budget the pulse's contexts had.
        hashes: ``names -> {name: sha256}`` of the playbooks run (as they are now).
        playbook_dirs: The directories searched for playbooks.
    """
    found = [event_from_json(data) for data in events if data.get("kind") not in HOST_KINDS]
    known = [event for event in found if event is not None]
    text = next((e.input for e in known if isinstance(e, PulseStarted)), "")
    history = [line for line in history_snapshot(store, persona.id, budget, pulse_id)
               if _before(line.get("created_at"), started)]
    recorder = TraceRecorder(persona, playbook, text, pulse_id, history,
                             playbook_dirs=list(playbook_dirs or []), recorded_at=started)
    for event in known:
        recorder.observe(event)
    return recorder.trace(hashes(recorder.playbooks_run()))


def _before(stamp: Any, moment: datetime) -> bool:
    if not isinstance(stamp, str):
        return True
    try:
        return datetime.fromisoformat(stamp) < moment
    except ValueError:
        return True
