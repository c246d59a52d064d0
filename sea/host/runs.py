"""One drive of a pulse, and the origin a pulse keeps in its checkpoints.

A drive is what the host asked for (a new pulse, the answer that resumes a waiting one,
or going on with a pulse whose process died) together with what the drive learns on the
way (its final state, whether the graph started). The origin (persona, playbook, input)
is stored in the graph state so another process can resume or continue the pulse from
the checkpointer alone.

Three modes: ``start`` runs a new pulse (with ``recover``, a pulse whose checkpoints
already exist is continued instead, and its input is written once however often it is
started); ``resume`` answers a waiting pulse; ``continue`` goes on from the last
checkpoint of a pulse that was interrupted (its node runs that finished are not run
again).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from saimemory.records import Persona
from sea.errors import UsageError
from sea.host.turns import Priority

Mode = Literal["start", "resume", "continue"]


@dataclass(slots=True)
class Run:
    """One drive of a pulse: a new start, a resume or a continue."""

    pulse_id: str
    persona: Persona | None = None
    playbook: str | None = None
    input: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    answer: Any = None
    mode: Mode = "start"
    recover: bool = False
    """The pulse may be started again or continued after its process died: its input and
    memory writes carry uids derived from the pulse id, and are written once."""
    stored_uids: frozenset[str] = frozenset()
    """For a recoverable pulse: the uids of the messages it had stored before this drive."""
    final: dict[str, Any] = field(default_factory=dict)
    output_schema: list[str] | None = None
    ran: bool = False
    """The graph was started (so there may be checkpoints to remove)."""
    approval_tools: frozenset[str] = frozenset()
    """Tools the pulse asks a person about: the policy it started under."""
    trace: Any = None
    """The drive's spans (a :class:`sea.telemetry.spans.PulseTrace`), when the runtime
    has telemetry."""
    traceparent: str | None = None
    """The W3C ``traceparent`` of the span of the drive that started the pulse (kept in
    its origin: a resumed drive links to it)."""
    thread: str | None = None
    """The persona's memory thread the pulse reads and writes (None: its main thread)."""
    input_uid: str | None = None
    """The uid the stored user message gets (a client's message id); None: a new one."""
    input_metadata: Mapping[str, Any] = field(default_factory=dict)
    new_id: bool = False
    """Its id was made for this drive (:meth:`start` without one): no earlier drive of it
    can have written anything."""
    wrote_volatile: Callable[[], bool] = lambda: True
    """Whether the pulse may have volatile messages to delete when it ends (set by a drive
    that knows nothing was stored before it: then, whether its pulse wrote one)."""
    priority: Priority = "user"
    """How it ranks against other pulses of its persona (:data:`sea.host.turns.PRIORITIES`):
    a pulse of higher priority makes a running one of lower priority yield its turn."""
    """Metadata the stored user message carries (a client's)."""

    @classmethod
    def start(
        cls,
        persona: Persona,
        playbook: str,
        input: str,
        *,
        pulse_id: str | None = None,
        args: Mapping[str, Any] | None = None,
        recover: bool = False,
        thread: str | None = None,
        input_uid: str | None = None,
        input_metadata: Mapping[str, Any] | None = None,
        priority: Priority = "user",
    ) -> Run:
        """A new pulse (a fresh id unless the host gives one).

        Args:
            persona: Whose pulse it is.
            playbook: The top-level playbook's name.
            input: What the user says.
            pulse_id: The pulse's id (default: a new one).
            args: The playbook's arguments beyond ``input``.
            recover: The pulse may be started again or continued after its process died.
            thread: The persona's memory thread it reads and writes (None: the main one).
            input_uid: The stored user message's uid (a client's message id).
            input_metadata: The stored user message's metadata (a client's).
            priority: ``user``, ``autonomous`` or ``scheduled`` (see :class:`Run`).

        Returns:
            The drive that starts the pulse.
        """
        return cls(pulse_id or uuid.uuid4().hex, persona, playbook, input, dict(args or {}),
                   recover=recover, thread=thread, input_uid=input_uid,
                   input_metadata=dict(input_metadata or {}), priority=priority,
                   new_id=pulse_id is None)

    @classmethod
    def resumed(cls, pulse_id: str, answer: Any) -> Run:
        """A waiting pulse driven on with the answer to its approval request."""
        return cls(pulse_id, answer=answer, mode="resume")

    @classmethod
    def continued(cls, pulse_id: str) -> Run:
        """A pulse driven on from its last checkpoint (its process died, or it ended and
        its checkpoints were kept)."""
        return cls(pulse_id, mode="continue")

    @property
    def resume(self) -> bool:
        """The drive answers a waiting pulse."""
        return self.mode == "resume"


def origin_of(run: Run) -> dict[str, Any]:
    """The origin of a new pulse, as the state value ``origin`` keeps it."""
    assert run.persona is not None
    persona = run.persona
    origin: dict[str, Any] = {
        "playbook": run.playbook,
        "input": run.input,
        "approval_tools": sorted(run.approval_tools),
        "recover": run.recover,
        "thread": run.thread,
        "persona": {"id": persona.id, "name": persona.name, "system_prompt": persona.system_prompt},
    }
    if run.traceparent is not None:
        origin["traceparent"] = run.traceparent
    return origin


def restore_origin(run: Run, values: Mapping[str, Any] | None) -> None:
    """Set the resumed ``run``'s persona, playbook and input from its checkpointed state.

    Raises:
        UsageError: the checkpointer has no state of this pulse (it never ran there, or
            it ended and its checkpoints were removed).
    """
    origin = None if values is None else values.get("origin")
    if not isinstance(origin, dict):
        what = "waiting for an answer" if run.resume else "one to continue"
        raise UsageError(
            f"pulse {run.pulse_id!r} is not {what}: the checkpointer does "
            "not know it (it never ran here, or it ended)"
        )
    persona = origin["persona"]
    run.persona = Persona(persona["id"], persona["name"], persona.get("system_prompt", ""))
    run.playbook = str(origin["playbook"])
    run.input = str(origin.get("input", ""))
    run.approval_tools = frozenset(str(t) for t in origin.get("approval_tools") or ())
    run.recover = bool(origin.get("recover"))
    waited = origin.get("traceparent")
    run.traceparent = waited if isinstance(waited, str) else None
    thread = origin.get("thread")
    run.thread = thread if isinstance(thread, str) else None
