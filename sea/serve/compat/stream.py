"""A run's event log as LangGraph's stream modes.

The mapping reads the log from its start, so replaying it after a ``Last-Event-ID`` gives
the same events with the same ids (``<seq>-<k>``: the k-th event made from log entry
``seq``); the hub writes the conversation's ``values`` snapshots into the log, so the
mapping never reads the store.

=====================  ======================================================================
log entry              events
=====================  ======================================================================
``metadata``           ``metadata {run_id, attempt}`` (first, every mode)
``attempt``            ``metadata {run_id, attempt}`` again: a worker continues the pulse
                       after its worker died (``sea serve --workers``)
``values`` snapshot    ``values`` (with ``__interrupt__`` when the pulse waits); ``updates``
                       ``{"__interrupt__": [...]}`` then
``token``              ``messages`` (messages-tuple): ``[AIMessageChunk, metadata]``
``spoken``             a whole chunk when the reply was not streamed; ``updates``
                       ``{node: {"messages": [ai]}}``
``node_end``           ``updates {node: {outcome, playbook, duration_s}}``
every SEA event        ``custom`` (the event as SEA streams it)
``end``                ``error {error, message}`` when the pulse failed (or the server
                       cancelled it as it shut down), else ``end``
=====================  ======================================================================

Other modes (``events``, ``debug``, ``tasks``, ``checkpoints``, ``messages``) send nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from sea.errors import InvalidRequest
from sea.serve.eventlog import Entry
from sea.serve.thread_state import reply_id, visit_key

MODES = frozenset({"values", "updates", "messages", "messages-tuple", "custom", "events",
                   "debug", "tasks", "checkpoints", "tools", "lifecycle"})
INTERNAL = frozenset({"metadata", "attempt", "values", "end"})
"""Log entries the hub writes beside the pulse's own events."""

Part = tuple[str, str, Any]
"""(id, event name, data)."""


def modes_of(given: str | Iterable[str] | None) -> tuple[str, ...]:
    """The stream modes a request asks for (default ``values``).

    Raises:
        InvalidRequest: a mode LangGraph does not have.
    """
    modes = ("values",) if not given else (given,) if isinstance(given, str) else tuple(given)
    unknown = sorted(set(modes) - MODES)
    if unknown:
        raise InvalidRequest(f"unknown stream_mode {unknown[0]!r}; SEA streams "
                             "values, updates, messages-tuple and custom")
    return modes


def event_id(seq: int, k: int) -> str:
    """The SSE id of the k-th event made from log entry ``seq``."""
    return f"{seq}-{k}"


def position(last_event_id: str | None) -> tuple[int, int]:
    """Where a ``Last-Event-ID`` points: (seq, k); (0, -1) before the first event."""
    if not last_event_id:
        return (0, -1)
    seq, _, k = last_event_id.strip().partition("-")
    try:
        return (int(seq), int(k) if k else 1 << 30)
    except ValueError:
        raise InvalidRequest(f"Last-Event-ID {last_event_id!r} is not an id this server "
                             "sent") from None


class CompatStream:
    """Turns log entries into LangGraph stream events for the requested modes."""

    def __init__(self, modes: Iterable[str]) -> None:
        self.modes = frozenset(modes)
        self._visits: dict[str, int] = {}
        self._streamed: set[str] = set()
        self._pulse = ""
        self._step = 0

    def parts(self, entry: Entry) -> list[Part]:
        """The events of one log entry, with their ids."""
        return [(event_id(entry.seq, k), name, data)
                for k, (name, data) in enumerate(self._events(entry))]

    def _events(self, entry: Entry) -> Iterator[tuple[str, Any]]:
        if entry.kind in INTERNAL:
            yield from self._internal(entry.kind, entry.data)
            return
        kind, data, modes = entry.kind, entry.data, self.modes
        if kind == "node_start":
            self._step += 1
        if kind == "token" and "messages-tuple" in modes:
            yield "messages", self._chunk(data, str(data.get("text", "")), streamed=True)
        if kind == "spoken" and data.get("stored"):
            yield from self._spoken(data)
        if kind == "node_end" and "updates" in modes:
            yield "updates", {str(data.get("node")): {
                "outcome": data.get("outcome"), "playbook": data.get("playbook"),
                "duration_s": data.get("duration_s")}}
        if "custom" in modes:
            yield "custom", data

    def _internal(self, kind: str, data: Any) -> Iterator[tuple[str, Any]]:
        """The hub's own entries: metadata, values snapshots, the end."""
        if kind == "metadata":
            self._pulse = str(data.get("pulse_id", ""))
            self._visits = dict(data.get("visits") or {})
            yield "metadata", {"run_id": data["run_id"], "attempt": data.get("attempt", 1)}
        elif kind == "attempt":  # a worker went on with the pulse after another one died
            yield "metadata", {"run_id": data["run_id"], "attempt": data["attempt"]}
        elif kind == "values":
            if "values" in self.modes:
                yield "values", data
            if "updates" in self.modes and data.get("__interrupt__"):
                yield "updates", {"__interrupt__": data["__interrupt__"]}
        else:
            error = data.get("error")
            if error:  # a failure, or a run the server cancelled (a shutdown)
                yield "error", {"error": error.get("code", "SEA500"),
                                "message": error.get("message", "the pulse failed")}
            else:
                yield "end", None

    def _spoken(self, data: Any) -> Iterator[tuple[str, Any]]:
        """A stored reply: one whole chunk when it was not streamed, an update."""
        key = visit_key(data.get("playbook"), data.get("node"))
        mid = reply_id(self._pulse, str(data.get("playbook")), str(data.get("node")),
                       self._visits.get(key, 0))
        if "messages-tuple" in self.modes and mid not in self._streamed:
            yield "messages", self._chunk(data, str(data.get("text", "")), streamed=False)
        if "updates" in self.modes:
            yield "updates", {str(data.get("node")): {"messages": [
                {"type": "ai", "id": mid, "content": data.get("text", "")}]}}
        self._visits[key] = self._visits.get(key, 0) + 1

    def _chunk(self, data: Any, text: str, *, streamed: bool) -> list[Any]:
        playbook, node = str(data.get("playbook")), str(data.get("node"))
        mid = reply_id(self._pulse, playbook, node,
                       self._visits.get(visit_key(playbook, node), 0))
        if streamed:
            self._streamed.add(mid)
        chunk = {"type": "AIMessageChunk", "id": mid, "content": text,
                 "additional_kwargs": {}, "response_metadata": {}, "tool_call_chunks": []}
        meta = {"langgraph_node": node, "langgraph_step": self._step, "playbook": playbook,
                "pulse_id": self._pulse}
        return [chunk, meta]
