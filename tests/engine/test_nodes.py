"""Each node type, run through the runtime against a real store and a scripted model."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool

from saimemory.records import Persona
from sea.engine.events import MemoryWritten, Spoken, TokenChunk
from tests.engine.conftest import MakeRuntime


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_set_and_pass_loop(make_runtime: MakeRuntime, persona: Persona) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "counter_loop", "go", args={"limit": 4})
    assert result.status == "ok", result.error
    assert result.outputs == {"count": 4, "label": "n=4"}
    assert result.usage["steps"] == 1 + 4 * 2


def test_tool_args_templates_keep_types_and_legacy_paths(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime(tools=[add])
    result = runtime.run_pulse(persona, "tools_main", "")
    assert result.status == "ok", result.error
    assert result.outputs == {"sum": 42, "sum2": 11, "last_seen": 11}
    calls = [e for e in result.events if e.kind == "tool_call"]
    assert [(c.tool, c.args, c.ok) for c in calls] == [
        ("add", {"a": 40, "b": 2}, True),
        ("add", {"a": 5, "b": 6}, True),
    ]


def test_llm_tool_choice_then_tool_call_then_answer(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    script = {
        "responses": {
            "agent.think": [
                {"tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}}], "content": ""},
                "The sum is 5.",
            ]
        }
    }
    runtime, model = make_runtime(script, tools=[add])
    result = runtime.run_pulse(persona, "agent", "what is 2+3?")
    assert result.status == "ok", result.error
    assert result.outputs["r"] == 5
    assert result.outputs["fc"] is None  # the text turn clears the earlier call
    assert result.outputs["answer"] == "The sum is 5."
    second = [c for c in model.calls if c.key == "agent.think"][1]
    assert any("[tool add(" in m["content"] and "5" in m["content"] for m in second.messages)


def test_memorize_speak_say_think(
    make_runtime: MakeRuntime, persona: Persona, store: Any
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "utter", "ping", pulse_id="u1")
    assert result.status == "ok", result.error
    stored = store.pulse_messages(persona.id, "u1")
    view = [(m.role, m.content) for m in stored]
    assert view == [
        ("user", "ping"),
        ("assistant", '{"k":[1,2],"ok":true}'),
        ("user", 'Data: {"k":[1,2],"ok":true}'),
        ("assistant", "Hello Aiko"),
        ("assistant", "hmm ping"),
    ]
    assert "notes" in stored[1].tags and "node:mem" in stored[1].tags
    assert "playbook:utter" in stored[1].tags and "pulse:u1" in stored[1].tags
    assert stored[2].metadata.get("mood") == "calm"
    assert "conversation" in stored[3].tags
    assert "internal" in stored[4].tags and "conversation" not in stored[4].tags
    spoken = [e for e in result.events if isinstance(e, Spoken)]
    assert [(e.text, e.stored) for e in spoken] == [("Hello Aiko", True), ("psst", False)]
    assert spoken[1].metadata == {"mood": "calm"}
    assert result.spoken == ["Hello Aiko", "psst"]
    writes = [e for e in result.events if isinstance(e, MemoryWritten)]
    assert len(writes) == 5


def test_speaking_llm_streams_tokens_and_stores_conversation(
    make_runtime: MakeRuntime, persona: Persona, store: Any
) -> None:
    runtime, _ = make_runtime({"responses": {"sub_speak.compose": ["Hello there friend"]}})
    result = runtime.run_pulse(persona, "speak_long", "hi", pulse_id="s1")
    assert result.status == "ok", result.error
    tokens = [e for e in result.events if isinstance(e, TokenChunk)]
    assert "".join(t.text for t in tokens) == "Hello there friend"
    assert {(t.playbook, t.node) for t in tokens} == {("sub_speak", "compose")}
    replies = [m for m in store.pulse_messages(persona.id, "s1") if m.role == "assistant"]
    assert [m.content for m in replies] == ["Hello there friend"]
    assert "conversation" in replies[0].tags


def test_non_speaking_llm_emits_no_tokens(make_runtime: MakeRuntime, persona: Persona) -> None:
    answer = {"playbook": "echo_topic", "args": {"topic": "x"}}
    runtime, _ = make_runtime({"responses": {"router_main.route": [answer]}})
    result = runtime.run_pulse(persona, "router_main", "x")
    assert result.status == "ok", result.error
    assert not [e for e in result.events if isinstance(e, TokenChunk)]
    assert [r.node for r in result.llm_calls] == ["route"]
    assert result.usage["llm_calls"] == 1 and result.usage["tokens_in"] > 0


def test_node_ids_may_equal_state_channel_names(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "reserved_ids", "")
    assert result.status == "ok", result.error
    assert result.outputs == {"v": 2}


def test_graph_compiled_once_per_content(make_runtime: MakeRuntime, persona: Persona) -> None:
    runtime, _ = make_runtime()
    for _ in range(3):
        assert runtime.run_pulse(persona, "counter_loop", "").status == "ok"
    assert runtime.services.compiler.cached() == 1


def test_user_input_stored_even_when_the_pulse_fails(
    make_runtime: MakeRuntime, persona: Persona, store: Any
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "tool_raises", "hello", pulse_id="f1")
    assert result.status == "error"
    [message] = store.pulse_messages(persona.id, "f1")
    assert (message.role, message.content) == ("user", "hello")
    assert "conversation" in message.tags


def test_llm_memorize_important_and_mappings(
    make_runtime: MakeRuntime, persona: Persona, store: Any
) -> None:
    script = {
        "responses": {
            "llm_memo.sum": ["short summary"],
            "llm_memo.pick": [{"choice": "b"}],
            "llm_memo.reply": ["final words"],
        }
    }
    runtime, model = make_runtime(script)
    result = runtime.run_pulse(persona, "llm_memo", "the text", pulse_id="m1")
    assert result.status == "ok", result.error
    assert result.outputs == {
        "summary": "short summary",
        "picked": "b",
        "missing": None,
        "said": "final words",
    }
    [sum_call] = [c for c in model.calls if c.key == "llm_memo.sum"]
    prompt = sum_call.messages[-1]["content"]
    assert "Summarize the text; keep {literal_example}" in prompt  # unknown names kept
    assert [m["role"] for m in sum_call.messages] == ["system", "user"]  # worker: no history
    stored = [(m.role, m.content, m.tags) for m in store.pulse_messages(persona.id, "m1")]
    assert stored[1][0] == "user" and stored[1][1].startswith("<system>")
    assert "research" in stored[1][2]
    assert stored[2][:2] == ("assistant", "short summary") and "research" in stored[2][2]
    assert stored[3][:2] == ("assistant", "final words") and "conversation" in stored[3][2]
    assert len(stored) == 4  # the structured pick is not memorized


def test_tool_call_without_a_chosen_call_fails_the_node(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "tool_call_missing", "")
    assert result.status == "ok", result.error
    assert result.outputs["error"]["code"] == "SEA550"
    assert "no tool call in 'fc'" in result.outputs["error"]["message"]


def test_playbook_starts_with_exactly_the_builtins_and_its_inputs(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    from sea.lang.variables import BUILTIN_VARIABLES

    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "builtins", "hello", pulse_id="b1")
    assert result.status == "ok", result.error
    final = result.outputs  # no output_schema: every variable but the builtins
    assert final == {"extra": "d"}
    named = runtime.run_pulse(persona, "builtins_out", "hello", pulse_id="b2")
    assert set(named.outputs) == set(BUILTIN_VARIABLES) | {"extra"}
    assert named.outputs == {
        "input": "hello",
        "persona_id": "aiko",
        "persona_name": "Aiko",
        "pulse_id": "b2",
        "last": "hello",
        "error": None,
        "extra": "d",
    }


def test_unknown_top_level_playbook_is_an_error_result(
    make_runtime: MakeRuntime, persona: Persona, store: Any
) -> None:
    runtime, _ = make_runtime()
    result = runtime.run_pulse(persona, "no_such_playbook", "keep me", pulse_id="np")
    assert result.status == "error"
    assert result.error is not None and "no_such_playbook" in result.error["message"]
    assert [m.content for m in store.pulse_messages(persona.id, "np")] == ["keep me"]


def test_llm_call_warnings_become_warning_events(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime({"responses": {"sub_speak.compose": [""]}})
    result = runtime.run_pulse(persona, "speak_long", "hi")
    assert result.status == "ok", result.error
    warnings = [e for e in result.events if e.kind == "warning"]
    assert [(w.code, w.node) for w in warnings] == [("llm_call", "compose")]
    assert "empty" in warnings[0].message
    assert result.spoken == []  # an empty answer is not spoken


@tool
def divmod_tool(a: int, b: int) -> tuple[int, int]:
    """Quotient and remainder."""
    return divmod(a, b)


def test_tool_tuple_result_spreads_over_output_keys(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime(tools=[divmod_tool])
    result = runtime.run_pulse(persona, "tool_shapes", "")
    assert result.status == "ok", result.error
    assert result.outputs == {"quotient": 3, "remainder": 2, "first": 3}


@tool
def gather_items(items: list[dict[str, Any]], note: str = "none") -> str:
    """Count items, with a note."""
    return f"{len(items)} item(s), note {note}"


def test_a_tool_call_event_carries_the_arguments_the_tool_received(
    make_runtime: MakeRuntime, persona: Persona
) -> None:
    runtime, _ = make_runtime(tools=[gather_items])
    result = runtime.run_pulse(persona, "tool_normalized", "")
    assert result.status == "ok", result.error
    assert result.outputs == {"got": "1 item(s), note none"}  # null left out: the default
    (call,) = [e for e in result.events if e.kind == "tool_call"]
    assert call.args == {"items": [{"title": "a"}]}  # the object became a one-item list
