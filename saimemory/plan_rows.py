"""Plan rows over an open transaction: the checks a plan passes before it is written, saves
with optimistic concurrency, reads, and the current plan of each persona.

Tables (migration 4): ``plans`` (one row per plan; ``sources``, ``tags`` and ``state`` are
JSON text, ``status`` a column of its own so lists can filter on it) and ``current_plans``
(at most one row per persona, naming its current plan; deleting the plan clears it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, cast

import orjson

from saimemory.errors import InvalidPlanError, NotFoundError, StaleVersionError
from saimemory.plan_codec import sources_from_json, state_from_json, state_to_json, to_jsonable
from saimemory.plans import ACTION_KINDS, PLAN_STATUSES, RISKS, Plan, PlanStatus
from saimemory.prepare import MAX_ID_CHARS, from_micros, to_micros
from saimemory.tx import Row, Tx

PLAN_COLUMNS = (
    "p.id, p.persona, p.title, p.content, p.sources, p.rationale, p.tags, p.status, p.state, "
    "p.created_us, p.updated_us, p.version"
)
MAX_TITLE_CHARS = 500
"""The longest plan title."""


def check_plan_identifier(value: object, what: str) -> str:
    """A non-empty string of at most ``MAX_ID_CHARS`` characters without NUL."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidPlanError(f"{what} must be a non-empty string, got {value!r}")
    if "\x00" in value or len(value) > MAX_ID_CHARS:
        raise InvalidPlanError(
            f"{what} must be at most {MAX_ID_CHARS} characters without NUL, got {value[:40]!r}"
        )
    return value


def check_plan(plan: Plan) -> None:
    """Refuse a plan the store cannot keep as it is (raises :class:`InvalidPlanError`)."""
    check_plan_identifier(plan.id, "plan id")
    check_plan_identifier(plan.persona, "persona")
    if not isinstance(plan.title, str) or not plan.title.strip():
        raise InvalidPlanError(f"plan title must be a non-empty string, got {plan.title!r}")
    if len(plan.title) > MAX_TITLE_CHARS:
        raise InvalidPlanError(f"plan title is longer than {MAX_TITLE_CHARS} characters")
    for what, text in (("title", plan.title), ("content", plan.content),
                       ("rationale", plan.rationale)):
        if not isinstance(text, str) or "\x00" in text:
            raise InvalidPlanError(f"plan {what} must be a string without NUL characters")
    if plan.created_at.tzinfo is None:
        raise InvalidPlanError("plan created_at must be timezone-aware")
    if isinstance(plan.version, bool) or not isinstance(plan.version, int) or plan.version < 0:
        raise InvalidPlanError(f"plan version must be an integer >= 0, got {plan.version!r}")
    for tag in plan.tags:
        check_plan_identifier(tag, "plan tag")
    _check_state(plan)


def _check_state(plan: Plan) -> None:
    state = plan.state
    if state.status not in PLAN_STATUSES:
        raise InvalidPlanError(
            f"plan status must be one of {', '.join(PLAN_STATUSES)}, got {state.status!r}")
    seen: set[str] = set()
    for spec in state.action_specs:
        check_plan_identifier(spec.id, "action spec id")
        if spec.id in seen:
            raise InvalidPlanError(f"action spec id {spec.id!r} is used twice in plan {plan.id}")
        seen.add(spec.id)
        if spec.base.kind not in ACTION_KINDS:
            raise InvalidPlanError(
                f"action spec {spec.id}: kind must be one of {', '.join(ACTION_KINDS)}, "
                f"got {spec.base.kind!r}")
        if spec.risk not in RISKS:
            raise InvalidPlanError(
                f"action spec {spec.id}: risk must be one of {', '.join(RISKS)}, "
                f"got {spec.risk!r}")


def to_plan(row: Row) -> Plan:
    """A ``plans`` row (selected as :data:`PLAN_COLUMNS`) as a record."""
    return Plan(
        id=row[0], persona=row[1], title=row[2], content=row[3],
        sources=sources_from_json(row[4]), rationale=row[5],
        tags=tuple(str(tag) for tag in orjson.loads(row[6])),
        state=state_from_json(row[8], row[7]),
        created_at=from_micros(int(row[9])), updated_at=from_micros(int(row[10])),
        version=int(row[11]),
    )


def write_plan(tx: Tx, plan: Plan, now_us: int, where: str) -> Plan:
    """Insert a new plan (``version`` 0) or update a stored one from its stored version; the
    plan as saved, its version one more and ``updated_at`` now.

    Raises:
        InvalidPlanError: a new plan's id is taken.
        NotFoundError: the plan to update is not stored for this persona.
        StaleVersionError: the stored version is not the one the plan was read at.
    """
    found = tx.fetch("SELECT persona, version FROM plans WHERE id = ?", (plan.id,))
    fields = _fields(plan)
    if plan.version == 0:
        if found:
            raise InvalidPlanError(
                f"{where}: plan {plan.id} already exists (version {found[0][1]}); save the "
                "plan as read from the store to change it. Nothing written")
        tx.run(
            "INSERT INTO plans (id, persona, title, content, sources, rationale, tags, status, "
            "state, created_us, updated_us, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
            (plan.id, plan.persona, *fields, to_micros(plan.created_at), now_us),
        )
        return dataclasses.replace(plan, version=1, updated_at=from_micros(now_us))
    if not found or found[0][0] != plan.persona:
        raise NotFoundError(f"{where}: persona {plan.persona!r} has no plan {plan.id!r}")
    stored = int(found[0][1])
    if stored != plan.version:
        raise StaleVersionError(
            f"{where}: plan {plan.id} is at version {stored}, but this save was made from "
            f"version {plan.version}: it was saved by someone else meanwhile. Nothing written; "
            "read it again and redo the change")
    tx.run(
        "UPDATE plans SET title = ?, content = ?, sources = ?, rationale = ?, tags = ?, "
        "status = ?, state = ?, updated_us = ?, version = version + 1 "
        "WHERE id = ? AND version = ?",
        (*fields, now_us, plan.id, stored),
    )
    return dataclasses.replace(plan, version=stored + 1, updated_at=from_micros(now_us))


def _fields(plan: Plan) -> tuple[Any, ...]:
    """title, content, sources, rationale, tags, status, state: as the columns hold them."""
    return (
        plan.title, plan.content, orjson.dumps(to_jsonable(plan.sources)).decode(),
        plan.rationale, orjson.dumps(list(plan.tags)).decode(), plan.state.status,
        state_to_json(plan.state),
    )


def read_plan(tx: Tx, persona: str, plan_id: str) -> Plan | None:
    """The persona's plan with this id, if any."""
    rows = tx.fetch(f"SELECT {PLAN_COLUMNS} FROM plans p WHERE p.id = ? AND p.persona = ?",
                    (plan_id, persona))
    return to_plan(rows[0]) if rows else None


def list_plans(tx: Tx, persona: str, statuses: Sequence[PlanStatus] | None) -> list[Plan]:
    """The persona's plans (of these statuses, if given), newest first."""
    where, params = "p.persona = ?", [persona]
    if statuses is not None:
        for status in statuses:
            if status not in PLAN_STATUSES:
                raise InvalidPlanError(
                    f"plan status must be one of {', '.join(PLAN_STATUSES)}, got {status!r}")
        if not statuses:
            return []
        where += f" AND p.status IN ({', '.join('?' * len(statuses))})"
        params.extend(statuses)
    rows = tx.fetch(
        f"SELECT {PLAN_COLUMNS} FROM plans p WHERE {where} ORDER BY p.created_us DESC, p.id",
        params,
    )
    return [to_plan(row) for row in rows]


def read_current_plan(tx: Tx, persona: str) -> Plan | None:
    """The persona's current plan, if one is set."""
    rows = tx.fetch(
        f"SELECT {PLAN_COLUMNS} FROM current_plans c JOIN plans p ON p.id = c.plan_id "
        "WHERE c.persona = ?",
        (persona,),
    )
    return to_plan(rows[0]) if rows else None


def set_current(tx: Tx, persona: str, plan_id: str, now_us: int, where: str) -> None:
    """Make the persona's plan ``plan_id`` its current plan (replacing any other)."""
    if not tx.fetch("SELECT 1 FROM plans WHERE id = ? AND persona = ?", (plan_id, persona)):
        raise NotFoundError(f"{where}: persona {persona!r} has no plan {plan_id!r}")
    tx.run(
        "INSERT INTO current_plans (persona, plan_id, set_us) VALUES (?, ?, ?) "
        "ON CONFLICT (persona) DO UPDATE SET plan_id = excluded.plan_id, set_us = excluded.set_us",
        (persona, plan_id, now_us),
    )


def clear_current(tx: Tx, persona: str) -> str | None:
    """Unset the persona's current plan; the id it had, if any."""
    rows = tx.fetch("SELECT plan_id FROM current_plans WHERE persona = ?", (persona,))
    tx.run("DELETE FROM current_plans WHERE persona = ?", (persona,))
    return cast(str, rows[0][0]) if rows else None


def delete_plans(tx: Tx, persona: str) -> None:
    """Delete every plan of a persona, and its current plan."""
    tx.run("DELETE FROM current_plans WHERE persona = ?", (persona,))
    tx.run("DELETE FROM plans WHERE persona = ?", (persona,))
