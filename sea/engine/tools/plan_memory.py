"""Plan memory (seed 001): the persona's active plan as a short summary with the seed's
instruction, for the prompts of routers and planners.

The store is the source (the persona's current plan), so the summary is the same across
pulses and process restarts. A plan is *in progress* when it is current and not completed.
:func:`plan_memory` gives::

    {"active": true, "plan_id": "...", "title": "Game outline", "status": "approved",
     "next_specs": ["1 create notes/outline.md (low)"],
     "summary": "Plan in progress: \\"Game outline\\" (approved). Next: 1 create ...",
     "instruction": "Instruction: the plan above is in progress. ...",
     "note": summary + "\\n" + instruction}

or, with no plan in progress, ``active`` false, ids and title null, the no-plan instruction
(and the last plan, if one was completed, named in the summary).
"""

from __future__ import annotations

from typing import Any

from saimemory.plans import Plan

IN_PROGRESS_INSTRUCTION = (
    "Instruction: the plan above is in progress. Consider whether the user's request "
    "continues it or is related to it; propose a new plan only if the user clearly asks for "
    "one."
)
"""Seed 001's instruction when a plan is in progress."""

NO_PLAN_INSTRUCTION = (
    "Instruction: no long-term plan is in progress. If the user's request is complex "
    "(several files or steps), consider proposing a new plan."
)
"""Seed 001's instruction when no plan is in progress."""

MAX_NEXT_SPECS = 5
"""The most upcoming specs a summary names."""


def plan_memory(plan: Plan | None) -> dict[str, Any]:
    """The memory of ``plan`` (the persona's current plan, or None), as JSON data."""
    if plan is None or plan.state.status == "completed":
        summary = "No plan is in progress."
        if plan is not None:
            summary += f" The last plan, {_quoted(plan.title)}, is completed."
        return {"active": False, "plan_id": None, "title": None, "status": None,
                "next_specs": [], "summary": summary, "instruction": NO_PLAN_INSTRUCTION,
                "note": f"{summary}\n{NO_PLAN_INSTRUCTION}"}
    upcoming = next_specs(plan)
    if upcoming:
        shown = "; ".join(upcoming[:MAX_NEXT_SPECS])
        more = len(upcoming) - MAX_NEXT_SPECS
        steps = f"Next: {shown}" + (f"; and {more} more." if more > 0 else ".")
    else:
        steps = "It has no action specs yet."
    summary = (f"Plan in progress: {_quoted(plan.title)} ({plan.state.status}). {steps}")
    return {"active": True, "plan_id": plan.id, "title": plan.title,
            "status": plan.state.status, "next_specs": upcoming, "summary": summary,
            "instruction": IN_PROGRESS_INSTRUCTION,
            "note": f"{summary}\n{IN_PROGRESS_INSTRUCTION}"}


def next_specs(plan: Plan) -> list[str]:
    """The plan's specs that have not run successfully yet, each as ``"<id> <kind> <path>
    (<risk>)"``, in plan order."""
    done = plan.state.succeeded()
    return [f"{spec.id} {spec.base.kind} {spec.base.path or '.'} ({spec.risk})"
            for spec in plan.state.action_specs if spec.id not in done]


def _quoted(title: str) -> str:
    return '"' + " ".join(title.split())[:120] + '"'
