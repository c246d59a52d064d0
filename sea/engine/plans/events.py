"""The telemetry of plans (seed 002 "ログ/テレメトリ"), as plain records.

Every lifecycle call of :class:`~sea.engine.plans.service.PlanService` that changes a plan
makes one or more :class:`PlanEvent` and hands each to the service's ``on_event`` callback (the
runtime turns them into typed runtime events, trace entries and log lines). Kinds:

* ``plan_proposed`` (``propose``), ``specs_set`` (``set_action_specs``; ``reason`` tells
  whether validation passed), ``approval_requested`` (``request_approval``), ``approved``
  (``approve``), ``executed`` (an ``execute`` that ran specs: counts of what it ran),
  ``completed`` and ``aborted`` (the plan reached that status), as in the seed;
* ``sent_back`` (``reject``), ``conflict`` (an ``execute`` that found a diff changed since
  approval and ran nothing), ``scheduled`` (``mark_pending``), ``approval_refused`` (an
  approval of something other than what was shown, :mod:`sea.engine.plans.shown`: the plan
  went back to ``pending_review``): the transitions the seed's list does not name.

``counts`` always has ``specs`` (specs in the plan) and ``files`` (paths the specs concerned
touch); some kinds add more (``selected``, ``succeeded``, ``failed``, ``issues``,
``conflicts``, ``remaining``).

Every event is also kept with the plan, in the same save that makes the change
(``PlanState.history``, the newest :data:`saimemory.plans.MAX_HISTORY`), so the store holds
a plan's telemetry for any later reader (``sea plan show``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast

from saimemory.plans import PlanHistoryEntry, PlanStatus

Actor = Literal["ai", "user", "system"]
ACTORS: tuple[Actor, ...] = ("ai", "user", "system")

PlanEventKind = Literal[
    "plan_proposed", "specs_set", "approval_requested", "approved", "executed", "completed",
    "aborted", "sent_back", "conflict", "scheduled", "approval_refused",
]


@dataclass(frozen=True, slots=True)
class PlanEvent:
    """One thing that happened to a plan: who did it (``actor``), why, with what counts and
    the risk score of the specs concerned, and the status it left the plan in."""

    kind: PlanEventKind
    plan_id: str
    persona: str
    actor: Actor
    status: PlanStatus
    at: datetime
    reason: str = ""
    counts: Mapping[str, int] = field(default_factory=dict)
    risk_score: float = 0.0

    @classmethod
    def of(cls, entry: PlanHistoryEntry, plan_id: str, persona: str) -> PlanEvent:
        """The event a stored history entry of plan ``plan_id`` records."""
        return cls(kind=cast(PlanEventKind, entry.kind), plan_id=plan_id, persona=persona,
                   actor=cast(Actor, entry.actor), status=entry.status, at=entry.at,
                   reason=entry.reason, counts=dict(entry.counts), risk_score=entry.risk_score)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (for structured logs and traces)."""
        return {
            "kind": self.kind,
            "plan_id": self.plan_id,
            "persona": self.persona,
            "actor": self.actor,
            "status": self.status,
            "at": self.at.isoformat(),
            "reason": self.reason,
            "counts": dict(self.counts),
            "risk_score": self.risk_score,
        }

    def describe(self) -> str:
        """One human-readable line (for a console)."""
        counts = ", ".join(f"{key} {value}" for key, value in self.counts.items())
        why = f": {self.reason}" if self.reason else ""
        return (f"plan {self.plan_id} {self.kind} by {self.actor} → {self.status} "
                f"({counts}; risk {self.risk_score:.2f}){why}")


@dataclass(frozen=True, slots=True)
class Happened:
    """An event about to be recorded: what a lifecycle call did, before the save that keeps
    it (the status and time are the save's)."""

    kind: PlanEventKind
    actor: Actor
    reason: str = ""
    counts: Mapping[str, int] = field(default_factory=dict)
    risk_score: float = 0.0

    def entry(self, status: PlanStatus, at: datetime) -> PlanHistoryEntry:
        """The history entry of this event, leaving the plan in ``status`` at ``at``."""
        return PlanHistoryEntry(self.kind, self.actor, status, at, self.reason,
                                dict(self.counts), self.risk_score)


EventSink = Callable[[PlanEvent], None]
"""Where a service sends its events."""
