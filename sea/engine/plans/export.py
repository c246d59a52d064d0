"""Plans exported as seed 002's files, from the store (the single source of truth).

``export_plan(store, persona, plan_id, directory)`` writes::

    <directory>/<plan_id>/plan.json         the plan and its whole state (specs, approvals,
                                            preview, results), as ``plan_to_dict`` gives it
    <directory>/<plan_id>/approval.json     {"plan_id", "status", "selection", "approvals"}
    <directory>/<plan_id>/preview/<spec>.diff  the stored preview's unified diff of each spec
                                            that has one (older .diff files there removed)
    <directory>/index.json                  {"persona", "current", "plans": [...]}: every plan
                                            of the persona, newest first

``export_plans`` does the same for every plan of the persona. A directory holds one
persona's plans (its ``index.json`` lists that persona's). Files are written whole (a
temporary file renamed over the old one); JSON is UTF-8 and indented.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import orjson

from saimemory.base import MessageStore
from saimemory.errors import NotFoundError
from saimemory.plan_codec import plan_to_dict, to_jsonable
from saimemory.plans import Plan
from sea.errors import PlanError, PlanNotFound


def export_plan(store: MessageStore, persona: str, plan_id: str, directory: Path) -> list[Path]:
    """Write one plan's files and the index; the paths written, in order.

    Raises:
        PlanNotFound: the persona has no such plan.
        PlanError: a file cannot be written (the message names it).
    """
    try:
        plan = store.get_plan(persona, plan_id)
    except NotFoundError:
        raise PlanNotFound(f"persona {persona!r} has no plan {plan_id!r}") from None
    written = _plan_files(plan, directory)
    written.append(_index(store, persona, directory))
    return written


def export_plans(store: MessageStore, persona: str, directory: Path) -> list[Path]:
    """Write the files of every plan of the persona, and the index; the paths written."""
    written: list[Path] = []
    for plan in store.list_plans(persona):
        written.extend(_plan_files(plan, directory))
    written.append(_index(store, persona, directory))
    return written


def _plan_files(plan: Plan, directory: Path) -> list[Path]:
    folder = directory / _name(plan.id)
    state = plan.state
    approval = {
        "plan_id": plan.id,
        "status": state.status,
        "selection": to_jsonable(state.selection),
        "approvals": to_jsonable(state.approvals),
    }
    written = [_write_json(folder / "plan.json", plan_to_dict(plan)),
               _write_json(folder / "approval.json", approval)]
    preview = folder / "preview"
    if preview.is_dir():
        for old in preview.glob("*.diff"):
            old.unlink()
    for diff in state.previews.diffs if state.previews is not None else ():
        if diff.diff:
            written.append(_write(preview / f"{_name(diff.spec_id)}.diff", diff.diff.encode()))
    return written


def _name(text: str) -> str:
    """``text`` as one file name; a plan or spec id that is not one is refused."""
    if text in ("", ".", "..") or "/" in text or "\\" in text or "\0" in text:
        raise PlanError(f"id {text!r} cannot be used as a file name; nothing more written")
    return text


def _index(store: MessageStore, persona: str, directory: Path) -> Path:
    current = store.current_plan(persona)
    plans = [
        {
            "id": plan.id, "title": plan.title, "status": plan.state.status,
            "created_at": plan.created_at.isoformat(),
            "updated_at": plan.updated_at.isoformat() if plan.updated_at else None,
            "version": plan.version, "specs": len(plan.state.action_specs),
        }
        for plan in store.list_plans(persona)
    ]
    index = {"persona": persona, "current": current.id if current else None, "plans": plans}
    return _write_json(directory / "index.json", index)


def _write_json(path: Path, data: Any) -> Path:
    return _write(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")


def _write(path: Path, data: bytes) -> Path:
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp.write_bytes(data)
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise PlanError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
