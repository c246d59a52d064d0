"""How ``sea run`` shows a pulse: live on a terminal, or as one JSON object at the end."""

from __future__ import annotations

import sys
from typing import Any, Protocol, TextIO

from sea.engine.events import (
    ErrorRaised,
    Event,
    LLMCalled,
    MemoryWritten,
    NodeStarted,
    PulseEnded,
    Spoken,
    TokenChunk,
    WarningRaised,
)
from sea.jsontypes import json_text
from sea.llm.call import ESTIMATED_TOKENS
from sea.llm.records import LLMCallRecord


class View(Protocol):
    """Something that shows a pulse's events."""

    def show(self, event: Event) -> None:
        """Take one event as it happens."""

    def finish(self) -> str:
        """Show the end; the pulse's status."""

    @property
    def handled(self) -> list[dict[str, Any]]:
        """Failures that ``error_next`` handled (the pulse went on)."""


class _Collected:
    """What both views keep: status, error, spoken texts, LLM calls, memory writes."""

    def __init__(self) -> None:
        self.status = "incomplete"
        self.pulse_id = ""
        self.error: dict[str, Any] | None = None
        self.spoken: list[str] = []
        self.llm_calls: list[Any] = []
        self.memory_writes: list[MemoryWritten] = []
        self._handled: list[dict[str, Any]] = []

    @property
    def handled(self) -> list[dict[str, Any]]:
        """Failures that ``error_next`` handled (the pulse went on)."""
        return self._handled

    def collect(self, event: Event) -> None:
        self.pulse_id = event.pulse_id
        if isinstance(event, Spoken):
            self.spoken.append(event.text)
        elif isinstance(event, LLMCalled):
            self.llm_calls.append(event.record)
        elif isinstance(event, MemoryWritten):
            self.memory_writes.append(event)
        elif isinstance(event, ErrorRaised) and event.routed:
            self._handled.append({"playbook": event.playbook, "node": event.node, **event.error})
        elif isinstance(event, PulseEnded):
            self.status = event.status
            self.error = event.error


class JsonView(_Collected):
    """Prints one JSON object when the pulse ends."""

    def __init__(self, out: TextIO | None = None) -> None:
        super().__init__()
        self._out = out or sys.stdout

    def show(self, event: Event) -> None:
        """Collect the event."""
        self.collect(event)

    def finish(self) -> str:
        """Print ``pulse_id, status, spoken, error, handled_errors, llm_calls, memory_writes``."""
        document = {
            "pulse_id": self.pulse_id,
            "status": self.status,
            "spoken": self.spoken,
            "error": self.error,
            "handled_errors": self.handled,
            "llm_calls": [record.to_json() for record in self.llm_calls],
            "memory_writes": [_write_json(write) for write in self.memory_writes],
        }
        self._out.write(json_text(document) + "\n")
        return self.status


def _write_json(write: MemoryWritten) -> dict[str, Any]:
    return {
        "message_id": write.message_id,
        "playbook": write.playbook,
        "node": write.node,
        "role": write.role,
        "content": write.content,
        "tags": list(write.tags),
    }


class TerminalView(_Collected):
    """Streams the reply to ``out`` and progress, warnings and a call table to ``err``."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        super().__init__()
        self._out, self._err = out, err
        self._streaming = False

    def show(self, event: Event) -> None:
        """Show the event as it happens."""
        self.collect(event)
        if isinstance(event, NodeStarted):
            self._end_line()
            indent = "  " * event.depth
            self._err.write(f"{indent}· {event.playbook}.{event.node} ({event.node_type})\n")
            self._err.flush()
        elif isinstance(event, TokenChunk):
            self._out.write(event.text)
            self._out.flush()
            self._streaming = True
        elif isinstance(event, Spoken):
            if not self._streaming:
                self._out.write(event.text)
            self._out.write("\n")
            self._out.flush()
            self._streaming = False
        elif isinstance(event, WarningRaised):
            self._end_line()
            self._err.write(f"warning {event.code}: {event.message}\n")
        elif isinstance(event, ErrorRaised) and event.routed:
            self._end_line()
            message = event.error.get("message", "")
            self._err.write(f"{event.playbook}.{event.node} failed, handled: {message}\n")

    def _end_line(self) -> None:
        if self._streaming:
            self._out.write("\n")
            self._out.flush()
            self._streaming = False

    def finish(self) -> str:
        """Print the table of LLM calls and how the pulse ended."""
        self._end_line()
        if self.llm_calls:
            self._err.write(call_table(self.llm_calls) + "\n")
        if self.error:
            parts = (self.error.get("playbook"), self.error.get("node"))
            where = ".".join(str(part) for part in parts if part)
            self._err.write(
                f"error {self.error.get('code')} at {where}: {self.error.get('message')}\n"
            )
        self._err.write(f"pulse {self.pulse_id}: {self.status}\n")
        return self.status


def call_table(records: list[LLMCallRecord]) -> str:
    """A fixed-width table: node, model, seconds, tokens in/out, retries, outcome; token
    counts the provider did not report are estimates, shown with ``~``."""
    rows = [("node", "model", "time", "in", "out", "retries", "outcome")]
    for r in records:
        mark = "~" if ESTIMATED_TOKENS in r.warnings else ""
        rows.append((f"{r.playbook}.{r.node}", r.model, f"{r.latency_s:.2f}s",
                     f"{mark}{r.tokens_in}", f"{mark}{r.tokens_out}", str(r.retries), r.outcome))
    total_time = sum(r.latency_s for r in records)
    mark = "~" if any(ESTIMATED_TOKENS in r.warnings for r in records) else ""
    rows.append(("total", "", f"{total_time:.2f}s", f"{mark}{sum(r.tokens_in for r in records)}",
                 f"{mark}{sum(r.tokens_out for r in records)}", "", ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                     .rstrip() for row in rows)
