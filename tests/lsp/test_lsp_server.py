"""``sea lsp`` driven as a real process by a real LSP client (pytest-lsp) over stdio:
diagnostics as ``sea validate`` reports them, completion, hover, navigation, rename, quick
fixes, the outline and the graph command, on the bundled playbooks and on broken ones."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from lsp_session import Session, apply, position
from lsprotocol import types as lsp

from sea.cli.validate import collect
from sea.lang.loader import check_document
from sea.resources import bundled_playbooks_dir

pytest.importorskip("pygls")

CALLEE = {
    "name": "greet", "description": "Greets someone.",
    "input_schema": [{"name": "who", "description": "who is greeted"}],
    "output_schema": ["greeting"], "start_node": "compose",
    "nodes": [
        {"id": "compose", "type": "set", "assignments": {"greeting": "Hello {who}"},
         "next": "say_it"},
        {"id": "say_it", "type": "speak", "action": "{greeting}"},
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
    """A playbook as an author writes it: indented, one member a line."""
    return json.dumps(document, indent=2) + "\n"


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())


def codes(diagnostics: list[lsp.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


def test_the_bundled_playbooks_get_the_diagnostics_of_sea_validate(tmp_path: Path) -> None:
    directory = tmp_path / "playbooks"
    directory.mkdir()
    for source in sorted(bundled_playbooks_dir().glob("*.json")):
        (directory / source.name).write_text(source.read_text())
    broken = json.loads((directory / "sub_plan.json").read_text())
    broken["nodes"][0]["next"] = "nowhere"
    (directory / "sub_plan.json").write_text(text_of(broken))
    expected, _ = collect([directory], None)
    assert expected  # the broken copy has some

    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            found = []
            for path in sorted(directory.glob("*.json")):
                for d in await session.open(path):
                    found.append((path.name, str(d.code), d.range.start.line + 1,
                                  d.range.start.character + 1, d.message.split("\nhint:")[0]))
        assert sorted(found) == sorted(
            (Path(str(d.file)).name, d.code, d.line, d.column, d.message) for d in expected)

    run(scenario)


def test_a_did_you_mean_is_a_quick_fix_whose_result_validates(tmp_path: Path) -> None:
    path = tmp_path / "greet.json"
    document = json.loads(json.dumps(CALLEE))
    document["nodes"][0]["next"] = "say_itt"
    path.write_text(text_of(document))

    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            diagnostics = await session.open(path)
            assert codes(diagnostics) == ["SEA022"]
            uri = path.resolve().as_uri()
            [problem] = diagnostics
            text = session.texts[uri]
            assert problem.range.start == position(text, '"say_itt"')
            assert "did you mean `say_it`" in problem.message
            actions = await session.client.text_document_code_action_async(
                lsp.CodeActionParams(session.doc(uri), problem.range,
                                     lsp.CodeActionContext([problem])))
            fix = next(a for a in actions or [] if isinstance(a, lsp.CodeAction)
                       and a.title == "Change to `say_it`")
            assert fix.edit is not None and fix.edit.changes is not None
            fixed = apply(text, list(fix.edit.changes[uri]))
            assert await session.change(uri, fixed) == []
            assert check_document(fixed).diagnostics == []

    run(scenario)


def test_a_callee_changed_in_one_window_rechecks_its_caller_in_another(tmp_path: Path) -> None:
    (tmp_path / "greet.json").write_text(text_of(CALLEE))
    (tmp_path / "caller.json").write_text(text_of(CALLER))

    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            assert await session.open(tmp_path / "caller.json") == []
            assert await session.open(tmp_path / "greet.json") == []
            callee = (tmp_path / "greet.json").resolve().as_uri()
            caller = (tmp_path / "caller.json").resolve().as_uri()
            changed = json.loads(json.dumps(CALLEE))
            changed["input_schema"].append({"name": "mood", "description": "how",
                                            "required": True})
            session.send_change(callee, text_of(changed))  # not saved: the editor's text
            assert await session.wait_for(callee) == []
            [missing] = await session.wait_for(caller)
            assert missing.code == "SEA045" or "mood" in missing.message
            actions = await session.client.text_document_code_action_async(
                lsp.CodeActionParams(session.doc(caller), missing.range,
                                     lsp.CodeActionContext([missing])))
            fix = next(a for a in actions or [] if isinstance(a, lsp.CodeAction)
                       and "mood" in a.title)
            assert fix.edit is not None and fix.edit.changes is not None
            fixed = apply(session.texts[caller], list(fix.edit.changes[caller]))
            assert await session.change(caller, fixed) == []
            # a callee half typed keeps, for its callers, the parameters it last had
            half = text_of(changed)[:-20]
            assert codes(await session.change(callee, half)) == ["SEA003"]
            (tmp_path / "again.json").write_text(fixed.replace('"caller"', '"again"'))
            assert await session.open(tmp_path / "again.json") == []

    run(scenario)


def test_a_file_of_invalid_json_is_located_and_still_completes(tmp_path: Path) -> None:
    path = tmp_path / "greet.json"
    path.write_text(text_of(CALLEE))

    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            assert await session.open(path) == []
            uri = path.resolve().as_uri()
            text = session.texts[uri]
            typing = text.replace('"next": "say_it"', '"next": "sa', 1)
            [problem] = await session.change(uri, typing)
            assert problem.code == "SEA003"
            assert problem.range.start.line == position(typing, '"next": "sa').line
            where = position(typing, '"next": "sa', after=len('"next": "sa'))
            completion = await session.client.text_document_completion_async(
                lsp.CompletionParams(session.doc(uri), where))
            assert completion is not None and not isinstance(completion, list)
            assert {"compose", "say_it"} <= {item.label for item in completion.items}
            # what can be found before the error is reported with it; what the rest of the
            # text would decide (a node or variable defined further on) is not
            mistaken = json.loads(json.dumps(CALLEE))
            mistaken["nodes"][0]["colour"] = "red"
            half = text_of(mistaken).replace('"action": "{greeting}"', '"action": "{greet', 1)
            found = await session.change(uri, half)
            assert codes(found) == ["SEA003", "SEA011"]
            unknown = next(d for d in found if d.code == "SEA011")
            assert unknown.range.start == position(half, '"colour"')

    run(scenario)


def test_completion_of_types_fields_ids_playbooks_tools_and_variables(tmp_path: Path) -> None:
    (tmp_path / "greet.json").write_text(text_of(CALLEE))
    path = tmp_path / "caller.json"
    path.write_text(text_of(CALLER))

    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            await session.open(path)
            uri = path.resolve().as_uri()
            text = session.texts[uri]

            async def labels(at: lsp.Position) -> dict[str, lsp.CompletionItem]:
                found = await session.client.text_document_completion_async(
                    lsp.CompletionParams(session.doc(uri), at))
                assert isinstance(found, lsp.CompletionList)
                return {item.label: item for item in found.items}

            assert {"speak", "subplay", "tool", "llm"} <= set(
                await labels(position(text, '"subplay"', after=1)))
            fields = await labels(position(text, '"playbook"', after=1))
            assert {"playbook", "args", "next", "error_next"} <= set(fields)
            doc = fields["playbook"].documentation
            assert isinstance(doc, lsp.MarkupContent) and "playbook to call" in doc.value
            assert set(await labels(position(text, '"tell"', after=1, occurrence=1))) == {
                "call", "tell"}
            assert {"greet", "caller", "sub_speak"} <= set(
                await labels(position(text, '"greet"', after=1)))
            assert set(await labels(position(text, '"who"', after=1))) == {"who"}
            variables = await labels(position(text, "{greeting}", after=1))
            assert variables["greeting"].detail == "defined before this node"
            as_tool = json.loads(json.dumps(CALLER))
            as_tool["nodes"][1]["type"] = "tool"
            tools = text_of(as_tool)
            await session.change(uri, tools)
            assert "memory_search" in await labels(position(tools, '"{greeting}!"', after=1))

    run(scenario)


def test_hover_explains_fields_variables_callees_and_tools(tmp_path: Path) -> None:
    (tmp_path / "greet.json").write_text(text_of(CALLEE))
    path = tmp_path / "caller.json"
    path.write_text(text_of(CALLER))

    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            await session.open(path)
            uri = path.resolve().as_uri()
            text = session.texts[uri]

            async def hover(at: lsp.Position) -> str:
                found = await session.client.text_document_hover_async(
                    lsp.HoverParams(session.doc(uri), at))
                assert found is not None and isinstance(found.contents, lsp.MarkupContent)
                return found.contents.value

            assert "playbook to call" in await hover(position(text, '"playbook"', after=2))
            callee = await hover(position(text, '"greet"', after=2))
            assert "Greets someone." in callee and "`who`" in callee
            variable = await hover(position(text, "{greeting}", after=3))
            assert "`greeting`" in variable and "`call`" in variable and "`tell`" in variable
            as_tool = json.loads(json.dumps(CALLER))
            as_tool["nodes"][1].update(type="tool", action="memory_search")
            tools = text_of(as_tool)
            await session.change(uri, tools)
            assert "query" in await hover(position(tools, "memory_search", after=2))

    run(scenario)


def test_definition_and_references_of_nodes_playbooks_and_variables(tmp_path: Path) -> None:
    (tmp_path / "greet.json").write_text(text_of(CALLEE))
    path = tmp_path / "caller.json"
    path.write_text(text_of(CALLER))

    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            await session.open(path)
            uri = path.resolve().as_uri()
            text = session.texts[uri]
            node = await session.client.text_document_definition_async(
                lsp.DefinitionParams(session.doc(uri), position(text, '"tell"', after=2)))
            assert isinstance(node, list) and node[0].range.start == position(
                text, '"tell"', occurrence=2)
            playbook = await session.client.text_document_definition_async(
                lsp.DefinitionParams(session.doc(uri), position(text, '"greet"', after=2)))
            assert isinstance(playbook, list)
            assert playbook[0].uri == (tmp_path / "greet.json").resolve().as_uri()
            refs = await session.client.text_document_references_async(lsp.ReferenceParams(
                text_document=session.doc(uri),
                position=position(text, '"call"', after=2, occurrence=2),
                context=lsp.ReferenceContext(include_declaration=True)))
            assert refs is not None and [r.range.start for r in refs] == [
                position(text, '"call"', occurrence=1), position(text, '"call"', occurrence=2)]
            reads = await session.client.text_document_references_async(lsp.ReferenceParams(
                text_document=session.doc(uri), position=position(text, "{greeting}", after=2),
                context=lsp.ReferenceContext(include_declaration=False)))
            assert reads is not None and [r.range.start for r in reads] == [
                position(text, "{greeting}", after=1)]

    run(scenario)


def test_symbols_and_the_graph_command(tmp_path: Path) -> None:
    path = tmp_path / "greet.json"
    path.write_text(text_of(CALLEE))

    async def scenario() -> None:
        async with Session(cwd=tmp_path) as session:
            await session.open(path)
            uri = path.resolve().as_uri()
            symbols = await session.client.text_document_document_symbol_async(
                lsp.DocumentSymbolParams(session.doc(uri)))
            assert symbols is not None
            assert [(s.name, getattr(s, "detail", None)) for s in symbols] == [
                ("compose", "set"), ("say_it", "speak")]
            graph = await session.client.workspace_execute_command_async(
                lsp.ExecuteCommandParams("sea.graph", [uri]))
            assert isinstance(graph, str) and graph.startswith("flowchart TD")
            assert "say_it" in graph

    run(scenario)
