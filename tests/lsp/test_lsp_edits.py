"""``sea lsp`` over stdio: renames whose results validate, ``sea migrate`` as a code action,
and hostile documents that never freeze or crash the server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsp_session import Session, apply, position
from lsprotocol import types as lsp

from sea.lang.loader import check_document

pytest.importorskip("pygls")

CALLEE = {
    "name": "greet", "description": "Greets someone.",
    "input_schema": [{"name": "who", "description": "who is greeted"}],
    "output_schema": ["greeting"], "start_node": "compose",
    "nodes": [
        {"id": "compose", "type": "set", "assignments": {"greeting": "Hello {who}"},
         "next": "say_it"},
        {"id": "say_it", "type": "speak", "action": "{greeting}, {who}",
         "conditional_next": {"field": "who", "cases": {"x": "compose"}, "default": None}},
    ],
}
CALLER = {
    "name": "caller", "description": "Calls greet.", "start_node": "call",
    "nodes": [
        {"id": "call", "type": "subplay", "playbook": "greet", "args": {"who": "{input}"},
         "next": "tell"},
        {"id": "tell", "type": "speak", "action": "{greeting}!"},
    ],
}


def text_of(document: dict[str, object]) -> str:
    return json.dumps(document, indent=2) + "\n"


async def renamed(session: Session, uri: str, at: lsp.Position,
                  new: str) -> dict[str, list[lsp.TextEdit]]:
    edit = await session.client.text_document_rename_async(
        lsp.RenameParams(text_document=session.doc(uri), position=at, new_name=new))
    assert edit is not None and edit.changes is not None
    return {key: list(edits) for key, edits in edit.changes.items()}


def test_renaming_a_node_and_a_variable_gives_a_playbook_that_validates(tmp_path: Path) -> None:
    path = tmp_path / "greet.json"
    path.write_text(text_of(CALLEE))

    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            assert await session.open(path) == []
            uri = path.resolve().as_uri()
            text = session.texts[uri]
            changes = await renamed(session, uri, position(text, '"compose"', after=2), "build")
            text = apply(text, changes[uri])
            assert "compose" not in text and text.count('"build"') == 3
            assert await session.change(uri, text) == []
            changes = await renamed(session, uri, position(text, "{who}", after=2), "guest")
            text = apply(text, changes[uri])
            assert "who" not in text.replace("who is greeted", "")
            assert await session.change(uri, text) == []
            assert check_document(text).diagnostics == []
            document = json.loads(text)
            assert document["input_schema"][0]["name"] == "guest"
            assert document["nodes"][1]["conditional_next"]["field"] == "guest"

    asyncio.run(scenario())


def test_renaming_a_playbook_edits_its_callers(tmp_path: Path) -> None:
    (tmp_path / "greet.json").write_text(text_of(CALLEE))
    (tmp_path / "caller.json").write_text(text_of(CALLER))

    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            await session.open(tmp_path / "greet.json")
            uri = (tmp_path / "greet.json").resolve().as_uri()
            caller = (tmp_path / "caller.json").resolve().as_uri()
            text = session.texts[uri]
            changes = await renamed(session, uri, position(text, '"greet"', after=2), "welcome")
            assert set(changes) == {uri, caller}
            renamed_callee = apply(text, changes[uri])
            renamed_caller = apply((tmp_path / "caller.json").read_text(), changes[caller])
            assert json.loads(renamed_callee)["name"] == "welcome"
            assert json.loads(renamed_caller)["nodes"][0]["playbook"] == "welcome"
            with pytest.raises(Exception, match="not a valid name"):  # an error answer
                await session.client.text_document_rename_async(lsp.RenameParams(
                    text_document=session.doc(uri), position=position(text, '"greet"', after=2),
                    new_name='a"b'))
            assert await session.open(tmp_path / "caller.json") == []  # still serving

    asyncio.run(scenario())


def test_sea_migrate_is_a_code_action(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    old = json.loads(json.dumps(CALLEE))
    old["input_schema"][0]["type"] = "str"  # a Python type name, as SAIVerse accepted
    path.write_text(text_of(old))

    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            await session.open(path)
            uri = path.resolve().as_uri()
            actions = await session.client.text_document_code_action_async(lsp.CodeActionParams(
                session.doc(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
                lsp.CodeActionContext([])))
            titles = [a.title for a in actions or []]
            migrate = [t for t in titles if t.startswith("Apply `sea migrate`")]
            from sea.lang.migrate import migrate_text

            migration = migrate_text(session.texts[uri])
            assert migration.changed and migrate == ["Apply `sea migrate` (1 change)"]
            action = next(a for a in actions or [] if a.title == migrate[0])
            assert isinstance(action, lsp.CodeAction) and action.edit and action.edit.changes
            fixed = apply(session.texts[uri], list(action.edit.changes[uri]))
            assert fixed == migration.migrated
            assert await session.change(uri, fixed) == []

    asyncio.run(scenario())


def hostile() -> dict[str, tuple[str, str | None]]:
    """Documents made to hurt, and the code of the limit each meets (None: none, it is
    only big)."""
    many = {"name": "many", "description": "d", "start_node": "n0", "nodes": [
        {"id": f"n{i}", "type": "speak", "text": "{x}", "next": f"n{i + 1}"}
        for i in range(10_000)]}
    return {
        "deep": ('{"name": "d", "start_node": "a", "nodes": [' + "[" * 5000 + "]" * 5000 + "]}",
                 "SEA003"),
        "huge": (text_of({"name": "h", "description": "d", "start_node": "a", "nodes": [
            {"id": "a", "type": "speak", "action": "x" * 2_000_000}]}), "SEA007"),
        "string": (text_of({"name": "s", "description": "d", "start_node": "a", "nodes": [
            {"id": "a", "type": "speak", "action": "y" * 900_000}]}), None),
        "template": (text_of({"name": "t", "description": "d", "start_node": "a", "nodes": [
            {"id": "a", "type": "speak", "action": "{a}" * 50_000}]}), None),
        "nodes": (json.dumps(many), "SEA090"),
    }


def test_hostile_documents_never_freeze_or_crash_the_server(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            for name, (text, code) in hostile().items():
                path = tmp_path / f"{name}.json"
                path.write_text("{}")
                # A freeze is a wait that never ends: the guard is generous, since a busy
                # shared machine may take a while over the largest document (no timing).
                diagnostics = await asyncio.wait_for(session.open(path, text), 600)
                if code is not None:
                    assert code in {str(d.code) for d in diagnostics}, name
            # and it still answers
            ok = tmp_path / "ok.json"
            ok.write_text(text_of(CALLEE))
            assert await session.open(ok) == []

    asyncio.run(scenario())
