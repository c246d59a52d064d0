"""The plan lifecycle, in one table: which call each status allows, and where it leads.

======================================  =====================================================
call                                    allowed in → status after
======================================  =====================================================
``set_action_specs``                    proposed, pending_review → pending_review (even when
                                        validation fails: the issues are to be fixed there)
``preview``                             pending_review, approved, scheduled, aborted →
                                        unchanged (the preview is stored)
``request_approval``                    pending_review, approved, scheduled, aborted →
                                        unchanged (the selection and preview are stored)
``approve``                             pending_review, approved, scheduled, aborted →
                                        approved (pending_review when it approves what
                                        was not shown: :mod:`sea.engine.plans.shown`)
``reject`` (send back)                  pending_review, approved, scheduled, aborted →
                                        proposed
``mark_pending`` (pending=True)         approved → scheduled
``mark_pending(pending=False)``         scheduled → approved
``execute``                             approved, scheduled, aborted → executing, then
                                        completed or aborted; on a conflict pending_review
``abort``                               executing → aborted
======================================  =====================================================

``completed`` allows no lifecycle call. Reads (``get``, ``get_state``, ``list``,
``get_current``) and ``clear_current`` are allowed in every status.
"""

from __future__ import annotations

from dataclasses import dataclass

from saimemory.plans import PlanStatus
from sea.errors import PlanTransitionError


@dataclass(frozen=True, slots=True)
class Transition:
    """One row of the table: a call, the statuses it is allowed in, and what follows."""

    call: str
    allowed_in: tuple[PlanStatus, ...]
    leads_to: str


_REVIEWABLE: tuple[PlanStatus, ...] = ("pending_review", "approved", "scheduled", "aborted")

TRANSITIONS: tuple[Transition, ...] = (
    Transition("set_action_specs", ("proposed", "pending_review"), "pending_review"),
    Transition("preview", _REVIEWABLE, "unchanged"),
    Transition("request_approval", _REVIEWABLE, "unchanged"),
    Transition("approve", _REVIEWABLE, "approved"),
    Transition("reject", _REVIEWABLE, "proposed"),
    Transition("mark_pending", ("approved",), "scheduled"),
    Transition("mark_pending(pending=False)", ("scheduled",), "approved"),
    Transition("execute", ("approved", "scheduled", "aborted"),
               "executing, then completed or aborted (pending_review on a conflict)"),
    Transition("abort", ("executing",), "aborted"),
)
CALLS: dict[str, Transition] = {transition.call: transition for transition in TRANSITIONS}


def allowed_calls(status: PlanStatus) -> tuple[str, ...]:
    """The lifecycle calls a plan in ``status`` allows, in table order."""
    return tuple(t.call for t in TRANSITIONS if status in t.allowed_in)


def require(call: str, plan_id: str, status: PlanStatus) -> None:
    """Check that ``call`` is allowed on a plan in ``status``.

    Raises:
        PlanTransitionError: it is not; the message names the status and the calls it allows.
        KeyError: ``call`` is not a lifecycle call (a programming error).
    """
    if status in CALLS[call].allowed_in:
        return
    allowed = allowed_calls(status)
    listed = ", ".join(allowed) if allowed else "none (the plan is finished)"
    hint = {
        "proposed": "; give it action specs first",
        "pending_review": "; it needs an approval first",
        "executing": "; it is being executed (abort it if that run died)",
        "completed": "; propose a new plan for more work",
    }.get(status, "")
    raise PlanTransitionError(
        f"cannot {call} plan {plan_id}: it is {status}; the calls allowed when {status} are: "
        f"{listed}{hint}",
        plan_id=plan_id, status=status, call=call, allowed=allowed,
    )
