"""What a person was shown when asked to approve a plan, and the check that an approval
approves exactly that.

A request for approval (:meth:`PlanService.request_approval`) gets a fresh id and is the
plan's *open* request until the plan's specs change: setting them again closes it, and so
does a preview that finds a spec's diff or risk changed. An approval carries a
:class:`Shown`: the id of the request it answers and, for each spec shown, the fingerprint
of its diff (which digests the spec and the state of its target) and its risk. It is
refused (:class:`~sea.errors.StaleApproval`) when that request is no longer the open one, or
when a spec it approves is not the one shown: another pulse may have set the specs again,
turning a ``create`` shown as low risk into a ``delete``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from saimemory.plans import PlanState
from sea.engine.plans.preflight import Checked, Inspection
from sea.engine.plans.results import ApprovalRequest


@dataclass(frozen=True, slots=True)
class Shown:
    """What an approval was given for.

    Attributes:
        request_id: The request shown (``""``: none was open).
        specs: Spec id → ``(fingerprint, risk)`` of each spec shown.
    """

    request_id: str
    specs: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def of_request(cls, request: ApprovalRequest) -> Shown:
        """What :meth:`PlanService.request_approval` returned to be shown."""
        return cls(request.request_id, {
            diff.spec_id: (request.fingerprints.get(diff.spec_id, ""), diff.risk)
            for diff in request.preview.diffs})

    @classmethod
    def of_json(cls, request: Mapping[str, Any]) -> Shown:
        """What a request shown as JSON (the ``plan_request_approval`` tool's result, kept
        while the pulse waits) holds; missing parts match nothing."""
        found = request.get("preview")
        preview: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        given = request.get("fingerprints")
        fingerprints: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        specs = {}
        for diff in preview.get("diffs") or []:
            if isinstance(diff, Mapping):
                spec = str(diff.get("spec_id"))
                specs[spec] = (str(fingerprints.get(spec, "")), str(diff.get("risk")))
        request_id = request.get("request_id")
        return cls(request_id if isinstance(request_id, str) else "", specs)

    @classmethod
    def of_state(cls, state: PlanState, request_id: str | None = None) -> Shown:
        """The plan's open request as stored with the plan (the specs' stored preflights are
        those it showed; see the module's text); ``request_id``: the request the person
        names, else the open one."""
        chosen = request_id if request_id is not None else state.approval_request or ""
        return cls(chosen, {spec.id: (spec.preflight.fingerprint, spec.risk)
                            for spec in state.action_specs if spec.preflight is not None})


def stale(state: PlanState, shown: Shown, inspection: Inspection) -> str:
    """Why an approval given for ``shown`` does not approve the specs as ``inspection``
    finds them now; ``""`` when it does."""
    if not shown.request_id:
        return ("it has no open approval request: its specs changed since they were last "
                "shown, or were never shown")
    if state.approval_request != shown.request_id:
        return (f"approval request {shown.request_id} is no longer open: the plan was changed "
                "since it was shown (its specs set again, or its approval asked again)")
    changed = [item.spec.id for item in inspection.checked
               if shown.specs.get(item.spec.id) != (fingerprint(item), item.spec.risk)]
    if changed:
        return (f"spec(s) {', '.join(changed)} changed since they were shown (their diff or "
                "risk is not the one shown)")
    return ""


def fingerprint(item: Checked) -> str:
    """The fingerprint of an inspected spec's diff (``""`` when it has none)."""
    preflight = item.spec.preflight
    return preflight.fingerprint if preflight is not None else ""


def changed_since(before: PlanState, after: PlanState) -> bool:
    """Whether a spec's diff, risk or validity differs between two states of a plan."""
    old = {spec.id: (spec.preflight, spec.risk, spec.validated) for spec in before.action_specs}
    return any(old.get(spec.id) != (spec.preflight, spec.risk, spec.validated)
               for spec in after.action_specs)
