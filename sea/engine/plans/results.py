"""What the plan service's calls return (frozen records; ``saimemory.plan_codec.to_jsonable``
gives any of them as JSON values, for tools and traces)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from saimemory.plans import ActionSpecExt, PlanPreview, PlanStatus, SpecResult, SpecSelection


@dataclass(frozen=True, slots=True)
class ProposeResult:
    """A new plan's id and the step id of its first spec: None, since a new plan has no spec
    yet ("no step yet"; :func:`~sea.engine.plans.specs.first_step_id`)."""

    plan_id: str
    first_step_id: str | None


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """The outcome of checking a plan's specs: ``ok`` when every spec is valid; ``issues``
    says what is wrong, each naming its spec (``spec 2 (write notes/a.md): ...``);
    ``normalized`` holds the specs as stored (paths normalized, ids, risks, preflights,
    ``validated`` per spec, an invalid spec's issues in its ``notes``)."""

    ok: bool
    issues: tuple[str, ...]
    normalized: tuple[ActionSpecExt, ...]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What a person is asked to approve: the selected specs (in plan order), their preview,
    the high-risk ones among them, and whether a person must answer (always, when a spec is
    high risk or the host allows no automatic approval for these risks)."""

    request_id: str
    plan_id: str
    selection: SpecSelection
    spec_ids: tuple[str, ...]
    preview: PlanPreview
    high_risk: tuple[str, ...]
    needs_person: bool
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    """Spec id → the fingerprint of the diff shown (see :mod:`sea.engine.plans.shown`)."""


@dataclass(frozen=True, slots=True)
class SpecConflict:
    """A selected spec whose diff is no longer the one approved (or that became invalid)."""

    spec_id: str
    path: str
    detail: str


ExecutionOutcome = Literal["completed", "aborted", "conflict"]


@dataclass(frozen=True, slots=True)
class ExecutionResult:
    """One ``execute`` call: ``overall_success`` when the plan completed; ``results`` are the
    specs this call ran, in order; ``conflicts`` (outcome ``conflict``: nothing ran, the plan
    is back in ``pending_review`` for a new approval); ``remaining``: the selected specs still
    to run (after an abort, the next ``execute`` runs exactly these)."""

    overall_success: bool
    outcome: ExecutionOutcome
    status: PlanStatus
    results: tuple[SpecResult, ...]
    started_at: datetime
    finished_at: datetime
    conflicts: tuple[SpecConflict, ...] = ()
    remaining: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PlanRef:
    """A plan in a list: enough to name it and tell where it stands."""

    plan_id: str
    title: str
    status: PlanStatus
    created_at: datetime
    updated_at: datetime | None
    version: int
    spec_count: int
    is_current: bool
