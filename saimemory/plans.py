"""Typed records of plans (seed 002 "PlanTool"): what a persona proposed, the action specs that
detail it, who approved which of them, the previews shown and the results of running them.

A :class:`Plan` is stored whole (its :class:`PlanState` included) by
:meth:`~saimemory.base.MessageStore.save_plan`, one row per plan; the nested parts are JSON
(see :mod:`saimemory.plan_codec`). ``version`` is the optimistic-concurrency counter: a plan
read at version *n* can be saved once, as *n + 1*; saving it again from *n* is refused with
:class:`~saimemory.errors.StaleVersionError`. A new plan is saved with ``version=0``.

The store keeps these records and checks their shape; what the statuses mean and which
changes are legal is the engine's business (``sea.engine.plans``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

PlanStatus = Literal[
    "proposed", "pending_review", "approved", "scheduled", "executing", "completed", "aborted"
]
PLAN_STATUSES: tuple[PlanStatus, ...] = (
    "proposed", "pending_review", "approved", "scheduled", "executing", "completed", "aborted"
)

ActionKind = Literal["create", "write", "mkdir", "read", "analyze", "run", "delete"]
ACTION_KINDS: tuple[ActionKind, ...] = (
    "create", "write", "mkdir", "read", "analyze", "run", "delete"
)

Risk = Literal["low", "medium", "high"]
RISKS: tuple[Risk, ...] = ("low", "medium", "high")


@dataclass(frozen=True, slots=True)
class MessageRef:
    """A message a plan was made from: its id (a store id or uid, as text) and its time."""

    message_id: str
    timestamp: str


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """One concrete step of a plan, as the persona wrote it.

    ``path`` is relative to the host's workspace (for ``run``: the working folder, ``""`` or
    ``"."`` for the root); ``content`` is the text a ``create``/``write`` puts in the file,
    or the command line of a ``run``; ``optional`` steps may fail without failing the plan.
    """

    kind: ActionKind
    path: str = ""
    content: str | None = None
    description: str = ""
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Preflight:
    """What a step would do to the workspace as it is now.

    ``fingerprint`` digests what the step's diff is made from (the target's current state
    and the step itself): when it changes between approval and execution, the diff the
    person approved is no longer the diff that would be applied.
    """

    exists: bool
    overwrite: bool
    diff_summary: str
    fingerprint: str = ""


@dataclass(frozen=True, slots=True)
class ActionSpecExt:
    """An action spec with the plan's bookkeeping: its id within the plan, its risk, whether
    it passed validation, its preflight and notes (the validation issues, say)."""

    id: str
    base: ActionSpec
    risk: Risk = "low"
    validated: bool = False
    preflight: Preflight | None = None
    notes: str = ""


@dataclass(frozen=True, slots=True)
class SpecSelection:
    """Which specs of a plan: all of them, or those whose ids are listed."""

    all: bool = False
    ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Approval:
    """One approval: who gave it, when, for which specs, and the preflight fingerprints of
    those specs at that moment (the diffs the approver saw)."""

    approver: str
    timestamp: datetime
    selection: SpecSelection
    actor: str = "user"
    fingerprints: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DiffSummary:
    """What one spec would change: a unified diff (empty when it changes no file), the lines
    it adds and removes, and its risk. ``truncated``: the diff text was cut."""

    spec_id: str
    kind: ActionKind
    path: str
    risk: Risk
    added: int = 0
    removed: int = 0
    diff: str = ""
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class PlanPreview:
    """The preview of a plan (or of a selection of its specs): the files it touches, the
    diff of each spec and a risk score in [0, 1]."""

    files: tuple[str, ...] = ()
    diffs: tuple[DiffSummary, ...] = ()
    risk_score: float = 0.0


@dataclass(frozen=True, slots=True)
class SpecResult:
    """The outcome of running one spec once. ``output``: a read file's text or a command's
    captured output (cut to the host's limit); ``exit_code``: a command's exit status."""

    spec_id: str
    kind: ActionKind
    path: str
    ok: bool
    message: str
    started_at: datetime
    finished_at: datetime
    output: str = ""
    exit_code: int | None = None


@dataclass(frozen=True, slots=True)
class PlanHistoryEntry:
    """One event of a plan's telemetry, kept with the plan (seed 002 "ログ/テレメトリ"):
    its kind (``plan_proposed``, ``approved``...), who did it (``ai``, ``user`` or
    ``system``), the status it left the plan in, when, why, its counts and risk score."""

    kind: str
    actor: str
    status: PlanStatus
    at: datetime
    reason: str = ""
    counts: Mapping[str, int] = field(default_factory=dict)
    risk_score: float = 0.0


MAX_HISTORY = 200
"""The most events a plan keeps (the oldest are dropped beyond it)."""


@dataclass(frozen=True, slots=True)
class PlanState:
    """Where a plan stands: its status, its specs, the selection asked for or approved, every
    approval, the last preview, every run of a spec (in order), the pending approval
    request, if any, and its event history (the newest :data:`MAX_HISTORY` events)."""

    status: PlanStatus = "proposed"
    action_specs: tuple[ActionSpecExt, ...] = ()
    selection: SpecSelection | None = None
    approvals: tuple[Approval, ...] = ()
    previews: PlanPreview | None = None
    results: tuple[SpecResult, ...] = ()
    approval_request: str | None = None
    history: tuple[PlanHistoryEntry, ...] = ()

    def succeeded(self) -> set[str]:
        """The ids of the specs that have run successfully (at least once).

        Returns:
            The ``spec_id`` of every result that is ``ok``.
        """
        return {result.spec_id for result in self.results if result.ok}


@dataclass(frozen=True, slots=True)
class Plan:
    """A plan of one persona, with its state.

    ``created_at`` is timezone-aware and never changes; ``updated_at`` is stamped by the
    store on every save (``None`` on a plan not saved yet); ``version`` counts saves (0: not
    saved yet).
    """

    id: str
    persona: str
    title: str
    content: str
    created_at: datetime
    sources: tuple[MessageRef, ...] = ()
    rationale: str = ""
    tags: tuple[str, ...] = ()
    version: int = 0
    state: PlanState = field(default_factory=PlanState)
    updated_at: datetime | None = None
