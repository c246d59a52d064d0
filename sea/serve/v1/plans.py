"""``/v1/personas/{persona}/plans``: a persona's plans, reviewed and approved over HTTP.

Each route does what ``sea plan`` does, through the engine's plan service
(:class:`~sea.engine.plans.PlanService`): list, show, preview (what the specs would change
in the server's ``--workspace`` now, with their diffs and risks; it opens an approval
request of what it shows, or names the open one), approve all, some (``ids``) or those up to
a risk (``up_to``) of what that request showed, reject (send back), execute. The approver
recorded is the key's name; a body naming another is refused. ``current`` names the
persona's current plan. The routes that look at files need the server's workspace (409
without one); a plan's state that refuses a call answers 409 with the engine's code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from saimemory import MessageStore
from saimemory.errors import NotFoundError
from saimemory.plan_codec import plan_to_dict, to_jsonable
from saimemory.plans import Plan, PlanStatus
from sea.engine.plans import Actor, PlanService
from sea.engine.plans.shown import Shown
from sea.engine.plans.state import up_to
from sea.errors import (
    InvalidRequest,
    PlanApprovalError,
    PlanError,
    ResourceNotFound,
    ServerLacks,
)
from sea.serve.auth import Principal
from sea.serve.deps import Approver, Ctx, Reader
from sea.serve.v1.common import Conflict, Options, V1Options

router = APIRouter(prefix="/v1", tags=["plans"])
T = TypeVar("T")
ACTOR: Actor = "user"
"""Every call here is a person's (through their key), as ``sea plan``'s are."""


class PreviewRequest(BaseModel):
    """``POST .../preview``: which specs (default: the plan's selection, else all)."""

    model_config = ConfigDict(extra="forbid")
    ids: list[str] | None = None


class ApproveRequest(BaseModel):
    """``POST .../approve``: all specs still to run (neither ``ids`` nor ``up_to``), some,
    or those of at most a risk; ``request_id``: the approval request shown (default: the
    plan's open one). The approver is the key's name."""

    model_config = ConfigDict(extra="forbid")
    ids: list[str] | None = Field(default=None, min_length=1)
    up_to: Literal["low", "medium", "high"] | None = None
    request_id: str | None = None
    reason: str = Field(default="", max_length=2000)


class RejectRequest(BaseModel):
    """``POST .../reject``: why (recorded)."""

    model_config = ConfigDict(extra="forbid")
    reason: str = Field(default="", max_length=2000)


def _plan(store: MessageStore, persona: str, plan_id: str) -> Plan:
    if plan_id == "current":
        found = store.current_plan(persona)
        if found is None:
            raise ResourceNotFound(f"persona {persona!r} has no current plan")
        return found
    try:
        return store.get_plan(persona, plan_id)
    except NotFoundError:
        raise ResourceNotFound(f"persona {persona!r} has no plan {plan_id!r}") from None


def _service(options: V1Options, store: MessageStore, persona: str) -> PlanService:
    if options.workspace is None:
        raise ServerLacks("this server has no workspace, so a plan's files cannot be read "
                          "or changed here: start sea serve with --workspace DIR (the "
                          "directory the persona's plans were made for)")
    return PlanService(store, persona, options.workspace, options.plan_policy)


async def _call(ctx: Ctx, fn: Callable[[], T]) -> T:
    """Run a plan call in a worker thread; a plan whose state refuses it answers 409."""
    try:
        return await ctx.call(fn)
    except PlanError as exc:
        raise Conflict(exc.message, code=exc.code) from None


async def _persona(ctx: Ctx, principal: Principal, persona_id: str) -> str:
    return (await ctx.visible_persona(principal, persona_id)).id


@router.get("/personas/{persona_id}/plans")
async def list_plans(persona_id: str, ctx: Ctx, principal: Reader,
                     status: PlanStatus | None = None) -> dict[str, Any]:
    """The persona's plans, newest first (``status`` filters)."""
    persona = await _persona(ctx, principal, persona_id)

    def listed() -> list[dict[str, Any]]:
        current = ctx.store.current_plan(persona)
        return [{"id": plan.id, "title": plan.title, "status": plan.state.status,
                 "current": current is not None and plan.id == current.id,
                 "specs": len(plan.state.action_specs), "version": plan.version,
                 "created_at": plan.created_at.isoformat(),
                 "updated_at": plan.updated_at.isoformat() if plan.updated_at else None}
                for plan in ctx.store.list_plans(persona, status=status)]

    return {"items": await _call(ctx, listed)}


@router.get("/personas/{persona_id}/plans/{plan_id}")
async def show_plan(persona_id: str, plan_id: str, ctx: Ctx,
                    principal: Reader) -> dict[str, Any]:
    """A plan as ``sea plan show --json``: its specs, selection, previews, approvals (who,
    when, which), results and events."""
    persona = await _persona(ctx, principal, persona_id)

    def shown() -> dict[str, Any]:
        plan = _plan(ctx.store, persona, plan_id)
        current = ctx.store.current_plan(persona)
        return {**plan_to_dict(plan), "current": current is not None and current.id == plan.id}

    return await _call(ctx, shown)


@router.post("/personas/{persona_id}/plans/{plan_id}/preview")
async def preview_plan(persona_id: str, plan_id: str, ctx: Ctx, options: Options,
                       principal: Reader, body: PreviewRequest | None = None) -> dict[str, Any]:
    """What the plan's specs would change in the workspace now (files, unified diffs, risks,
    risk score) and the approval request that shows it (``request_id``; null when nothing
    shown can be approved), as ``sea plan preview``."""
    persona = await _persona(ctx, principal, persona_id)
    selection = None if body is None or body.ids is None else {"ids": body.ids}

    def previewed() -> dict[str, Any]:
        plan = _plan(ctx.store, persona, plan_id)
        service = _service(options, ctx.store, persona)
        preview = service.preview(plan.id, selection)
        request = service.get_state(plan.id).approval_request
        if request is None:
            try:
                request = service.request_approval(
                    plan.id, selection or {"all": True}, actor=ACTOR,
                    reason="shown by the server's plan preview").request_id
            except PlanApprovalError:
                request = None
        return {"plan_id": plan.id, **to_jsonable(preview), "request_id": request}

    return await _call(ctx, previewed)


@router.post("/personas/{persona_id}/plans/{plan_id}/approve")
async def approve_plan(persona_id: str, plan_id: str, body: ApproveRequest, ctx: Ctx,
                       options: Options, principal: Approver) -> dict[str, Any]:
    """Approve what the approval request showed (all, ``ids`` or ``up_to`` a risk); the
    approver recorded is the key's name. A plan changed since it was shown is sent back for
    review (409, SEA587)."""
    if body.ids is not None and body.up_to is not None:
        raise InvalidRequest("give ids or up_to, not both")
    persona = await _persona(ctx, principal, persona_id)

    def approved() -> dict[str, Any]:
        plan = _plan(ctx.store, persona, plan_id)
        ids = body.ids
        if body.up_to is not None:
            ids = up_to(plan.state, body.up_to)
            if not ids:
                raise PlanApprovalError(f"plan {plan.id} has no spec still to run of at most "
                                        f"{body.up_to} risk; nothing approved")
        selection: dict[str, Any] = {"all": True} if ids is None else {"ids": ids}
        state = _service(options, ctx.store, persona).approve(
            plan.id, principal.name, selection, actor=ACTOR, reason=body.reason,
            shown=Shown.of_state(plan.state, body.request_id))
        last = state.approvals[-1]
        return {"plan_id": plan.id, "status": state.status, "approver": last.approver,
                "selection": to_jsonable(last.selection)}

    return await _call(ctx, approved)


@router.post("/personas/{persona_id}/plans/{plan_id}/reject")
async def reject_plan(persona_id: str, plan_id: str, body: RejectRequest, ctx: Ctx,
                      options: Options, principal: Approver) -> dict[str, Any]:
    """Send the plan back (``proposed``), recording why."""
    persona = await _persona(ctx, principal, persona_id)

    def rejected() -> dict[str, Any]:
        plan = _plan(ctx.store, persona, plan_id)
        state = _service(options, ctx.store, persona).reject(plan.id, body.reason,
                                                             actor=ACTOR)
        return {"plan_id": plan.id, "status": state.status}

    return await _call(ctx, rejected)


@router.post("/personas/{persona_id}/plans/{plan_id}/execute")
async def execute_plan(persona_id: str, plan_id: str, ctx: Ctx, options: Options,
                       principal: Approver) -> dict[str, Any]:
    """Run the plan's approved specs that have not run yet, in the workspace: each spec's
    result, the conflicts (files changed since the approval: approve again), the outcome."""
    persona = await _persona(ctx, principal, persona_id)

    def executed() -> dict[str, Any]:
        plan = _plan(ctx.store, persona, plan_id)
        result = _service(options, ctx.store, persona).execute(plan.id, actor=ACTOR)
        return {"plan_id": plan.id, **to_jsonable(result),
                "overall_success": result.overall_success}

    return await _call(ctx, executed)
