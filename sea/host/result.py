"""What a pulse did, assembled from its events and its final state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from sea.engine.events import (
    ApprovalRequested,
    ErrorRaised,
    Event,
    LLMCalled,
    MemoryWritten,
    PulseEnded,
    Spoken,
)
from sea.engine.state import variables
from sea.llm.records import LLMCallRecord

Status = Literal["ok", "error", "cancelled", "waiting"]

_BUILTINS = ("input", "persona_id", "persona_name", "pulse_id")


@dataclass(frozen=True, slots=True)
class PulseResult:
    """What a pulse did."""

    pulse_id: str
    status: Status
    spoken: list[str]
    """Texts the persona said (speak, say and speaking llm nodes), in order."""
    outputs: dict[str, Any]
    """The top-level playbook's ``output_schema`` variables (all its variables if none)."""
    texts: list[str]
    """The top-level playbook's outputs list (memorized, spoken and said texts)."""
    error: dict[str, Any] | None
    """``{code, message, playbook, node}`` when ``status`` is ``error``."""
    llm_calls: list[LLMCallRecord]
    memory_writes: list[MemoryWritten]
    usage: dict[str, int]
    """``llm_calls``, ``tokens_in``, ``tokens_out``, ``steps``."""
    approval: dict[str, Any] | None = None
    """The pending approval request when ``status`` is ``waiting``."""
    handled_errors: list[dict[str, Any]] = field(default_factory=list)
    """Failures an ``error_next`` handled, in order (``{playbook, node, code, message}``):
    the pulse may end ``ok`` and still have lost a model call or a tool result."""
    events: list[Event] = field(default_factory=list)


def pulse_result(
    pulse_id: str,
    events: Sequence[Event],
    final: Mapping[str, Any],
    output_schema: list[str] | None,
) -> PulseResult:
    """The result of a pulse from everything it emitted and its final top-level state."""
    end = next((e for e in reversed(events) if isinstance(e, PulseEnded)), None)
    calls = [e.record for e in events if isinstance(e, LLMCalled)]
    approval = next((e.request for e in events if isinstance(e, ApprovalRequested)), None)
    status = cast(Status, end.status) if end else "error"
    return PulseResult(
        pulse_id=pulse_id,
        status=status,
        spoken=[e.text for e in events if isinstance(e, Spoken)],
        outputs=_outputs(output_schema, final),
        texts=list(final.get("outputs") or []),
        error=end.error if end else None,
        llm_calls=calls,
        memory_writes=[e for e in events if isinstance(e, MemoryWritten)],
        usage={
            "llm_calls": len(calls),
            "tokens_in": sum(c.tokens_in for c in calls),
            "tokens_out": sum(c.tokens_out for c in calls),
            "steps": int(final.get("steps") or 0),
        },
        approval=approval if status == "waiting" else None,
        handled_errors=[
            {"playbook": e.playbook, "node": e.node, **e.error}
            for e in events
            if isinstance(e, ErrorRaised) and e.routed
        ],
        events=list(events),
    )


def _outputs(declared: list[str] | None, final: Mapping[str, Any]) -> dict[str, Any]:
    scope = variables(final)
    if declared:
        return {key: scope.get(key) for key in declared}
    return {k: v for k, v in scope.maps[-1].items() if k not in _BUILTINS}
