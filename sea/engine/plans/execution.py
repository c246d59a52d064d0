"""One ``execute`` call of a plan: the preflight again, the conflict check against the last
approval, then the specs in order, each result saved as it comes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime
from typing import Literal, Protocol

from saimemory.plans import Plan, PlanState, SpecResult
from sea.engine.plans.events import Actor, Happened
from sea.engine.plans.policy import PlanPolicy
from sea.engine.plans.preflight import Inspection
from sea.engine.plans.results import ExecutionResult
from sea.engine.plans.runner import run_spec
from sea.engine.plans.state import conflicts, counts, remaining, succeeded, with_checked
from sea.engine.tools.workspace import Workspace
from sea.errors import PlanApprovalError


class Host(Protocol):
    """What an execution needs of its plan service."""

    workspace: Workspace
    policy: PlanPolicy

    def now(self) -> datetime:
        """The time now."""
        ...

    def save(self, plan: Plan, state: PlanState, *happened: Happened) -> Plan:
        """Save the plan with this state from the version it was read at, recording (and
        then sending) the events that happened."""
        ...

    def inspect(self, state: PlanState, ids: Iterable[str]) -> Inspection:
        """Validate and preflight these specs, in plan order."""
        ...


class Execution:
    """Carries out one ``execute`` call (see ``PlanService.execute``)."""

    def __init__(self, service: Host, plan: Plan, actor: Actor) -> None:
        self.service = service
        self.plan = plan
        self.actor = actor
        self.started = service.now()
        self.risk_score = 0.0

    def run(self) -> ExecutionResult:
        """Check for conflicts, then run what remains; the outcome."""
        state = self.plan.state
        if not state.approvals or state.selection is None:
            raise PlanApprovalError(f"plan {self.plan.id} has no approval to execute")
        approval = state.approvals[-1]
        ids = remaining(state, approval.selection)
        if not ids:
            return self._finish([], ())
        inspection = self.service.inspect(state, ids)
        self.risk_score = inspection.preview().risk_score
        found = conflicts(inspection, approval)
        if found:
            checked = dataclasses.replace(with_checked(state, inspection),
                                          status="pending_review", approval_request=None)
            self.plan = self.service.save(self.plan, checked, Happened(
                "conflict", "system",
                "changed since the approval: " + ", ".join(c.spec_id for c in found),
                counts(checked, conflicts=len(found), remaining=len(ids)),
                inspection.preview().risk_score))
            return ExecutionResult(False, "conflict", "pending_review", (), self.started,
                                   self.service.now(), found, ids)
        self.plan = self.service.save(self.plan,
                                      dataclasses.replace(state, status="executing"))
        ran: list[SpecResult] = []
        for item in inspection.checked:
            result = run_spec(self.service.workspace, self.service.policy, item.spec,
                              self.service.now)
            ran.append(result)
            self.plan = self.service.save(self.plan, dataclasses.replace(
                self.plan.state, results=(*self.plan.state.results, result)))
            if not result.ok and not item.spec.base.optional:
                break
        return self._finish(ran, ids)

    def _finish(self, ran: list[SpecResult], ids: tuple[str, ...]) -> ExecutionResult:
        """Save the final status, send the events and say how it went."""
        state = self.plan.state
        done = succeeded(state)
        failed_required = [r for r in ran if not r.ok and not self._optional(r.spec_id)]
        status: Literal["completed", "aborted"] = "aborted" if failed_required else "completed"
        final = dataclasses.replace(state, status=status)
        left = tuple(item for item in ids if item not in done) if failed_required else ()
        ok_count = sum(1 for r in ran if r.ok)
        happened = []
        if ran:
            happened.append(Happened("executed", self.actor, "",
                                     counts(final, ran=len(ran), succeeded=ok_count,
                                            failed=len(ran) - ok_count), self.risk_score))
        reason = (f"spec {failed_required[0].spec_id} failed: {failed_required[0].message}"
                  if failed_required else "")
        happened.append(Happened(status, "system", reason, counts(final, remaining=len(left))))
        self.plan = self.service.save(self.plan, final, *happened)
        return ExecutionResult(not failed_required, status, status, tuple(ran), self.started,
                               self.service.now(), (), left)

    def _optional(self, spec_id: str) -> bool:
        return any(spec.base.optional for spec in self.plan.state.action_specs
                   if spec.id == spec_id)
