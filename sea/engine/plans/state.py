"""Pure helpers over a plan's state: which specs are selected, which have run, which remain,
which conflict with their approval, and the counts events carry."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from saimemory.plans import RISKS, ActionSpecExt, Approval, PlanState, SpecSelection
from sea.engine.plans.preflight import CHANGING_KINDS, Checked, Inspection
from sea.engine.plans.results import SpecConflict
from sea.engine.plans.specs import selected

ALL = SpecSelection(all=True)
"""Every spec of the plan."""


def succeeded(state: PlanState) -> set[str]:
    """The ids of the specs that have run successfully (at least once)
    (:meth:`saimemory.plans.PlanState.succeeded`)."""
    return state.succeeded()


def remaining(state: PlanState, selection: SpecSelection) -> tuple[str, ...]:
    """The selected specs that have not run successfully yet, in plan order."""
    done = succeeded(state)
    return tuple(item for item in selected(selection, state.action_specs) if item not in done)


def up_to(state: PlanState, level: str) -> list[str]:
    """The ids of the specs still to run of at most ``level`` risk (``low``, ``medium``,
    ``high``), in plan order; empty when there are none."""
    done = succeeded(state)
    limit = [str(risk) for risk in RISKS].index(level)
    return [spec.id for spec in state.action_specs
            if spec.id not in done and RISKS.index(spec.risk) <= limit]


def specs_by_id(state: PlanState, ids: Iterable[str]) -> list[ActionSpecExt]:
    """The specs with these ids, in plan order."""
    wanted = set(ids)
    return [spec for spec in state.action_specs if spec.id in wanted]


def with_checked(state: PlanState, inspection: Inspection) -> PlanState:
    """``state`` with the inspected specs replaced by their fresh form (preflight, risk,
    validity) and the inspection's preview as the stored preview."""
    fresh = {item.spec.id: item.spec for item in inspection.checked}
    specs = tuple(fresh.get(spec.id, spec) for spec in state.action_specs)
    return replace(state, action_specs=specs, previews=inspection.preview())


def conflicts(inspection: Inspection, approval: Approval) -> tuple[SpecConflict, ...]:
    """The inspected specs whose diff is not the one approved (or that became invalid)."""
    found = []
    for item in inspection.checked:
        detail = _conflict(item, approval.fingerprints)
        if detail:
            found.append(SpecConflict(item.spec.id, item.spec.base.path, detail))
    return tuple(found)


def _conflict(item: Checked, approved: Mapping[str, str]) -> str:
    if not item.spec.validated:
        return "no longer valid: " + "; ".join(item.issues)
    if item.spec.preflight is None or item.spec.preflight.fingerprint != approved.get(
            item.spec.id, ""):
        summary = item.spec.preflight.diff_summary if item.spec.preflight else ""
        return f"its target changed since the approval; now: {summary}"
    return ""


def counts(state: PlanState, **extra: int) -> dict[str, int]:
    """The counts of an event: ``specs``, ``files`` (paths the changing specs touch) and
    ``extra``."""
    files = {spec.base.path for spec in state.action_specs if spec.base.kind in CHANGING_KINDS}
    return {"specs": len(state.action_specs), "files": len(files), **extra}
