"""SAIVerse's current playbook format, in a playbook set of our own shaped like its research
chain (``tests/data/saiverse_current``): a router-callable playbook calls a research step,
which runs a source playbook that is not router-callable by a name it spells itself
(``"source_{route_result.source}"``), with ``"action": null`` on ``exec``, parameters
without ``required`` left out by their callers, and a ``contains`` branch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from saimemory.sqlite import SQLiteStore
from sea.lang.checks.context import CheckContext
from sea.lang.library import PlaybookLibrary
from sea.lang.loader import check_document
from sea.lang.migrate import migrate_text
from tests.e2e.conftest import PERSONA, MakeRuntime, contents, request_of

CURRENT = Path(__file__).resolve().parent.parent / "data" / "saiverse_current"

TASK = {"objective": "when did Tama arrive", "depth": "shallow"}


def _ran(result: Any) -> list[str]:
    return [f"{e.playbook}.{e.node}" for e in result.events if e.kind == "node_start"]


def test_the_research_chain_validates_without_errors() -> None:
    library = PlaybookLibrary([CURRENT])
    for name in library.names():
        result = library.check(name)
        assert result.errors == [], [d.format_human() for d in result.errors]
        # no warning that `research_result` may come only from a callee exec may not run
        assert "SEA039" not in {d.code for d in result.diagnostics}


def test_the_research_chain_runs_as_is(make_runtime: MakeRuntime, store: SQLiteStore) -> None:
    runtime = make_runtime(
        {
            "digest_notes.plan": [TASK],
            "research_step.route": [{"source": "notes"}],
            "source_notes.evaluate": [{"status": "not_found", "summary": "nothing in the notes"}],
            "source_log.evaluate": [{"status": "found", "summary": "Tama came in May"}],
        },
        dirs=(CURRENT,),
    )
    result = runtime.run_pulse(PERSONA, "digest_notes", "When did my cat Tama arrive?")
    assert result.status == "ok", result.error
    ran = _ran(result)
    assert ran.index("source_notes.evaluate") < ran.index("research_step.retry")
    assert "source_log.evaluate" in ran
    # a shallow task: one round; the parameter nobody passed (`task_index`) is optional
    assert "up to 1 rounds" in contents(request_of(result, "source_notes", "evaluate"))
    # `max_iterations` not passed to source_log: optional, rendered empty
    assert "(up to  rounds)" in contents(request_of(result, "source_log", "evaluate"))
    texts = [m.content for m in store.recent(PERSONA.id, limit=20)]
    assert any("Research (found): Tama came in May" in t for t in texts), texts


def test_a_shallow_find_goes_no_further(make_runtime: MakeRuntime) -> None:
    runtime = make_runtime(
        {
            "digest_notes.plan": [TASK],
            "research_step.route": [{"source": "log"}],
            "source_log.evaluate": [{"status": "found", "summary": "Tama came in May"}],
        },
        dirs=(CURRENT,),
    )
    result = runtime.run_pulse(PERSONA, "digest_notes", "When did Tama arrive?")
    assert result.status == "ok", result.error
    assert "research_step.retry" not in _ran(result)


def test_exec_still_refuses_a_name_the_playbook_does_not_spell(
    make_runtime: MakeRuntime, tmp_path: Path
) -> None:
    step = json.loads((CURRENT / "research_step.json").read_text())
    for node in step["nodes"]:
        if node["id"] == "prepare":  # the whole name now comes from the model
            node["assignments"]["selected_playbook"] = "{route_result.source}"
    (tmp_path / "research_step.json").write_text(json.dumps(step))
    for name in ("digest_notes", "source_notes", "source_log"):
        (tmp_path / f"{name}.json").write_text((CURRENT / f"{name}.json").read_text())
    step["nodes"][2]["response_schema"]["properties"]["source"]["enum"] = ["source_notes"]
    (tmp_path / "research_step.json").write_text(json.dumps(step))
    runtime = make_runtime(
        {"digest_notes.plan": [TASK], "research_step.route": [{"source": "source_notes"}]},
        dirs=(tmp_path,),
    )
    result = runtime.run_pulse(PERSONA, "digest_notes", "When did Tama arrive?")
    assert result.status == "error"
    assert result.error is not None and "may not be run here" in result.error["message"]


def test_migrate_writes_the_allow_list_and_drops_the_null_action() -> None:
    library = PlaybookLibrary([CURRENT])
    text = (CURRENT / "research_step.json").read_text()
    migrated = json.loads(migrate_text(text, context=CheckContext(library)).migrated or "")
    nodes = {node["id"]: node for node in migrated["nodes"]}
    assert "action" not in nodes["run_source"]
    allowed = ["source_log", "source_notes", "digest_notes"]  # spelled, then router-callable
    assert nodes["run_source"]["allowed_playbooks"] == allowed
    assert nodes["run_again"]["allowed_playbooks"] == allowed


@pytest.mark.parametrize("name", ["digest_notes", "source_log", "source_notes"])
def test_migrate_leaves_the_rest_of_the_chain_alone(name: str) -> None:
    library = PlaybookLibrary([CURRENT])
    text = (CURRENT / f"{name}.json").read_text()
    migration = migrate_text(text, context=CheckContext(library))
    assert [c.pointer for c in migration.changes if "allowed_playbooks" in c.pointer] == []


DRAWER = {
    "name": "drawer", "description": "Draws a picture and reports it.",
    "input_schema": [{"name": "subject", "param_type": "string", "description": "What"}],
    "output_schema": ["picture"], "can_run_as_child": True,
    "report_template": "Drew {subject} as {picture.title} ({picture.size} px), left {untouched}",
    "start_node": "draw",
    "nodes": [{"id": "draw", "type": "set",
               "assignments": {"picture": {"title": "Tama", "size": 64}}}],
}
ASKER = {
    "name": "asker", "description": "Has a picture drawn and says what came back.",
    "input_schema": [{"name": "input", "description": "The request"}],
    "start_node": "draw",
    "nodes": [
        {"id": "draw", "type": "subplay", "playbook": "drawer", "args": {"subject": "a cat"},
         "next": "tell"},
        {"id": "tell", "type": "say", "action": "{report_to_parent}"},
    ],
}


def test_a_report_template_reaches_the_caller_without_a_model_call(
    make_runtime: MakeRuntime, tmp_path: Path
) -> None:
    for playbook in (DRAWER, ASKER):
        (tmp_path / f"{playbook['name']}.json").write_text(json.dumps(playbook))
    library = PlaybookLibrary([tmp_path])
    assert library.check("asker").errors == []  # report_to_parent is known to the caller
    (warned,) = library.check("drawer").diagnostics  # `{untouched}`: nothing defines it
    assert (warned.code, warned.pointer) == ("SEA031", "/report_template")
    runtime = make_runtime({}, dirs=(tmp_path,))
    result = runtime.run_pulse(PERSONA, "asker", "Draw me a cat")
    assert result.status == "ok", result.error
    assert result.spoken == ["Drew a cat as Tama (64 px), left {untouched}"]
    assert result.llm_calls == []


@pytest.mark.parametrize(
    ("extra", "codes"),
    [
        ({}, ["SEA053"]),
        ({"report_template": "done"}, []),
        ({"can_run_as_child": False}, []),
    ],
)
def test_a_playbook_that_can_run_as_child_must_report(
    extra: dict[str, Any], codes: list[str]
) -> None:
    document = {**DRAWER, **extra}
    if "report_template" not in extra:
        del document["report_template"]
    result = check_document(json.dumps(document).encode())
    assert [d.code for d in result.diagnostics] == codes


def test_a_report_in_a_models_answer_is_a_report() -> None:
    document = {**DRAWER, "nodes": [{
        "id": "draw", "type": "llm", "action": "Draw {subject}", "output_key": "picture",
        "response_schema": {"type": "object", "properties": {
            "title": {"type": "string"}, "report_to_parent": {"type": "string"}}},
    }]}
    del document["report_template"]
    assert check_document(json.dumps(document).encode()).diagnostics == []


NOTE_TAKER = {
    "name": "note_taker", "description": "Writes a note (SAIVerse's older parameter form).",
    "input_schema": [
        {"name": "text", "description": "What to note", "source": "input"},
        {"name": "topic", "description": "The caller's topic", "source": "parent.plan.topic"},
    ],
    "output_schema": ["note"],
    "start_node": "write",
    "nodes": [{"id": "write", "type": "set", "assignments": {"note": "[{topic}] {text}"}}],
}
PLANNER = {
    "name": "planner", "description": "Plans, then has a note taken.",
    "input_schema": [{"name": "input", "description": "The request"}],
    "start_node": "plan",
    "nodes": [
        {"id": "plan", "type": "set", "assignments": {"plan": {"topic": "pets"}},
         "next": "take"},
        {"id": "take", "type": "subplay", "playbook": "note_taker",
         "input_template": "Remember: {input}", "next": "tell"},
        {"id": "tell", "type": "say", "action": "{note}"},
    ],
}


def _older_form(tmp_path: Path) -> PlaybookLibrary:
    for playbook in (NOTE_TAKER, PLANNER):
        (tmp_path / f"{playbook['name']}.json").write_text(json.dumps(playbook, indent=1))
    return PlaybookLibrary([tmp_path])


def test_a_parameters_source_and_a_calls_input_template_run_as_they_did(
    make_runtime: MakeRuntime, tmp_path: Path
) -> None:
    library = _older_form(tmp_path)
    for name in ("planner", "note_taker"):
        assert library.check(name).diagnostics == [], name
    runtime = make_runtime({}, dirs=(tmp_path,))
    result = runtime.run_pulse(PERSONA, "planner", "Tama likes boxes")
    assert result.status == "ok", result.error
    assert result.spoken == ["[pets] Remember: Tama likes boxes"]


def test_migrate_writes_the_sources_into_the_callers_args(
    make_runtime: MakeRuntime, tmp_path: Path
) -> None:
    library = _older_form(tmp_path)
    context = CheckContext(library)
    for name in ("planner", "note_taker"):
        path = tmp_path / f"{name}.json"
        migration = migrate_text(path.read_text(), context=context)
        assert migration.migrated is not None
        path.write_text(migration.migrated)
    planner = json.loads((tmp_path / "planner.json").read_text())
    assert planner["nodes"][1]["args"] == {"input": "Remember: {input}",
                                           "text": "Remember: {input}", "topic": "{plan.topic}"}
    callee = json.loads((tmp_path / "note_taker.json").read_text())
    assert all("source" not in param for param in callee["input_schema"])
    migrated = PlaybookLibrary([tmp_path])
    # a second migration changes nothing
    for name in ("planner", "note_taker"):
        text = (tmp_path / f"{name}.json").read_text()
        assert migrate_text(text, context=CheckContext(migrated)).changes == ()
    runtime = make_runtime({}, dirs=(tmp_path,))
    result = runtime.run_pulse(PERSONA, "planner", "Tama likes boxes")
    assert result.status == "ok", result.error
    assert result.spoken == ["[pets] Remember: Tama likes boxes"]


def test_a_playbook_can_pause_where_a_callee_it_spells_can() -> None:
    from sea.engine.compiler import Compiler
    from sea.engine.waits import ALWAYS, NEVER, Policy, may_wait
    from sea.nodes import builtin_registry

    library = PlaybookLibrary([CURRENT])
    waits = Compiler(builtin_registry()).compiled(library.get("research_step"), "h").waits
    assert waits.spelled == ("source_[a-z0-9_]+", "source_log")  # the retry spells one whole

    def policy(asking: str) -> Policy:
        return Policy((), False, lambda name: ALWAYS if name == asking else NEVER,
                      lambda: ["digest_notes"], library.names)

    assert may_wait(waits, policy("source_log"))  # source_log asks a person: so may it
    assert not may_wait(waits, policy("unrelated"))
