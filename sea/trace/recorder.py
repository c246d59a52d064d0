"""Recording a pulse: turn its event stream into a :class:`Trace`.

The recorder is an ordinary consumer of the events a host receives, so recording needs
nothing from the engine beyond what every host already gets. Before the pulse starts, the
caller snapshots the earlier conversation the pulse can see (:func:`history_snapshot`) so a
replay can seed a fresh store with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from saimemory import HistoryBudget, MessageStore, Persona
from saimemory.jsonl import message_record
from sea.engine.events import (
    Event,
    LLMCalled,
    MemoryWritten,
    NodeStarted,
    PulseEnded,
    Spoken,
    ToolCalled,
)
from sea.errors import UsageError
from sea.trace.format import (
    TRACE_VERSION,
    Trace,
    TraceLLMCall,
    TraceMemoryWrite,
    TraceMessage,
    TraceNode,
    TracePersona,
    TraceToolCall,
)


def history_snapshot(
    store: MessageStore, persona: str, budget: HistoryBudget, pulse_id: str
) -> list[dict[str, Any]]:
    """The earlier conversation a pulse about to start as ``pulse_id`` can see, as JSON lines."""
    threads = {thread.id: thread for thread in store.threads(persona)}
    return [
        _plain(message_record(message, threads.get(message.thread)))
        for message in store.history(persona, pulse_id=pulse_id, budget=budget)
    ]


def write_trace(trace: Trace, path: Path) -> None:
    """Write ``trace`` to ``path`` as indented JSON.

    Raises:
        UsageError: the file cannot be written (the message says why).
    """
    data = trace.model_dump(by_alias=True, exclude={"schema_"})
    try:
        path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    except OSError as exc:
        raise UsageError(f"cannot write the trace {path}: {exc.strerror}") from exc


def _plain(value: Any) -> Any:
    """``value`` as plain JSON data (tuples become lists, dataclasses dicts)."""
    return orjson.loads(orjson.dumps(value, default=_default))


def _default(value: Any) -> Any:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    return str(value)


@dataclass
class TraceRecorder:
    """Collects a pulse's events into a trace (feed it every event, in order)."""

    persona: Persona
    playbook: str
    input: str
    pulse_id: str
    history: list[dict[str, Any]]
    args: dict[str, Any] = field(default_factory=dict)
    playbook_dirs: list[str] = field(default_factory=list)
    recorded_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    _seq: int = 0
    _nodes: list[TraceNode] = field(default_factory=list)
    _llm: list[TraceLLMCall] = field(default_factory=list)
    _tools: list[TraceToolCall] = field(default_factory=list)
    _writes: list[TraceMemoryWrite] = field(default_factory=list)
    _spoken: list[str] = field(default_factory=list)
    _end: PulseEnded | None = None

    def observe(self, event: Event) -> None:
        """Take one event of the pulse."""
        self._seq += 1
        if isinstance(event, NodeStarted):
            self._nodes.append(
                TraceNode(
                    seq=self._seq,
                    playbook=event.playbook,
                    node=event.node,
                    type=event.node_type,
                    depth=event.depth,
                )
            )
        elif isinstance(event, LLMCalled):
            self._llm.append(_llm_call(self._seq, event.record))
        elif isinstance(event, ToolCalled):
            self._tools.append(_tool_call(self._seq, event))
        elif isinstance(event, MemoryWritten):
            self._writes.append(_memory_write(self._seq, event))
        elif isinstance(event, Spoken):
            self._spoken.append(event.text)
        elif isinstance(event, PulseEnded):
            self._end = event

    def trace(self, playbook_hashes: dict[str, str]) -> Trace:
        """The finished trace; ``playbook_hashes`` maps every playbook run to its hash."""
        end = self._end
        return Trace(
            version=TRACE_VERSION,
            pulse_id=self.pulse_id,
            recorded_at=self.recorded_at.isoformat(),
            playbook=self.playbook,
            playbook_hashes=playbook_hashes,
            persona=TracePersona(
                id=self.persona.id,
                name=self.persona.name,
                system_prompt=self.persona.system_prompt,
            ),
            input=self.input,
            args=_plain(self.args),
            playbook_dirs=self.playbook_dirs,
            history=self.history,
            nodes=self._nodes,
            llm_calls=self._llm,
            tool_calls=self._tools,
            memory_writes=self._writes,
            spoken=self._spoken,
            status=end.status if end else "incomplete",
            error=_plain(end.error) if end and end.error else None,
            duration_s=end.duration_s if end else 0.0,
        )

    def playbooks_run(self) -> list[str]:
        """Names of the playbooks whose nodes ran, in first-run order."""
        return list(dict.fromkeys(node.playbook for node in self._nodes))


def _llm_call(seq: int, record: Any) -> TraceLLMCall:
    return TraceLLMCall(
        seq=seq,
        playbook=record.playbook,
        node=record.node,
        model=record.model,
        messages=[TraceMessage(role=m["role"], content=m["content"]) for m in record.messages],
        response=_plain(record.response),
        attempts=_plain(record.attempts),
        tokens_in=record.tokens_in,
        tokens_out=record.tokens_out,
        latency_s=record.latency_s,
        retries=record.retries,
        outcome=record.outcome,
        error=record.error,
    )


def _tool_call(seq: int, event: ToolCalled) -> TraceToolCall:
    return TraceToolCall(
        seq=seq,
        playbook=event.playbook,
        node=event.node,
        tool=event.tool,
        args=_plain(event.args),
        ok=event.ok,
        result=_plain(event.result),
        error=_plain(event.error) if event.error else None,
    )


def _memory_write(seq: int, event: MemoryWritten) -> TraceMemoryWrite:
    return TraceMemoryWrite(
        seq=seq,
        playbook=event.playbook,
        node=event.node,
        role=event.role,
        content=event.content,
        tags=list(event.tags),
    )
