"""The plan API of seed 002 Phase 1 for one persona and one workspace: :class:`PlanService`.

Every call reads the plan from the store, checks the call against the lifecycle
(:mod:`sea.engine.plans.lifecycle`), and saves the whole plan back from the version it read,
so two processes changing one plan cannot both win: the loser gets
:class:`~sea.errors.PlanConcurrencyError` and nothing of its change is kept. The store is the
single source of truth; the service keeps nothing between calls.
"""

from __future__ import annotations

import builtins
import dataclasses
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from saimemory.base import MessageStore
from saimemory.errors import InvalidPlanError, NotFoundError, StaleVersionError
from saimemory.plans import (
    MAX_HISTORY,
    RISKS,
    ActionSpec,
    Approval,
    MessageRef,
    Plan,
    PlanPreview,
    PlanState,
    PlanStatus,
    SpecSelection,
)
from sea.engine.plans import fsops
from sea.engine.plans.events import ACTORS, Actor, EventSink, Happened, PlanEvent
from sea.engine.plans.execution import Execution
from sea.engine.plans.lifecycle import require
from sea.engine.plans.policy import PlanPolicy
from sea.engine.plans.preflight import Inspection, inspect_specs, known_diffs
from sea.engine.plans.results import (
    ApprovalRequest,
    ExecutionResult,
    PlanRef,
    ProposeResult,
    ValidationReport,
)
from sea.engine.plans.shown import Shown, changed_since, stale
from sea.engine.plans.specs import (
    SelectionInput,
    SpecInput,
    coerce_selection,
    coerce_spec,
    first_step_id,
    spec_id,
    text_problem,
)
from sea.engine.plans.state import (
    ALL,
    counts,
    remaining,
    specs_by_id,
    with_checked,
)
from sea.engine.tools.workspace import Workspace
from sea.errors import (
    PlanApprovalError,
    PlanConcurrencyError,
    PlanError,
    PlanNotFound,
    StaleApproval,
)

SourceInput = MessageRef | Mapping[str, Any]
"""A plan's source as a caller gives it: the record or ``{"message_id", "timestamp"}``."""


class PlanService:
    """Plans of one persona, carried out in one workspace under one policy.

    Args:
        store: The persona's SAIMemory store (where plans live).
        persona: The persona id.
        workspace: The workspace root (a folder) or a :class:`Workspace` over it.
        policy: The host's limits (:class:`PlanPolicy` defaults when None).
        on_event: Called with every :class:`PlanEvent`, in order (see
            :mod:`sea.engine.plans.events`).
        clock: The time source (timezone-aware); UTC now by default.

    Raises:
        UsageError: ``workspace`` is not an existing folder.
    """

    def __init__(
        self,
        store: MessageStore,
        persona: str,
        workspace: Path | Workspace,
        policy: PlanPolicy | None = None,
        *,
        on_event: EventSink | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.store = store
        self.persona = persona
        self.workspace = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
        self.policy = policy if policy is not None else PlanPolicy()
        self._on_event = on_event
        self._clock = clock if clock is not None else _utc_now

    # -- reads -------------------------------------------------------------------------------

    def get(self, plan_id: str) -> Plan:
        """The plan, its state included. Raises :class:`PlanNotFound`."""
        try:
            return self.store.get_plan(self.persona, plan_id)
        except NotFoundError:
            raise PlanNotFound(
                f"persona {self.persona!r} has no plan {plan_id!r}") from None

    def get_state(self, plan_id: str) -> PlanState:
        """The plan's state. Raises :class:`PlanNotFound`."""
        return self.get(plan_id).state

    def get_current(self) -> PlanRef | None:
        """The persona's current plan (the last proposed, unless cleared), or None."""
        found = self.store.current_plan(self.persona)
        return None if found is None else _ref(found, current=True)

    def clear_current(self) -> None:
        """Leave the persona without a current plan (the plan itself is kept)."""
        self.store.clear_current_plan(self.persona)

    # -- the lifecycle -----------------------------------------------------------------------

    def propose(
        self,
        title: str,
        content: str,
        rationale: str = "",
        sources: Sequence[SourceInput] = (),
        tags: Sequence[str] = (),
        *,
        actor: Actor = "ai",
    ) -> ProposeResult:
        """Store a new plan (``proposed``) and make it the persona's current plan.

        Returns its id and ``first_step_id``: None, no step yet (the first spec's step id
        once specs are set). Raises :class:`PlanError` for a plan the store refuses (empty
        title...).
        """
        _check_actor(actor)
        for name, value in (("title", title), ("content", content), ("rationale", rationale),
                            *(("tag", tag) for tag in tags)):
            problem = text_problem(name, value) if isinstance(value, str) else ""
            if problem:
                raise PlanError(f"the plan cannot be proposed: {problem}")
        plan = Plan(
            id=uuid.uuid4().hex, persona=self.persona, title=title, content=content,
            created_at=self._clock(), sources=tuple(_source(item) for item in sources),
            rationale=rationale, tags=tuple(tags),
        )
        saved = self._save(plan, plan.state,
                           Happened("plan_proposed", actor, "", counts(plan.state)),
                           make_current=True)
        return ProposeResult(saved.id, first_step_id(saved.id, saved.state.action_specs))

    def set_action_specs(
        self, plan_id: str, specs: Sequence[SpecInput], *, actor: Actor = "ai"
    ) -> ValidationReport:
        """Give the plan its specs (replacing any), validated and preflighted in order.

        The plan is ``pending_review`` afterwards whether or not they are valid (invalid ones
        are to be fixed by setting specs again). Specs are numbered ``"1"``, ``"2"``...;
        results of earlier specs are dropped, approvals kept as history. A spec that is not
        a spec at all (unknown kind or field, wrong type) or too many specs store nothing of
        the new specs.
        """
        _check_actor(actor)
        plan = self.get(plan_id)
        require("set_action_specs", plan.id, plan.state.status)
        parsed, issues = self._parse(specs)
        if issues:
            state = dataclasses.replace(plan.state, status="pending_review")
            self._save(plan, state, Happened("specs_set", actor,
                                             f"not valid: {len(issues)} issue(s)",
                                             counts(state, issues=len(issues))))
            return ValidationReport(False, tuple(issues), ())
        inspection = inspect_specs(self.workspace, self.policy, parsed,
                                   known_diffs(plan.state.action_specs, plan.state.previews))
        normalized = tuple(item.spec for item in inspection.checked)
        state = PlanState(status="pending_review", action_specs=normalized,
                          approvals=plan.state.approvals, previews=inspection.preview(),
                          history=plan.state.history)
        reason = "valid" if inspection.ok else f"not valid: {len(inspection.issues)} issue(s)"
        self._save(plan, state, Happened("specs_set", actor, reason,
                                         counts(state, issues=len(inspection.issues)),
                                         inspection.preview().risk_score))
        return ValidationReport(inspection.ok, inspection.issues, normalized)

    def preview(self, plan_id: str, selection: SelectionInput | None = None) -> PlanPreview:
        """The preview (files, unified diffs, risk score) of the selected specs still to run
        (by default the plan's selection, else all), against the workspace now; stored as the
        plan's preview."""
        plan = self.get(plan_id)
        require("preview", plan.id, plan.state.status)
        chosen = (coerce_selection(selection) if selection is not None
                  else plan.state.selection or ALL)
        inspection = self._inspect(plan.state, remaining(plan.state, chosen))
        state = with_checked(plan.state, inspection)
        if changed_since(plan.state, state):  # the open request no longer shows the plan
            state = dataclasses.replace(state, approval_request=None)
        saved = self._save(plan, state)
        assert saved.state.previews is not None
        return saved.state.previews

    def request_approval(
        self, plan_id: str, selection: SelectionInput = ALL, *, actor: Actor = "ai",
        reason: str = "",
    ) -> ApprovalRequest:
        """Ask for an approval of the selected specs still to run: stores the selection and
        their fresh preview, and says which are high risk and whether a person must answer.

        Raises:
            PlanApprovalError: the plan's specs are not all valid, the selection names no
                spec or unknown ones, or nothing selected is left to run.
        """
        _check_actor(actor)
        plan = self.get(plan_id)
        require("request_approval", plan.id, plan.state.status)
        chosen, ids, inspection = self._approvable(plan, selection)
        request_id = uuid.uuid4().hex
        state = dataclasses.replace(with_checked(plan.state, inspection), selection=chosen,
                                    approval_request=request_id)
        preview = inspection.preview()
        high = tuple(item.spec.id for item in inspection.checked if item.spec.risk == "high")
        self._save(plan, state, Happened("approval_requested", actor, reason,
                                         counts(state, selected=len(ids)), preview.risk_score))
        fingerprints = {item.spec.id: item.spec.preflight.fingerprint
                        for item in inspection.checked if item.spec.preflight is not None}
        return ApprovalRequest(request_id, plan.id, chosen, ids, preview, high,
                               self._needs_person(inspection), fingerprints)

    def approve(
        self, plan_id: str, approver: str, selection: SelectionInput, *, actor: Actor = "user",
        reason: str = "", shown: Shown | None = None,
    ) -> PlanState:
        """Approve the selected specs still to run (``approved``), recording who, when, which
        and the fingerprints of their diffs now.

        ``shown``: what the approver was shown (:mod:`sea.engine.plans.shown`); every host
        that shows a person a plan passes it. The approval is then refused
        (:class:`StaleApproval`) and the plan sent back for review (``pending_review``,
        event ``approval_refused``) when that request is no longer the plan's open one or a
        selected spec's diff or risk is not the one shown.

        ``actor`` other than ``user`` is an automatic approval: allowed only up to the
        policy's ``auto_approve_up_to`` risk, never for a high-risk spec.

        Raises:
            PlanApprovalError: as :meth:`request_approval`; also when a spec's diff changed
                since the plan's last preview of this selection (ask again), or an automatic
                approval covers a risk it may not.
            StaleApproval: as said of ``shown``.
        """
        _check_actor(actor)
        if not approver.strip():
            raise PlanApprovalError("an approval needs the approver's name")
        plan = self.get(plan_id)
        require("approve", plan.id, plan.state.status)
        chosen, ids, inspection = self._approvable(plan, selection)
        if shown is not None:
            self._check_shown(plan, shown, inspection, actor)
        self._check_unchanged(plan, ids, inspection)
        if actor != "user" and self._needs_person(inspection):
            raise PlanApprovalError(self._auto_refusal(inspection))
        fingerprints = {item.spec.id: item.spec.preflight.fingerprint
                        for item in inspection.checked if item.spec.preflight is not None}
        approval = Approval(approver, self._clock(), chosen, actor, fingerprints)
        state = dataclasses.replace(
            with_checked(plan.state, inspection), status="approved", selection=chosen,
            approvals=(*plan.state.approvals, approval), approval_request=None)
        saved = self._save(plan, state, Happened("approved", actor, reason,
                                                 counts(state, selected=len(ids)),
                                                 inspection.preview().risk_score))
        return saved.state

    def reject(self, plan_id: str, reason: str = "", *, actor: Actor = "user") -> PlanState:
        """Send the plan back (``proposed``): its specs need setting again before another
        approval. Specs, approvals and results are kept as history."""
        _check_actor(actor)
        plan = self.get(plan_id)
        require("reject", plan.id, plan.state.status)
        state = dataclasses.replace(plan.state, status="proposed", selection=None,
                                    approval_request=None)
        saved = self._save(plan, state, Happened("sent_back", actor, reason, counts(state)))
        return saved.state

    def mark_pending(
        self, plan_id: str, pending: bool = True, *, actor: Actor = "user"
    ) -> PlanState:
        """Queue an approved plan for execution (``scheduled``, waiting for the go-ahead), or
        with ``pending=False`` take it off the queue (``approved`` again)."""
        _check_actor(actor)
        plan = self.get(plan_id)
        require("mark_pending" if pending else "mark_pending(pending=False)", plan.id,
                plan.state.status)
        status: PlanStatus = "scheduled" if pending else "approved"
        state = dataclasses.replace(plan.state, status=status)
        happened = (Happened("scheduled", actor, "", counts(state)),) if pending else ()
        return self._save(plan, state, *happened).state

    def execute(self, plan_id: str, *, actor: Actor = "user") -> ExecutionResult:
        """Run the approved specs that have not run successfully yet, in order.

        The preflight runs again first: when a spec's diff is not the one approved, nothing
        runs, the plan goes back to ``pending_review`` and the outcome is ``conflict`` (ask
        for the approval again). Otherwise the plan is ``executing`` while its specs run
        (each result saved as it comes), then ``completed``, or ``aborted`` at the first
        failing spec that is not optional (an optional one's failure is recorded and the run
        goes on). Executing an aborted plan runs only what remains.
        """
        _check_actor(actor)
        if not fsops.supported():
            raise PlanError("executing plans needs a POSIX system (os.open with dir_fd)")
        plan = self.get(plan_id)
        require("execute", plan.id, plan.state.status)
        return Execution(self, plan, actor).run()

    def abort(self, plan_id: str, reason: str, *, actor: Actor = "system") -> PlanState:
        """Mark an ``executing`` plan ``aborted`` (a run whose process died; a run still going
        in another process stops at its next save). What ran successfully stays recorded."""
        _check_actor(actor)
        plan = self.get(plan_id)
        require("abort", plan.id, plan.state.status)
        state = dataclasses.replace(plan.state, status="aborted")
        return self._save(plan, state, Happened("aborted", actor, reason, counts(state))).state

    def list(self, status: PlanStatus | None = None) -> builtins.list[PlanRef]:
        """The persona's plans (of ``status``, when given), newest first."""
        current = self.store.current_plan(self.persona)
        current_id = current.id if current is not None else None
        return [_ref(plan, current=plan.id == current_id)
                for plan in self.store.list_plans(self.persona, status=status)]

    # -- helpers (also used by Execution) ----------------------------------------------------

    def now(self) -> datetime:
        """The service's clock."""
        return self._clock()

    def save(self, plan: Plan, state: PlanState, *happened: Happened) -> Plan:
        """Save ``plan`` with ``state`` from the version it was read at, recording what
        happened in its history; then send those events to ``on_event``."""
        return self._save(plan, state, *happened)

    def inspect(self, state: PlanState, ids: Iterable[str]) -> Inspection:
        """Validate and preflight the specs with these ids, in plan order."""
        return self._inspect(state, ids)

    def _inspect(self, state: PlanState, ids: Iterable[str]) -> Inspection:
        specs = specs_by_id(state, ids)
        return inspect_specs(self.workspace, self.policy,
                             [(spec.id, spec.base) for spec in specs],
                             known_diffs(state.action_specs, state.previews))

    def _save(self, plan: Plan, state: PlanState, *happened: Happened,
              make_current: bool = False) -> Plan:
        """Save the plan with ``state`` and the history entries of ``happened`` (in the same
        write), then send ``happened`` to ``on_event`` as :class:`PlanEvent` records."""
        now = self._clock()
        entries = tuple(item.entry(state.status, now) for item in happened)
        if entries:
            state = dataclasses.replace(
                state, history=(*state.history, *entries)[-MAX_HISTORY:])
        try:
            saved = self.store.save_plan(dataclasses.replace(plan, state=state),
                                         make_current=make_current)
        except StaleVersionError as exc:
            raise PlanConcurrencyError(
                f"plan {plan.id} was changed by someone else meanwhile; nothing of this call "
                f"was saved. Read it again ({exc.message})") from None
        except InvalidPlanError as exc:
            raise PlanError(f"plan {plan.id} cannot be stored: {exc.message}") from None
        if self._on_event is not None:
            for entry in entries:
                self._on_event(PlanEvent.of(entry, saved.id, saved.persona))
        return saved

    def _parse(
        self, specs: Sequence[SpecInput]
    ) -> tuple[builtins.list[tuple[str, ActionSpec]], builtins.list[str]]:
        """``(id, ActionSpec)`` pairs, or the issues that keep them from being specs."""
        issues: builtins.list[str] = []
        parsed: builtins.list[tuple[str, ActionSpec]] = []
        if not specs:
            issues.append("a plan needs at least one spec")
        if len(specs) > self.policy.max_specs:
            issues.append(f"{len(specs)} specs, more than the limit of {self.policy.max_specs}")
        for position, item in enumerate(specs):
            spec, problem = coerce_spec(item)
            if spec is None:
                issues.append(f"spec {spec_id(position)}: {problem}")
            else:
                parsed.append((spec_id(position), spec))
        return parsed, issues

    def _approvable(
        self, plan: Plan, selection: SelectionInput
    ) -> tuple[SpecSelection, tuple[str, ...], Inspection]:
        """The selection, the selected specs still to run and their fresh inspection."""
        invalid = [spec.id for spec in plan.state.action_specs if not spec.validated]
        if invalid or not plan.state.action_specs:
            raise PlanApprovalError(
                f"plan {plan.id} has specs that did not pass validation "
                f"({', '.join(invalid) or 'it has no specs'}); set its specs again")
        chosen = coerce_selection(selection)
        ids = remaining(plan.state, chosen)
        if not ids:
            raise PlanApprovalError(f"every selected spec of plan {plan.id} has run already")
        inspection = self._inspect(plan.state, ids)
        if not inspection.ok:
            raise PlanApprovalError(
                "the workspace changed and some selected specs are no longer valid: "
                + "; ".join(inspection.issues) + ". Set the specs again (reject first)")
        return chosen, ids, inspection

    def _check_unchanged(self, plan: Plan, ids: tuple[str, ...],
                         inspection: Inspection) -> None:
        """Refuse an approval whose specs' diffs changed since the last preview of exactly
        these specs (what the approver was shown)."""
        state = plan.state
        shown = state.previews
        if shown is None or tuple(diff.spec_id for diff in shown.diffs) != ids:
            return
        before = {spec.id: spec.preflight for spec in state.action_specs}
        changed = [item.spec.id for item in inspection.checked
                   if item.spec.preflight != before.get(item.spec.id)]
        if changed:
            raise PlanApprovalError(
                f"spec(s) {', '.join(changed)} of plan {plan.id} changed since they "
                "were shown for approval; request the approval again")

    def _check_shown(self, plan: Plan, shown: Shown, inspection: Inspection,
                     actor: Actor) -> None:
        """Refuse an approval of anything but what was shown, sending the plan back for
        review (an open request of someone else's is left open)."""
        why = stale(plan.state, shown, inspection)
        if not why:
            return
        keep = plan.state.approval_request not in (None, shown.request_id)
        state = dataclasses.replace(
            plan.state, status="pending_review", selection=None,
            approval_request=plan.state.approval_request if keep else None)
        self._save(plan, state, Happened("approval_refused", actor, why, counts(state)))
        raise StaleApproval(
            f"plan {plan.id}: nothing approved: {why}. The plan is back for review: see "
            "what it would do now (sea plan preview) and approve what you are shown")

    def _needs_person(self, inspection: Inspection) -> bool:
        level = self.policy.auto_approve_up_to
        if level is None:
            return True
        limit = RISKS.index(level)
        return any(item.spec.risk == "high" or RISKS.index(item.spec.risk) > limit
                   for item in inspection.checked)

    def _auto_refusal(self, inspection: Inspection) -> str:
        high = [item.spec.id for item in inspection.checked if item.spec.risk == "high"]
        if high:
            return (f"high-risk spec(s) {', '.join(high)} always need a person's approval; "
                    "an automatic approval cannot cover them")
        level = self.policy.auto_approve_up_to
        if level is None:
            return "the host allows no automatic approval: a person must approve"
        return f"the host allows automatic approval only up to {level} risk"


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _check_actor(actor: str) -> None:
    if actor not in ACTORS:
        raise PlanError(f"actor must be one of {', '.join(ACTORS)}, got {actor!r}")


def _source(item: SourceInput) -> MessageRef:
    if isinstance(item, MessageRef):
        return item
    try:
        return MessageRef(message_id=str(item["message_id"]), timestamp=str(item["timestamp"]))
    except (KeyError, TypeError):
        raise PlanError(
            f"a source is {{'message_id': ..., 'timestamp': ...}}, got {item!r:.80}") from None


def _ref(plan: Plan, *, current: bool) -> PlanRef:
    return PlanRef(plan.id, plan.title, plan.state.status, plan.created_at, plan.updated_at,
                   plan.version, len(plan.state.action_specs), current)
