"""The ranked router (``sub_router_user``) on the scripted model: a lexical prior leaves the
few likeliest playbooks (``rank_playbooks``), the model chooses among them under the grammar
(``choices_from``), and when one is left no model is asked. A scripted stand-in for a large
model that always answers right must route every case of the routing eval set right: the
narrowing never takes the right playbook away."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from saimemory import NewMessage
from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.tools.route_prior import Entry, rank
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.lang.models import Playbook
from sea.llm.models import ModelSet
from sea.nodes.llm import narrowed

ROUTING_SET = Path(__file__).parents[2] / "evals" / "routing.yaml"
DOC = yaml.safe_load(ROUTING_SET.read_text(encoding="utf-8"))
CASES = [{**DOC["defaults"], **case} for case in DOC["cases"]]


def route(tmp: Path, case: dict[str, Any], script: dict[str, Any],
          library: PlaybookLibrary | None = None) -> tuple[Any, ScriptedChatModel]:
    persona = Persona("aoi", "Aoi", "You are Aoi.")
    workspace = tmp / "ws"
    for rel, text in case["persona"]["files"].items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text, encoding="utf-8")
    store = SQLiteStore(tmp / "memory.sqlite")
    store.append_many([NewMessage("aoi", m["role"], m["content"], tags=("conversation",))
                       for m in case["persona"]["messages"]])
    model = ScriptedChatModel.from_mapping({"responses": script})
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(model),
                                    library=library or PlaybookLibrary.bundled(),
                                    workspace=workspace, checkpoint_path=tmp / "cp.sqlite"))
    try:
        return runtime.run_pulse(persona, "sub_router_user", case["input"]), model
    finally:
        runtime.close()
        store.close()


def right(case: dict[str, Any]) -> list[str]:
    expect = case["expect"]
    return list(expect.get("route_any") or [expect["route"]])


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_a_model_that_answers_right_routes_every_case_right(
    tmp_path: Path, case: dict[str, Any]
) -> None:
    entries = [Entry(p.name, p.description, tuple(p.examples))
               for p in PlaybookLibrary.bundled().router_callable()]
    offered = rank(case["input"], entries).candidates
    answer = next((name for name in right(case) if name in offered), right(case)[0])
    result, model = route(tmp_path, case, {
        "sub_router_user.decide": [{"playbook": answer, "reason": "the right one"}]})
    assert result.status == "ok", result.error
    assert result.outputs["selected_playbook"] in right(case)
    asked = [c for c in model.calls if c.key == "sub_router_user.decide"]
    assert len(asked) == (0 if len(offered) == 1 else 1)


def test_one_candidate_left_asks_no_model_and_says_why(tmp_path: Path) -> None:
    case = {**CASES[0], "input": "why is the sky blue"}
    result, model = route(tmp_path, case, {})
    assert result.outputs["selected_playbook"] == "basic_chat"
    assert result.outputs["router_reason"] == "the only likely playbook"
    assert model.calls == []
    tools = [e.tool for e in result.events if e.kind == "tool_call"]
    assert tools == ["rank_playbooks"]


def test_the_model_sees_only_the_candidates_and_may_not_choose_another(
    tmp_path: Path
) -> None:
    case = {**CASES[0], "input": "I forgot, who am I travelling with?"}
    entries = [Entry(p.name, p.description, tuple(p.examples))
               for p in PlaybookLibrary.bundled().router_callable()]
    offered = rank(case["input"], entries).candidates
    assert 1 < len(offered) < 6 and "sub_act" not in offered
    result, model = route(tmp_path, case, {"sub_router_user.decide": [
        {"playbook": "sub_act", "reason": "wrong"}] * 3})
    assert result.status == "error"
    [first, *_] = [c for c in model.calls if c.key == "sub_router_user.decide"]
    prompt = first.messages[-1]["content"]
    assert all(f'"name":"{name}"' in prompt for name in offered)
    assert '"name":"sub_act"' not in prompt


def test_narrowing_keeps_the_offered_names_in_the_choices_order() -> None:
    offered = ["basic_chat", "memory_recall", "sub_act"]
    assert narrowed(offered, ["sub_act", "nope", "basic_chat", "sub_act"]) == [
        "sub_act", "basic_chat"]
    assert narrowed(offered, ["nope"]) == offered
    assert narrowed(offered, None) == offered
    assert narrowed(offered, "sub_act") == offered


def test_examples_belong_to_router_callable_playbooks() -> None:
    doc = json.loads((Path(__file__).parents[2] / "playbooks" / "basic_chat.json").read_text())
    Playbook.model_validate(doc)
    with pytest.raises(ValueError, match="router_callable: true"):
        Playbook.model_validate({**doc, "router_callable": False})
    with pytest.raises(ValueError, match="examples"):
        Playbook.model_validate({**doc, "examples": [""]})
