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
temporary file renamed over the old one); JSON is UTF-8 and indented. Nothing inside the
directory is reached through a symbolic link: one planted there (for the plan's folder, its
``preview`` folder or a file) makes the export fail with nothing written through it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from saimemory.base import MessageStore
from saimemory.errors import NotFoundError
from saimemory.plan_codec import plan_to_dict, to_jsonable
from saimemory.plans import Plan
from sea.engine.plans import fsops
from sea.errors import PlanError, PlanNotFound


def export_plan(store: MessageStore, persona: str, plan_id: str, directory: Path) -> list[Path]:
    """Write one plan's files and the index; the paths written, in order.

    Raises:
        PlanNotFound: the persona has no such plan.
        PlanError: a file cannot be written (the message names it), or a symbolic link is
            on the way to it inside ``directory``.
    """
    try:
        plan = store.get_plan(persona, plan_id)
    except NotFoundError:
        raise PlanNotFound(f"persona {persona!r} has no plan {plan_id!r}") from None
    out = _Output(directory)
    written = _plan_files(plan, out)
    written.append(_index(store, persona, out))
    return written


def export_plans(store: MessageStore, persona: str, directory: Path) -> list[Path]:
    """Write the files of every plan of the persona, and the index; the paths written."""
    out = _Output(directory)
    written: list[Path] = []
    for plan in store.list_plans(persona):
        written.extend(_plan_files(plan, out))
    written.append(_index(store, persona, out))
    return written


class _Output:
    """The export directory: every file and folder in it is reached from it without
    following a symbolic link (:mod:`sea.engine.plans.fsops`), so a link planted there
    cannot send a write, or the removal of an old diff, elsewhere."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self.root = directory.resolve(strict=True)
        except OSError as exc:
            raise PlanError(f"cannot make {directory}: {exc.strerror or exc}") from None

    def write(self, parts: tuple[str, ...], data: bytes) -> Path:
        try:
            fsops.write_file(self.root, parts, data, exclusive=False)
        except fsops.FsError as exc:
            raise PlanError(f"cannot write {self.directory.joinpath(*parts)}: {exc}; "
                            "nothing more written") from None
        return self.directory.joinpath(*parts)

    def clear(self, parts: tuple[str, ...], suffix: str) -> None:
        try:
            for name in fsops.names(self.root, parts):
                if name.endswith(suffix):
                    fsops.remove(self.root, (*parts, name))
        except fsops.FsError as exc:
            raise PlanError(f"cannot clear {self.directory.joinpath(*parts)}: {exc}; "
                            "nothing more written") from None


def _plan_files(plan: Plan, out: _Output) -> list[Path]:
    folder = _name(plan.id)
    state = plan.state
    approval = {
        "plan_id": plan.id,
        "status": state.status,
        "selection": to_jsonable(state.selection),
        "approvals": to_jsonable(state.approvals),
    }
    written = [_write_json(out, (folder, "plan.json"), plan_to_dict(plan)),
               _write_json(out, (folder, "approval.json"), approval)]
    out.clear((folder, "preview"), ".diff")
    for diff in state.previews.diffs if state.previews is not None else ():
        if diff.diff:
            written.append(out.write((folder, "preview", f"{_name(diff.spec_id)}.diff"),
                                     diff.diff.encode()))
    return written


def _name(text: str) -> str:
    """``text`` as one file name; a plan or spec id that is not one is refused."""
    if text in ("", ".", "..") or "/" in text or "\\" in text or "\0" in text:
        raise PlanError(f"id {text!r} cannot be used as a file name; nothing more written")
    return text


def _index(store: MessageStore, persona: str, out: _Output) -> Path:
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
    return _write_json(out, ("index.json",), index)


def _write_json(out: _Output, parts: tuple[str, ...], data: Any) -> Path:
    return out.write(parts, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
