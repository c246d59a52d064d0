"""Plans (seed 002 "PlanTool", Phase 1): propose, detail, validate, preview, approve and
execute, with the plan kept in SAIMemory as the single source of truth.

A host (the runtime, a CLI) makes one :class:`PlanService` per persona and workspace::

    service = PlanService(store, "aoi", Path("~/work").expanduser(),
                          PlanPolicy(run_allowlist=frozenset({"pytest"}),
                                     run_path=os.environ["PATH"]),  # looked up now, once
                          on_event=events.append)
    made = service.propose("Game outline", "1. notes/outline.md ...", rationale="asked")
    report = service.set_action_specs(made.plan_id, [
        {"kind": "create", "path": "notes/outline.md", "content": "# Outline\\n"},
    ])                                            # ValidationReport(ok, issues, normalized)
    request = service.request_approval(made.plan_id, {"all": True})   # preview, risks
    service.approve(made.plan_id, "ken", {"ids": ["1"]})   # a person's answer
    result = service.execute(made.plan_id)        # ExecutionResult (or outcome "conflict")

The pieces:

* records (``saimemory.plans``): :class:`~saimemory.plans.Plan`,
  :class:`~saimemory.plans.PlanState`, :class:`~saimemory.plans.ActionSpec`,
  :class:`~saimemory.plans.ActionSpecExt`, selections, approvals, previews, results;
* :mod:`.lifecycle`: the state machine, one table; an illegal call raises
  :class:`~sea.errors.PlanTransitionError` (SEA584) naming the status and allowed calls;
* :mod:`.preflight`: validation, risk and preflight in the workspace (confinement by
  :meth:`sea.engine.tools.workspace.Workspace.locate`), under a :class:`PlanPolicy`;
* :mod:`.runner` and :mod:`.fsops`: carrying a spec out (atomic writes that cannot leave the
  workspace; ``run`` without a shell, allow-listed, with a timeout);
* :mod:`.commands` and :mod:`.process`: a ``run`` spec's command line checked (no argument
  naming a path outside the workspace, the binary fixed when the policy was built) and run
  (the policy's environment only, behind the host's sandbox wrapper, its process group killed
  at the end, its output read a piece at a time up to the cap);
* :mod:`.events`: :class:`PlanEvent` telemetry handed to ``on_event`` and kept with the plan
  (``PlanState.history``, written in the same save as the change it records);
* :mod:`.export`: :func:`export_plan` / :func:`export_plans` write seed 002's files;
* :mod:`.tools`: the API as langchain-core tools (:class:`~.tools.PlanToolkit`), and the gate
  that makes ``plan_request_approval`` wait for a person in a pulse;
* :mod:`.memory`: plan memory (seed 001), the active plan's summary for prompts.

Ids: a plan id is a UUID (32 hex digits); spec ids are positions (``"1"``, ``"2"``...);
a step id is ``<plan_id>:<spec id>``. ``first_step_id`` is the first spec's step id, or
None while the plan has no spec ("no step yet"): ``propose`` returns None, the plan tools'
``plan_set_action_specs`` and ``plan_get_state`` return it once specs are set.

Errors (all :class:`~sea.errors.PlanError`, SEA582): :class:`~sea.errors.PlanNotFound`
(SEA583), :class:`~sea.errors.PlanTransitionError` (SEA584),
:class:`~sea.errors.PlanApprovalError` (SEA585), :class:`~sea.errors.PlanConcurrencyError`
(SEA586). A failed spec is a result, never an exception.
"""

from __future__ import annotations

from sea.engine.plans.events import ACTORS, Actor, EventSink, Happened, PlanEvent, PlanEventKind
from sea.engine.plans.export import export_plan, export_plans
from sea.engine.plans.lifecycle import TRANSITIONS, allowed_calls
from sea.engine.plans.policy import PlanPolicy
from sea.engine.plans.results import (
    ApprovalRequest,
    ExecutionResult,
    PlanRef,
    ProposeResult,
    SpecConflict,
    ValidationReport,
)
from sea.engine.plans.service import PlanService
from sea.engine.plans.specs import first_step_id, step_id

__all__ = [
    "ACTORS",
    "TRANSITIONS",
    "Actor",
    "ApprovalRequest",
    "EventSink",
    "Happened",
    "ExecutionResult",
    "PlanEvent",
    "PlanEventKind",
    "PlanPolicy",
    "PlanRef",
    "PlanService",
    "ProposeResult",
    "SpecConflict",
    "ValidationReport",
    "allowed_calls",
    "export_plan",
    "export_plans",
    "first_step_id",
    "step_id",
]
