"""How ``sea run`` and ``sea resume`` show a pulse: live on a terminal, as one JSON object
at the end, or as one JSON line per event."""

from __future__ import annotations

import math
import sys
from time import monotonic
from typing import Any, Protocol, TextIO

from rich import box
from rich.console import Console
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from sea.cli._fit import Fitted
from sea.cli._preview import approval_lines, event_line
from sea.cli._text import printable
from sea.engine.events import (
    ActionEnded,
    ActionStarted,
    ApprovalRequested,
    ErrorRaised,
    Event,
    LLMCalled,
    MemoryWritten,
    NodeEnded,
    NodeStarted,
    PlanChanged,
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

    pulse_id: str
    """The pulse's id (known from its first event)."""
    error: dict[str, Any] | None
    """How the pulse failed, if it did."""

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
        self.approvals: list[ApprovalRequested] = []
        self.plan_events: list[PlanChanged] = []
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
        elif isinstance(event, ApprovalRequested):
            self.approvals.append(event)
        elif isinstance(event, PlanChanged):
            self.plan_events.append(event)
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
        """Print ``pulse_id, status, spoken, error, handled_errors, llm_calls, memory_writes,
        plan_events`` and, for a waiting pulse, ``approval`` (the request it waits on)."""
        document = {
            "pulse_id": self.pulse_id,
            "status": self.status,
            "spoken": self.spoken,
            "error": self.error,
            "handled_errors": self.handled,
            "llm_calls": [record.to_json() for record in self.llm_calls],
            "memory_writes": [_write_json(write) for write in self.memory_writes],
            "plan_events": [event.to_json() for event in self.plan_events],
        }
        if self.status == "waiting" and self.approvals:
            document["approval"] = self.approvals[-1].request
        self._out.write(json_text(document) + "\n")
        return self.status


class JsonLinesView(_Collected):
    """Prints every event as one JSON line as it happens (``--events jsonl``), for scripts:
    each line is the event's ``to_json()`` (``kind``, ``pulse_id`` and its fields)."""

    def __init__(self, out: TextIO | None = None) -> None:
        super().__init__()
        self._out = out or sys.stdout

    def show(self, event: Event) -> None:
        """Print the event."""
        self.collect(event)
        self._out.write(json_text(event.to_json()) + "\n")
        self._out.flush()

    def finish(self) -> str:
        """Nothing more to print (the last line was ``pulse_end``)."""
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


class _Running:
    """The live status line: a spinner, the innermost running node and its elapsed time."""

    def __init__(self) -> None:
        self.nodes: list[tuple[NodeStarted, float]] = []
        self.action: tuple[ActionStarted, float] | None = None
        """The pipeline action running inside the innermost node, if any."""
        self._spinner = Spinner("dots", style="cyan")

    def __rich__(self) -> Spinner:
        if self.action is not None:
            action, started = self.action
            label = printable(
                f"{action.playbook}.{action.node} action {action.action_id} ({action.tool})")
            self._spinner.text = Text(f"{label}  {monotonic() - started:.1f}s", style="dim")
        elif self.nodes:
            event, started = self.nodes[-1]
            label = printable(f"{event.playbook}.{event.node} ({event.node_type})")
            self._spinner.text = Text(f"{label}  {monotonic() - started:.1f}s", style="dim")
        return self._spinner


class TerminalView(_Collected):
    """Streams the reply to ``out``; progress, warnings and the call table go to ``err``.

    On a terminal, a live status line shows the running node with a spinner and its elapsed
    time, each finished node is listed with its time, and the reply is set apart by blank
    lines. Elsewhere (a pipe, a file) every node is one plain line as it starts.
    Text from a model, a tool or the store is shown as text, never as markup, and its
    control characters are made visible (:func:`~sea.cli._text.printable`), so an escape
    sequence in a reply or an error is printed, not obeyed.
    """

    def __init__(self, out: TextIO, err: TextIO, *, live: bool | None = None) -> None:
        super().__init__()
        self._out = out
        self._console = Console(file=err, highlight=False, width=None if _tty(err) else 120)
        self._live_mode = self._console.is_terminal if live is None else live
        self._apart = _tty(out)
        self._running = _Running()
        self._live: Live | None = None
        self._streaming = False
        """The reply's line is open on ``out``."""
        self._streamed = False
        """The speaking node's reply was streamed (its ``Spoken`` event is not printed again)."""

    def show(self, event: Event) -> None:
        """Show the event as it happens."""
        self.collect(event)
        if isinstance(event, NodeStarted):
            self._started(event)
        elif isinstance(event, NodeEnded):
            self._ended(event)
        elif isinstance(event, TokenChunk):
            self._reply(event.text)
        elif isinstance(event, Spoken):
            if not self._streamed:
                self._reply(event.text)
            if self._streaming:
                self._end_reply()
            self._streamed = False
        elif isinstance(event, WarningRaised) and event.message != ESTIMATED_TOKENS:
            # (estimated token counts are marked with `~` in the call table instead)
            self._line(Text.assemble(
                ("warning ", "yellow"), printable(f"{event.code}: {event.message}")))
        elif isinstance(event, ActionStarted):
            self._action_started(event)
        elif isinstance(event, ActionEnded):
            self._action_ended(event)
        elif isinstance(event, ApprovalRequested | PlanChanged):
            self._plan_or_approval(event)
        elif isinstance(event, ErrorRaised) and event.routed:
            message = str(event.error.get("message", ""))
            self._line(Text.assemble(
                (f"{event.playbook}.{event.node} failed, handled: ", "yellow"), printable(message)
            ))

    def _plan_or_approval(self, event: ApprovalRequested | PlanChanged) -> None:
        """A plan event, one line; or what the pulse waits for: a plan's preview (files,
        specs with their risks and diff summaries, the risk score), or the action and its
        details."""
        if isinstance(event, PlanChanged):
            line = event_line(event.to_json(), with_time=False)
            self._line(Text(printable(f"plan {event.plan_id[:8]}… {line}"), style="dim"))
            return
        plan = event.request.get("plan_approval")
        if isinstance(plan, dict):
            first, *rest = approval_lines(plan)
            self._line(Text.assemble(("waiting for approval: ", "yellow"), printable(first)))
            for line in rest:
                self._line(Text(printable(line)))
            return
        action = str(event.request.get("action", "an action"))
        detail = {k: v for k, v in event.request.items()
                  if k not in ("action", "playbook", "node")}
        self._line(Text.assemble(
            ("waiting for approval: ", "yellow"),
            printable(f"{action} at {event.playbook}.{event.node}"),
            (printable(f" {json_text(detail)}") if detail else "", "dim"),
        ))

    def _started(self, event: NodeStarted) -> None:
        self._running.nodes.append((event, monotonic()))
        if not self._live_mode:
            indent = "  " * event.depth
            self._line(Text(
                printable(f"{indent}· {event.playbook}.{event.node} ({event.node_type})")))
        elif self._live is None and not self._streaming:
            self._live = Live(self._running, console=self._console, transient=True,
                              refresh_per_second=8)
            self._live.start()

    def _action_started(self, event: ActionStarted) -> None:
        self._running.action = (event, monotonic())
        if not self._live_mode:
            self._line(Text(printable(f"    action {event.action_id} ({event.tool})")))

    def _action_ended(self, event: ActionEnded) -> None:
        self._running.action = None
        if event.status == "ok" and not self._live_mode:
            return
        mark, style = {"ok": ("✓", "green"), "skipped": ("-", "dim")}.get(
            event.status, ("✗", "red"))
        message = f": {event.error.get('message')}" if event.error else ""
        self._line(Text.assemble(
            "    ", (mark, style),
            printable(f" action {event.action_id} ({event.tool}) {event.status}"),
            (printable(message), "dim"),
        ))

    def _ended(self, event: NodeEnded) -> None:
        nodes = self._running.nodes
        for index in range(len(nodes) - 1, -1, -1):
            if nodes[index][0].node == event.node and nodes[index][0].playbook == event.playbook:
                del nodes[index]
                break
        if self._live_mode:
            mark, style = ("✓", "green") if event.outcome == "ok" else ("✗", "red")
            indent = "  " * event.depth
            label = printable(f"{event.playbook}.{event.node} ({event.node_type})")
            took = f" {event.duration_s:.2f}s"
            if event.outcome != "ok":
                took += f" {event.outcome}"
            self._line(Text.assemble(indent, (mark, style), f" {label}", (took, "dim")))
        if not nodes:
            self._stop_live()

    def _reply(self, text: str) -> None:
        if not self._streaming:
            self._stop_live()
            if self._apart:
                self._out.write("\n")
        self._out.write(printable(text))
        self._out.flush()
        self._streaming = self._streamed = True

    def _end_reply(self) -> None:
        self._out.write("\n\n" if self._apart else "\n")
        self._out.flush()
        self._streaming = False

    def _line(self, text: Text) -> None:
        if self._streaming:
            self._end_reply()
        self._console.print(text)
        if self._live_mode and self._live is None and self._running.nodes:
            self._live = Live(self._running, console=self._console, transient=True,
                              refresh_per_second=8)
            self._live.start()

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def pause(self) -> None:
        """Stop the live status line before the person at the terminal is asked something:
        while it runs, it takes over stderr (a prompt written there would be read as markup,
        ``[a]`` eaten) and redraws its spinner under the prompt. The next node starts it
        again."""
        self._stop_live()
        if self._streaming:
            self._end_reply()

    def finish(self) -> str:
        """Print the table of LLM calls and how the pulse ended."""
        self._stop_live()
        if self._streaming:
            self._end_reply()
        if self.llm_calls:
            self._console.print(Fitted(call_table(self.llm_calls)))
        if self.error:
            parts = (self.error.get("playbook"), self.error.get("node"))
            where = ".".join(str(part) for part in parts if part)
            self._console.print(Text.assemble(
                (printable(f"error {self.error.get('code')}"), "red"),
                printable(f" at {where}: {self.error.get('message')}"),
            ))
        style = "green" if self.status == "ok" else "yellow" if self.status == "waiting" else "red"
        self._console.print(Text.assemble(printable(f"pulse {self.pulse_id}: "),
                                          (printable(self.status), style)))
        return self.status


def _tty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def call_table(records: list[LLMCallRecord]) -> Table:
    """The model calls: node, prompt pattern, model (and its kind), seconds, tokens in/out,
    cost, retries, outcome (``ok (cache hit)`` for an answer from the response cache), and
    totals; token counts the provider did not report are estimates, shown with ``~``."""
    table = Table(box=box.SIMPLE_HEAD, show_footer=True, pad_edge=False)
    total_time = sum(r.latency_s for r in records)
    mark = "~" if any(ESTIMATED_TOKENS in r.warnings for r in records) else ""
    footers = ["total", "", "", f"{total_time:.2f}s", f"{mark}{sum(r.tokens_in for r in records)}",
               f"{mark}{sum(r.tokens_out for r in records)}",
               f"{math.fsum(r.cost for r in records):.6f}", "", ""]
    headers = ["node", "pattern", "model", "time", "in", "out", "cost", "retries", "outcome"]
    for index, (header, footer) in enumerate(zip(headers, footers, strict=True)):
        table.add_column(header, footer=footer, no_wrap=True,
                         justify="right" if 3 <= index <= 7 else "left")
    for r in records:
        mark = "~" if ESTIMATED_TOKENS in r.warnings else ""
        said = f"{r.outcome} (cache hit)" if r.cache == "hit" else r.outcome
        outcome = Text(printable(said), style="green" if r.outcome == "ok" else "red")
        model = r.model if r.model_kind is None else f"{r.model} ({r.model_kind})"
        table.add_row(Text(printable(f"{r.playbook}.{r.node}")), Text(printable(r.pattern or "-")),
                      Text(printable(model)), f"{r.latency_s:.2f}s",
                      f"{mark}{r.tokens_in}", f"{mark}{r.tokens_out}", f"{r.cost:.6f}",
                      str(r.retries), outcome)
    return table
