"""Plans as JSON-ready dicts, both ways: the form of the store's JSON columns and of exports.

Times are ISO 8601 strings with their offset; tuples are lists; every field is written, so a
dict read back gives an equal record. :func:`plan_from_dict` raises
:class:`~saimemory.errors.InvalidPlanError` on a dict that is not a plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar, cast

import orjson

from saimemory.errors import InvalidPlanError
from saimemory.plans import (
    ACTION_KINDS,
    PLAN_STATUSES,
    RISKS,
    ActionKind,
    ActionSpec,
    ActionSpecExt,
    Approval,
    DiffSummary,
    MessageRef,
    Plan,
    PlanHistoryEntry,
    PlanPreview,
    PlanState,
    PlanStatus,
    Preflight,
    Risk,
    SpecResult,
    SpecSelection,
)

T = TypeVar("T")


def to_jsonable(record: object) -> Any:
    """A record (or a tuple or dict of records) as plain JSON values."""
    return orjson.loads(orjson.dumps(record))


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The whole plan, its state included, as a JSON-ready dict."""
    found = to_jsonable(plan)
    assert isinstance(found, dict)
    return found


def state_to_json(state: PlanState) -> str:
    """The state as the store's ``state`` column holds it (its status is a column of its own)."""
    found = to_jsonable(state)
    del found["status"]
    return orjson.dumps(found).decode()


def state_from_json(text: str, status: str) -> PlanState:
    """The state a ``state`` column holds, with the ``status`` column's value."""
    return _guard(lambda: _state({**orjson.loads(text), "status": status}), "plan state")


def plan_from_dict(data: Mapping[str, Any]) -> Plan:
    """The plan a :func:`plan_to_dict` dict describes."""
    return _guard(lambda: _plan(data), "plan")


def sources_from_json(text: str) -> tuple[MessageRef, ...]:
    """A ``sources`` column's message references."""
    return _guard(lambda: tuple(_ref(item) for item in orjson.loads(text)), "plan sources")


def _guard(read: Callable[[], T], what: str) -> T:
    try:
        return read()
    except InvalidPlanError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, orjson.JSONDecodeError) as exc:
        raise InvalidPlanError(f"not a valid {what}: {type(exc).__name__}: {exc}") from None


def _choice(value: Any, allowed: tuple[str, ...], what: str) -> Any:
    if value not in allowed:
        raise InvalidPlanError(f"{what} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _time(value: Any) -> datetime:
    moment = datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        raise InvalidPlanError(f"time {value!r} has no UTC offset")
    return moment


def _plan(data: Mapping[str, Any]) -> Plan:
    updated = data.get("updated_at")
    return Plan(
        id=str(data["id"]),
        persona=str(data["persona"]),
        title=str(data["title"]),
        content=str(data["content"]),
        created_at=_time(data["created_at"]),
        sources=tuple(_ref(item) for item in data.get("sources", ())),
        rationale=str(data.get("rationale", "")),
        tags=tuple(str(tag) for tag in data.get("tags", ())),
        version=int(data.get("version", 0)),
        state=_state(data.get("state", {})),
        updated_at=None if updated is None else _time(updated),
    )


def _ref(data: Mapping[str, Any]) -> MessageRef:
    return MessageRef(message_id=str(data["message_id"]), timestamp=str(data["timestamp"]))


def _state(data: Mapping[str, Any]) -> PlanState:
    selection = data.get("selection")
    previews = data.get("previews")
    request = data.get("approval_request")
    return PlanState(
        status=cast(PlanStatus, _choice(data.get("status", "proposed"), PLAN_STATUSES, "status")),
        action_specs=tuple(_spec_ext(item) for item in data.get("action_specs", ())),
        selection=None if selection is None else _selection(selection),
        approvals=tuple(_approval(item) for item in data.get("approvals", ())),
        previews=None if previews is None else _preview(previews),
        results=tuple(_result(item) for item in data.get("results", ())),
        approval_request=None if request is None else str(request),
        history=tuple(_history(item) for item in data.get("history", ())),
    )


def _history(data: Mapping[str, Any]) -> PlanHistoryEntry:
    return PlanHistoryEntry(
        kind=str(data["kind"]),
        actor=str(data["actor"]),
        status=cast(PlanStatus, _choice(data["status"], PLAN_STATUSES, "status")),
        at=_time(data["at"]),
        reason=str(data.get("reason", "")),
        counts={str(k): int(v) for k, v in dict(data.get("counts", {})).items()},
        risk_score=float(data.get("risk_score", 0.0)),
    )


def _kind(value: Any) -> ActionKind:
    return cast(ActionKind, _choice(value, ACTION_KINDS, "kind"))


def _risk(value: Any) -> Risk:
    return cast(Risk, _choice(value, RISKS, "risk"))


def _spec(data: Mapping[str, Any]) -> ActionSpec:
    content = data.get("content")
    return ActionSpec(
        kind=_kind(data["kind"]),
        path=str(data.get("path", "")),
        content=None if content is None else str(content),
        description=str(data.get("description", "")),
        optional=bool(data.get("optional", False)),
    )


def _spec_ext(data: Mapping[str, Any]) -> ActionSpecExt:
    preflight = data.get("preflight")
    return ActionSpecExt(
        id=str(data["id"]),
        base=_spec(data["base"]),
        risk=_risk(data.get("risk", "low")),
        validated=bool(data.get("validated", False)),
        preflight=None if preflight is None else Preflight(
            exists=bool(preflight["exists"]),
            overwrite=bool(preflight["overwrite"]),
            diff_summary=str(preflight["diff_summary"]),
            fingerprint=str(preflight.get("fingerprint", "")),
        ),
        notes=str(data.get("notes", "")),
    )


def _selection(data: Mapping[str, Any]) -> SpecSelection:
    return SpecSelection(all=bool(data.get("all", False)),
                         ids=tuple(str(item) for item in data.get("ids", ())))


def _approval(data: Mapping[str, Any]) -> Approval:
    return Approval(
        approver=str(data["approver"]),
        timestamp=_time(data["timestamp"]),
        selection=_selection(data["selection"]),
        actor=str(data.get("actor", "user")),
        fingerprints={str(k): str(v) for k, v in dict(data.get("fingerprints", {})).items()},
    )


def _preview(data: Mapping[str, Any]) -> PlanPreview:
    return PlanPreview(
        files=tuple(str(item) for item in data.get("files", ())),
        diffs=tuple(
            DiffSummary(
                spec_id=str(item["spec_id"]),
                kind=_kind(item["kind"]),
                path=str(item["path"]),
                risk=_risk(item["risk"]),
                added=int(item.get("added", 0)),
                removed=int(item.get("removed", 0)),
                diff=str(item.get("diff", "")),
                truncated=bool(item.get("truncated", False)),
            )
            for item in data.get("diffs", ())
        ),
        risk_score=float(data.get("risk_score", 0.0)),
    )


def _result(data: Mapping[str, Any]) -> SpecResult:
    code = data.get("exit_code")
    return SpecResult(
        spec_id=str(data["spec_id"]),
        kind=_kind(data["kind"]),
        path=str(data["path"]),
        ok=bool(data["ok"]),
        message=str(data["message"]),
        started_at=_time(data["started_at"]),
        finished_at=_time(data["finished_at"]),
        output=str(data.get("output", "")),
        exit_code=None if code is None else int(code),
    )
