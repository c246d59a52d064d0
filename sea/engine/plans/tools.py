"""The plan API as langchain-core tools, for ``tool``, ``tool_call`` and ``actions`` nodes.

:class:`PlanToolkit` makes them for one persona in one workspace (the runtime makes one per
pulse when its host gives a workspace; the argument models are
:data:`sea.engine.tools.signatures.PLAN_ARGUMENTS`):

=========================  =============================================================
tool                       result
=========================  =============================================================
``plan_propose``           ``{plan_id, first_step_id}``; the plan is the current one;
                           ``first_step_id`` is null: no step yet
``plan_set_action_specs``  ``{ok, issues, normalized, first_step_id}`` (the
                           ValidationReport, and the first spec's step id)
``plan_preview``           ``{files, diffs, risk_score}`` (unified diffs)
``plan_request_approval``  the ApprovalRequest ``{request_id, plan_id, selection, spec_ids,
                           preview, high_risk, needs_person, fingerprints}`` with ``title``
                           and ``specs`` (id, kind, path, risk, description, diff summary);
                           in a pulse its gate settles it (below)
``plan_execute``           ``{overall_success, outcome, status, results, started_at,
                           finished_at, conflicts, remaining}`` (the ExecutionResult)
``plan_get_state``         the state (status, specs, selection, approvals, previews, results),
                           ``allowed_calls`` and ``first_step_id`` (null: no step yet)
``plan_get_step``          one spec by step id (``<plan_id>:<spec id>``) and its results
``plan_get_current``       ``{plan}``: the current plan's reference, or null
``plan_list``              ``{plans}``, newest first
``plan_mark_pending``      ``{plan_id, status}``
``plan_clear_current``     ``{current: null}``
=========================  =============================================================

There is no tool to approve: a person approves, or the host's policy does. In a pulse,
``plan_request_approval`` is gated (:mod:`sea.engine.gates`, :class:`PlanApprovalGate`): when
a person must answer (always for a high-risk spec; for low and medium risk unless
:attr:`PlanPolicy.auto_approve_up_to` covers them) the pulse waits with the preview, and the
answer (:mod:`sea.engine.answers`: all, some ids, up to a risk, or a refusal) approves those
specs, as they were shown (:mod:`sea.engine.plans.shown`: a plan changed since is sent back
for review instead), or sends the plan back; otherwise the host policy approves at once (actor
``system``). Either way the node receives ``{plan_id, request_id, approved, auto, status,
spec_ids, approver, reason}``, and the approval is recorded in the plan.

``plan_id`` parameters declare ``"x-sea-ref": ["plan_id"]`` and ``step_id``
``["step_id", "first_step_id"]``, so in a pipeline ``"plan_id": "ref:plan"`` receives the
``plan_id`` of the ``plan`` action's result.

Every lifecycle call sends its :class:`~sea.engine.plans.events.PlanEvent` to ``on_event``
with the playbook and node of the call (from the call's config), on the caller's event loop
when the tool is awaited (the work itself runs in a worker thread).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from saimemory.base import MessageStore
from saimemory.plan_codec import to_jsonable
from saimemory.plans import RISKS, MessageRef
from sea.engine.answers import Answer, parse_answer
from sea.engine.events import PlanChanged
from sea.engine.gates import ToolGate
from sea.engine.plans.events import PlanEvent
from sea.engine.plans.lifecycle import allowed_calls
from sea.engine.plans.policy import PlanPolicy
from sea.engine.plans.service import PlanService
from sea.engine.plans.shown import Shown
from sea.engine.plans.specs import first_step_id, step_id
from sea.engine.tools.box import ToolMaker
from sea.engine.tools.engine_tool import engine_tool
from sea.engine.tools.signatures import PLAN_ARGUMENTS
from sea.engine.tools.workspace import Workspace
from sea.errors import PlanApprovalError, PlanNotFound

T = TypeVar("T")

PlanEventHandler = Callable[[PlanEvent, str | None, str | None], None]
"""Receives each plan event with the playbook and node whose tool call made it."""

GATED_TOOL = "plan_request_approval"
"""The plan tool whose result waits for a person in a pulse."""

HOST_APPROVER = "host policy"
"""The approver an automatic approval records."""


@dataclass(frozen=True, slots=True)
class Where:
    """Where a tool call comes from (its config's metadata): playbook, node, pulse."""

    playbook: str | None = None
    node: str | None = None
    pulse_id: str | None = None

    @classmethod
    def of(cls, config: RunnableConfig | None) -> Where:
        """The call's origin, as :meth:`sea.engine.tools.box.ToolBox.invoke` sets it."""
        metadata = (config or {}).get("metadata") or {}

        def text(key: str) -> str | None:
            value = metadata.get(key)
            return value if isinstance(value, str) else None

        return cls(text("sea_playbook"), text("sea_node"), text("sea_pulse_id"))


Work = Callable[[PlanService, Where, dict[str, Any]], Any]
"""One tool's work: the service, where the call comes from, its arguments."""


class PlanToolkit:
    """The plan tools of one persona, in one workspace, under one policy.

    Args:
        store: The persona's store (where plans live).
        persona: The persona id.
        workspace: The host's workspace.
        policy: The host's plan policy (defaults when None).
        on_event: Receives every plan event with the playbook and node of the call.
    """

    def __init__(
        self,
        store: MessageStore,
        persona: str,
        workspace: Workspace,
        policy: PlanPolicy | None = None,
        *,
        on_event: PlanEventHandler | None = None,
    ) -> None:
        self.store = store
        self.persona = persona
        self.workspace = workspace
        self.policy = policy if policy is not None else PlanPolicy()
        self._on_event = on_event

    def tools(self) -> list[BaseTool]:
        """The plan tools (see the module's table)."""
        return [make() for make in self.tool_makers().values()]

    def tool_makers(self) -> dict[str, ToolMaker]:
        """:meth:`tools`, each made when first needed (for a :class:`ToolBox`)."""
        return {name: partial(self._tool, name, description, work)
                for name, (description, work) in _WORK.items()}

    def gates(self) -> dict[str, ToolGate]:
        """Tool name → gate: ``plan_request_approval``'s."""
        return {GATED_TOOL: PlanApprovalGate(self)}

    def call(self, work: Callable[[PlanService], T], where: Where) -> T:
        """Run ``work`` with a plan service here; its events go to ``on_event`` after it."""
        events: list[PlanEvent] = []
        try:
            return work(self._service(events.append))
        finally:
            self._send(events, where)

    async def acall(self, work: Callable[[PlanService], T], where: Where) -> T:
        """Run ``work`` with a plan service in a worker thread; its events go to
        ``on_event`` afterwards, on this loop."""
        events: list[PlanEvent] = []
        service = self._service(events.append)
        try:
            return await asyncio.to_thread(work, service)
        finally:
            self._send(events, where)

    def _service(self, sink: Callable[[PlanEvent], None]) -> PlanService:
        return PlanService(self.store, self.persona, self.workspace, self.policy, on_event=sink)

    def _send(self, events: list[PlanEvent], where: Where) -> None:
        if self._on_event is not None:
            for event in events:
                self._on_event(event, where.playbook, where.node)

    def _tool(self, name: str, description: str, work: Work) -> BaseTool:
        def run(config: RunnableConfig, **kwargs: Any) -> Any:
            where = Where.of(config)
            return self.call(lambda service: work(service, where, _plain(kwargs)), where)

        async def arun(config: RunnableConfig, **kwargs: Any) -> Any:
            where = Where.of(config)
            return await self.acall(lambda service: work(service, where, _plain(kwargs)), where)

        return engine_tool(
            func=run, coroutine=arun, name=name, description=description,
            args_schema=PLAN_ARGUMENTS[name],
        )


def plan_changed(pulse_id: str, event: PlanEvent, playbook: str | None, node: str | None
                 ) -> PlanChanged:
    """The runtime event of a plan event made by a call of ``playbook.node``."""
    return PlanChanged(pulse_id, event.kind, event.plan_id, event.persona, event.actor,
                       event.status, event.at.isoformat(), event.reason, dict(event.counts),
                       event.risk_score, playbook, node)


class PlanApprovalGate:
    """Settles ``plan_request_approval`` in a pulse: asks a person when one must answer
    (see :mod:`sea.engine.plans.tools`), else approves by the host's policy. The question
    records the workspace (``workspace``: its resolved root), so that a runtime in another
    workspace refuses to take the answer (:class:`sea.host.runtime.Runtime`)."""

    def __init__(self, toolkit: PlanToolkit) -> None:
        self._toolkit = toolkit

    def request(self, result: Any) -> dict[str, Any] | None:
        """The question for a person, or None when the host's policy may approve."""
        if isinstance(result, Mapping) and result.get("needs_person") is False:
            return None
        shown = result if isinstance(result, Mapping) else {}
        return {"action": f"approving plan {str(shown.get('title', ''))!r}",
                "plan_approval": approval_view(shown),
                "workspace": str(self._toolkit.workspace.root)}

    async def settle(
        self, result: Any, answer: Any, *, playbook: str | None, node: str | None
    ) -> Any:
        """Approve what the answer (or the host policy) approves, or send the plan back."""
        if not isinstance(result, Mapping) or not isinstance(result.get("plan_id"), str):
            raise PlanApprovalError(f"not an approval request: {result!r:.80}")
        where = Where(playbook, node)
        return await self._toolkit.acall(lambda s: self._apply(s, result, answer), where)

    def _apply(self, service: PlanService, request: Mapping[str, Any], answer: Any
               ) -> dict[str, Any]:
        plan_id = str(request["plan_id"])
        asked = [str(item) for item in request.get("spec_ids") or []]
        base = {"plan_id": plan_id, "request_id": request.get("request_id")}
        shown = Shown.of_json(request)  # an approval approves what the request showed
        if answer is None:
            level = service.policy.auto_approve_up_to
            reason = f"automatic approval by the host policy (up to {level} risk)"
            state = service.approve(plan_id, HOST_APPROVER, request.get("selection") or
                                    {"ids": asked}, actor="system", reason=reason,
                                    shown=shown)
            return {**base, "approved": True, "auto": True, "status": state.status,
                    "spec_ids": asked, "approver": HOST_APPROVER, "reason": reason}
        parsed = parse_answer(answer)
        ids = _chosen(parsed, asked, _risks(request))
        if not parsed.approved or not ids:
            reason = _refusal(parsed, answer)
            state = service.reject(plan_id, reason, actor="user")
            return {**base, "approved": False, "auto": False, "status": state.status,
                    "spec_ids": [], "approver": parsed.approver, "reason": reason}
        selection = request.get("selection") if ids == asked else {"ids": ids}
        state = service.approve(plan_id, parsed.approver, selection or {"ids": ids},
                                actor="user", reason=parsed.reason, shown=shown)
        return {**base, "approved": True, "auto": False, "status": state.status,
                "spec_ids": ids, "approver": parsed.approver, "reason": parsed.reason}


def approval_view(request: Mapping[str, Any]) -> dict[str, Any]:
    """What a person is shown of a plan approval request (no diff texts: ``sea plan
    preview`` prints those): the plan, its specs with risks and diff summaries, the files,
    the risk score, the high-risk specs and the answers understood."""
    found = request.get("preview")
    preview: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    return {
        "plan_id": request.get("plan_id"),
        "title": request.get("title"),
        "request_id": request.get("request_id"),
        "spec_ids": list(request.get("spec_ids") or []),
        "specs": list(request.get("specs") or []),
        "files": list(preview.get("files") or []),
        "risk_score": preview.get("risk_score", 0.0),
        "high_risk": list(request.get("high_risk") or []),
        "answers": 'approve: true, {"all": true}, {"ids": ["1"]} or {"up_to": "low"}; '
                   "refuse: false",
    }


def _chosen(answer: Answer, asked: list[str], risks: Mapping[str, str]) -> list[str]:
    """The asked specs the answer approves, in plan order.

    Raises:
        PlanApprovalError: it names specs that were not asked about.
    """
    if answer.ids is not None:
        unknown = [item for item in answer.ids if item not in asked]
        if unknown:
            raise PlanApprovalError(
                f"the answer approves spec(s) {', '.join(unknown)}, which were not asked "
                f"about (asked: {', '.join(asked)}); nothing was approved")
        return [item for item in asked if item in answer.ids]
    if answer.up_to is not None:
        rank: dict[str, int] = {risk: index for index, risk in enumerate(RISKS)}
        limit = rank[answer.up_to]
        return [item for item in asked if rank.get(risks.get(item, ""), limit + 1) <= limit]
    return asked


def _risks(request: Mapping[str, Any]) -> dict[str, str]:
    return {str(spec.get("id")): str(spec.get("risk")) for spec in request.get("specs") or []
            if isinstance(spec, Mapping)}


def _refusal(answer: Answer, raw: Any) -> str:
    if not answer.understood:
        return f"the answer {raw!r:.80} is not one understood, so it refuses"
    if answer.approved:
        return f"nothing selected: no spec asked about is at most {answer.up_to} risk"
    return answer.reason or "refused"


def _plain(value: Any) -> Any:
    """Arguments as plain data (pydantic models, as a tool may receive them, become dicts)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _propose(service: PlanService, where: Where, args: dict[str, Any]) -> Any:
    made = service.propose(args["title"], args["content"], args.get("rationale", ""),
                           _sources(service, where), args.get("tags") or ())
    return {"plan_id": made.plan_id, "first_step_id": made.first_step_id}


def _sources(service: PlanService, where: Where) -> list[MessageRef]:
    """The user's message of the pulse that proposes (what the plan was made from)."""
    if where.pulse_id is None:
        return []
    for message in service.store.pulse_messages(service.persona, where.pulse_id):
        if message.role == "user" and "conversation" in message.tags:
            return [MessageRef(str(message.id), message.created_at.isoformat())]
    return []


def _set_specs(service: PlanService, where: Where, args: dict[str, Any]) -> Any:
    report = service.set_action_specs(args["plan_id"], args["specs"])
    return {"ok": report.ok, "issues": list(report.issues),
            "normalized": to_jsonable(report.normalized),
            "first_step_id": first_step_id(args["plan_id"], report.normalized)}


def _preview(service: PlanService, where: Where, args: dict[str, Any]) -> Any:
    return to_jsonable(service.preview(args["plan_id"], args.get("selection")))


def _request_approval(service: PlanService, where: Where, args: dict[str, Any]) -> Any:
    asked = service.request_approval(args["plan_id"], args.get("selection") or {"all": True},
                                     reason=args.get("reason", ""))
    plan = service.get(asked.plan_id)
    diffs = {diff.spec_id: diff for diff in asked.preview.diffs}
    specs = []
    for spec in plan.state.action_specs:
        if spec.id in asked.spec_ids:
            diff = diffs.get(spec.id)
            specs.append({
                "id": spec.id, "kind": spec.base.kind, "path": spec.base.path,
                "risk": spec.risk, "description": spec.base.description,
                "diff_summary": spec.preflight.diff_summary if spec.preflight else "",
                "added": diff.added if diff else 0, "removed": diff.removed if diff else 0,
            })
    return {**to_jsonable(asked), "title": plan.title, "specs": specs,
            "auto_approve_up_to": service.policy.auto_approve_up_to}


def _execute(service: PlanService, where: Where, args: dict[str, Any]) -> Any:
    return to_jsonable(service.execute(args["plan_id"], actor="ai"))


def _get_state(service: PlanService, where: Where, args: dict[str, Any]) -> Any:
    state = service.get_state(args["plan_id"])
    found = to_jsonable(state)
    found.pop("history", None)
    return {**found, "allowed_calls": list(allowed_calls(state.status)),
            "first_step_id": first_step_id(args["plan_id"], state.action_specs)}


def _get_step(service: PlanService, where: Where, args: dict[str, Any]) -> Any:
    plan_id, _, spec = str(args["step_id"]).rpartition(":")
    if not plan_id:
        raise PlanNotFound(f"a step id is <plan_id>:<spec id>, got {args['step_id']!r}")
    plan = service.get(plan_id)
    found = next((item for item in plan.state.action_specs if item.id == spec), None)
    if found is None:
        known = ", ".join(step_id(plan.id, item.id) for item in plan.state.action_specs)
        raise PlanNotFound(f"plan {plan.id} has no step {args['step_id']!r} (its steps: "
                           f"{known or 'none yet: set its action specs first'})")
    results = [r for r in plan.state.results if r.spec_id == spec]
    return {"step_id": step_id(plan.id, spec), "plan_id": plan.id,
            "status": plan.state.status, "spec": to_jsonable(found),
            "results": to_jsonable(results)}


def _get_current(service: PlanService, where: Where, args: dict[str, Any]) -> Any:
    found = service.get_current()
    return {"plan": None if found is None else to_jsonable(found)}


def _list(service: PlanService, where: Where, args: dict[str, Any]) -> Any:
    return {"plans": to_jsonable(service.list(args.get("status")))}


def _mark_pending(service: PlanService, where: Where, args: dict[str, Any]) -> Any:
    state = service.mark_pending(args["plan_id"], args.get("pending", True), actor="ai")
    return {"plan_id": args["plan_id"], "status": state.status}


def _clear_current(service: PlanService, where: Where, args: dict[str, Any]) -> Any:
    service.clear_current()
    return {"current": None}


_WORK: dict[str, tuple[str, Work]] = {
    "plan_propose": (
        "Propose a plan for work on the workspace's files: a title and the plan in words "
        "(goal and steps). It becomes the persona's current plan. Returns {plan_id, "
        "first_step_id} (first_step_id is null: no step yet). Detail it next with "
        "plan_set_action_specs.", _propose),
    "plan_set_action_specs": (
        "Give a proposed plan its concrete steps (action specs: create, write, mkdir, read, "
        "analyze, run, delete, each with a path relative to the workspace), replacing any "
        "earlier ones. They are validated and previewed; returns {ok, issues, normalized, "
        "first_step_id}. "
        "Fix the issues and set them again when ok is false.", _set_specs),
    "plan_preview": (
        "Preview what a plan's specs would change: {files, diffs (unified), risk_score}.",
        _preview),
    "plan_request_approval": (
        "Ask a person to approve a plan's specs (all by default), showing the preview and "
        "the risks. Only approved specs can be executed. Returns whether they were "
        "approved, and which.", _request_approval),
    "plan_execute": (
        "Execute the approved specs of a plan that have not run yet, in order. Returns "
        "{overall_success, outcome, status, results, remaining}; outcome `conflict` means "
        "the workspace changed since the approval: ask for approval again.", _execute),
    "plan_get_state": (
        "A plan's state: status, specs, selection, approvals, preview, results, and the "
        "calls its status allows.", _get_state),
    "plan_get_step": (
        "One step of a plan by its step id (<plan_id>:<spec id>), with its results.",
        _get_step),
    "plan_get_current": (
        "The persona's current plan ({plan: {plan_id, title, status, ...}} or {plan: "
        "null}).", _get_current),
    "plan_list": ("The persona's plans, newest first (of one status, if given).", _list),
    "plan_mark_pending": (
        "Queue an approved plan to be executed later (pending true), or take it off the "
        "queue (pending false).", _mark_pending),
    "plan_clear_current": (
        "Leave the persona without a current plan (the plan itself is kept).",
        _clear_current),
}
"""Tool name → (description, work); one entry per name of ``PLAN_ARGUMENTS``."""
