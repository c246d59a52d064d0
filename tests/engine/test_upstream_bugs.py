"""The three upstream behaviours of reference §5.1 (items 1, 4, 5) that must not come back."""

from __future__ import annotations

from typing import Any

import pytest

from saimemory.records import Persona
from tests.engine.conftest import MakeRuntime


def _contents(model: Any, key: str) -> list[list[dict[str, str]]]:
    return [call.messages for call in model.calls if call.key == key]


@pytest.mark.parametrize(("flag", "path"), [(True, "yes"), (False, "no")])
def test_boolean_answer_matches_lowercase_case_keys(
    make_runtime: MakeRuntime, persona: Persona, flag: bool, path: str
) -> None:
    # Upstream compared str(True) == "True" with the key "true" and always took `default`.
    runtime, _ = make_runtime({"responses": {"bool_branch.decide": [{"generate": flag}]}})
    result = runtime.run_pulse(persona, "bool_branch", "a house")
    assert result.status == "ok", result.error
    assert result.outputs["path"] == path


def test_memorized_result_reaches_speaker_in_pulse_not_next_pulse(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    # Upstream's profile nodes excluded the pulse's own memory, so the speaker never saw it.
    script = {"responses": {"sub_speak.compose": ["Cats have facts a and b.", "Dogs too."]}}
    runtime, model = make_runtime(script)
    first = runtime.run_pulse(persona, "flow_main", "cats")
    assert first.status == "ok", first.error
    assert first.spoken == ["Cats have facts a and b."]

    [sent] = _contents(model, "sub_speak.compose")
    results = [m for m in sent if "Result of gather for cats" in m["content"]]
    assert len(results) == 1
    assert results[0]["role"] == "user"
    assert results[0]["content"].lstrip().startswith("<system>")
    assert '{"facts":["a","b"],"n":2}' in results[0]["content"]  # JSON, not repr
    assert sent[-1]["content"] == results[0]["content"]  # the result comes after the input

    second = runtime.run_pulse(persona, "speak_long", "and dogs?")
    assert second.status == "ok", second.error
    later = _contents(model, "sub_speak.compose")[1]
    assert not any("Result of gather" in m["content"] for m in later)
    assert [m["content"] for m in later if m["role"] != "system"] == [
        "cats",
        "Cats have facts a and b.",
        "and dogs?",
    ]


def test_router_passes_arguments_to_the_chosen_playbook(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    # Upstream routers never produced selected_args: the callee's input resolved to "".
    answer = {"reason": "echo it", "playbook": "echo_topic", "args": {"topic": "cats"}}
    runtime, _ = make_runtime({"responses": {"router_main.route": [answer]}})
    result = runtime.run_pulse(persona, "router_main", "tell me about cats")
    assert result.status == "ok", result.error
    assert result.outputs == {"result": "topic=cats depth=1", "selected_playbook": "echo_topic"}


def test_router_enum_excludes_playbooks_that_are_not_router_callable(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    bad = {"playbook": "gather", "args": {"topic": "x"}}
    runtime, _ = make_runtime({"responses": {"router_main.route": [bad, bad, bad]}})
    result = runtime.run_pulse(persona, "router_main", "anything")
    assert result.status == "error"
    assert result.error is not None and result.error["code"] == "SEA521"
    assert result.error["node"] == "route"
