"""The bundled playbooks run as a persona would: routing, gathering, speaking, remembering."""

from __future__ import annotations

import json

from saimemory.records import NewMessage
from saimemory.sqlite import SQLiteStore
from tests.e2e.conftest import PERSONA, MakeRuntime, contents, request_of

GREETING = {"playbook": "basic_chat", "reason": "a greeting needs no lookup"}


def _nodes(result: object) -> list[str]:
    return [f"{e.playbook}.{e.node}" for e in result.events if e.kind == "node_start"]  # type: ignore[attr-defined]


def test_meta_user_basic_chat_speaks_directly_and_remembers(
    make_runtime: MakeRuntime, store: SQLiteStore
) -> None:
    runtime = make_runtime({
        "sub_router_user.decide": [GREETING, GREETING],
        "sub_speak.compose": ["Hello! I'm Aoi.", "You said hello a moment ago."],
    })
    first = runtime.run_pulse(PERSONA, "meta_user", "Hello, who are you?")
    assert first.status == "ok", first.error
    assert first.spoken == ["Hello! I'm Aoi."]
    assert "meta_user.run" not in _nodes(first)

    second = runtime.run_pulse(PERSONA, "meta_user", "What did I just say?")
    assert second.spoken == ["You said hello a moment ago."]
    seen = contents(request_of(second, "sub_speak", "compose"))
    assert "Hello, who are you?" in seen and "Hello! I'm Aoi." in seen
    conversation = [m.content for m in store.recent(PERSONA.id, limit=10)
                    if "conversation" in m.tags]
    assert conversation == [
        "Hello, who are you?", "Hello! I'm Aoi.", "What did I just say?",
        "You said hello a moment ago.",
    ]


def test_meta_user_exec_branch_hands_results_to_the_speaker_for_this_pulse_only(
    make_runtime: MakeRuntime,
) -> None:
    recall = {"playbook": "memory_recall", "args": {"query": "cat"}, "reason": "asks about before"}
    runtime = make_runtime({
        "sub_router_user.decide": [GREETING, recall, GREETING],
        "sub_speak.compose": ["Oh, a cat named Tama!", "Your cat is Tama.", "Anytime."],
    })
    runtime.run_pulse(PERSONA, "meta_user", "My cat is called Tama.")
    asked = runtime.run_pulse(PERSONA, "meta_user", "Do you remember my cat's name?")
    assert asked.status == "ok", asked.error
    assert "meta_user.run" in _nodes(asked)
    memo = [w for w in asked.memory_writes if w.playbook == "memory_recall"]
    assert len(memo) == 1 and memo[0].role == "user" and "conversation" not in memo[0].tags
    assert memo[0].content.startswith("<system>") and "Tama" in memo[0].content
    assert memo[0].content in contents(request_of(asked, "sub_speak", "compose"))

    later = runtime.run_pulse(PERSONA, "meta_user", "Thanks!")
    assert memo[0].content not in contents(request_of(later, "sub_speak", "compose"))
    assert "Your cat is Tama." in contents(request_of(later, "sub_speak", "compose"))


def test_router_arguments_reach_the_chosen_playbook(make_runtime: MakeRuntime) -> None:
    recall = {"playbook": "memory_recall", "args": {"query": "Tama"}, "reason": "recall"}
    runtime = make_runtime({
        "sub_router_user.decide": [recall],
        "sub_speak.compose": ["Tama, of course."],
    })
    result = runtime.run_pulse(PERSONA, "meta_user", "Who is my cat again?")
    searches = [e for e in result.events if e.kind == "tool_call" and e.tool == "memory_search"]
    assert [s.args["query"] for s in searches] == ["Tama"]


def test_memory_research_findings_reach_sub_speak_in_the_same_pulse_only(
    make_runtime: MakeRuntime,
) -> None:
    research = {"playbook": "memory_research", "args": {"query": "the user's pets"},
                "reason": "needs several searches"}
    runtime = make_runtime({
        "sub_router_user.decide": [GREETING, research, GREETING],
        "memory_research.plan": [{"queries": ["cat", "Tama"]}],
        "memory_research.summarize": ["The user has a cat named Tama who likes boxes."],
        "sub_speak.compose": ["Cute!", "You have a cat, Tama, who loves boxes.", "Bye!"],
    })
    runtime.run_pulse(PERSONA, "meta_user", "My cat Tama loves cardboard boxes.")
    result = runtime.run_pulse(PERSONA, "meta_user", "What do you know about my pets?")
    assert result.status == "ok", result.error
    searches = [e.args["query"] for e in result.events
                if e.kind == "tool_call" and e.tool == "memory_search"]
    assert searches == ["cat", "Tama"]
    memo = [w for w in result.memory_writes if w.playbook == "memory_research"]
    assert len(memo) == 1 and memo[0].role == "user"
    assert "memory_research" in memo[0].tags and "conversation" not in memo[0].tags
    assert "cat named Tama who likes boxes" in memo[0].content
    spoken_request = contents(request_of(result, "sub_speak", "compose"))
    assert memo[0].content in spoken_request
    assert result.spoken == ["You have a cat, Tama, who loves boxes."]

    later = runtime.run_pulse(PERSONA, "meta_user", "Bye")
    assert memo[0].content not in contents(request_of(later, "sub_speak", "compose"))


def test_meta_agentic_runs_several_playbooks_then_answers(make_runtime: MakeRuntime) -> None:
    recall = {"playbook": "memory_recall", "args": {"query": "Tama"}, "reason": "first look"}
    research = {"playbook": "memory_research", "args": {"query": "Tama"}, "reason": "dig"}
    runtime = make_runtime({
        "sub_router_user.decide": [recall, research, GREETING],
        "memory_research.plan": [{"queries": ["Tama"]}],
        "memory_research.summarize": ["Nothing more was found."],
        "sub_speak.compose": ["Here is what I found."],
    })
    result = runtime.run_pulse(PERSONA, "meta_agentic", "Tell me everything about Tama.")
    assert result.status == "ok", result.error
    runs = [n for n in _nodes(result) if n == "meta_agentic.run"]
    assert len(runs) == 2
    assert result.spoken == ["Here is what I found."]
    router_calls = [c for c in result.llm_calls if c.node == "decide"]
    assert len(router_calls) == 3
    # the second routing sees the first playbook's memo
    assert "Memory recall for" in contents(router_calls[1].messages)


def test_meta_agentic_memorizes_each_call_before_its_result_for_this_pulse_only(
    make_runtime: MakeRuntime, store: SQLiteStore
) -> None:
    tea = {"playbook": "memory_recall", "args": {"query": "tea"}, "reason": "first look"}
    cups = {"playbook": "memory_recall", "args": {"query": "cups"}, "reason": "look again"}
    runtime = make_runtime({
        "sub_router_user.decide": [tea, cups, GREETING, GREETING],
        "sub_speak.compose": ["You like green tea, two cups.", "Bye!"],
    })
    store.append(NewMessage(PERSONA.id, "user", "I drink two cups of green tea a day.",
                            ("conversation",)))
    result = runtime.run_pulse(PERSONA, "meta_agentic", "Do you remember my tea, and how much?")
    assert result.status == "ok", result.error
    stored = [(m.role, m.playbook, m.content)
              for m in store.pulse_messages(PERSONA.id, result.pulse_id)]
    assert [(role, playbook) for role, playbook, _ in stored] == [
        ("user", None),  # the typed input
        ("assistant", "meta_agentic"), ("user", "memory_recall"),
        ("assistant", "meta_agentic"), ("user", "memory_recall"),
        ("assistant", "sub_speak"),
    ]
    calls = [json.loads(c.removeprefix("Calling a playbook: "))
             for _, playbook, c in stored if playbook == "meta_agentic"]
    assert calls == [
        {"playbook": "memory_recall", "args": {"query": "tea"}, "reason": "first look"},
        {"playbook": "memory_recall", "args": {"query": "cups"}, "reason": "look again"},
    ]
    results = [c for role, playbook, c in stored if playbook == "memory_recall"]
    assert all(c.startswith("<system>Memory recall for") for c in results)
    # the third routing and the speaker see call, result, call, result, in that order
    for request in (request_of(result, "sub_router_user", "decide", 2),
                    request_of(result, "sub_speak", "compose")):
        turn = [(m["role"], m["content"]) for m in request if m["role"] != "system"]
        start = turn.index(("user", "Do you remember my tea, and how much?"))
        assert [content for _, content in turn[start + 1:start + 5]] == [
            c for _, _, c in stored[1:5]
        ]
        assert [role for role, _ in turn[start + 1:start + 5]] == [
            "assistant", "user", "assistant", "user"
        ]
    later = contents(request_of(runtime.run_pulse(PERSONA, "meta_user", "Bye"),
                                "sub_speak", "compose"))
    assert "You like green tea, two cups." in later
    assert not [c for _, _, c in stored[1:5] if c in later]


def test_meta_agentic_stops_at_its_bound(make_runtime: MakeRuntime) -> None:
    recall = {"playbook": "memory_recall", "args": {"query": "x"}, "reason": "again"}
    runtime = make_runtime({
        "sub_router_user.decide": [recall] * 10,
        "sub_speak.compose": ["I looked three times."],
    })
    result = runtime.run_pulse(PERSONA, "meta_agentic", "Keep looking, do you remember my cat?")
    assert result.status == "ok", result.error
    assert [n for n in _nodes(result)].count("meta_agentic.run") == 3
    assert result.spoken == ["I looked three times."]


def test_memory_playbooks_search_the_conversation_not_earlier_memos(
    make_runtime: MakeRuntime,
) -> None:
    recall = {"playbook": "memory_recall", "args": {"query": "Tama"}, "reason": "asks"}
    runtime = make_runtime({
        "sub_router_user.decide": [GREETING, recall, recall],
        "sub_speak.compose": ["Cute!", "Tama, your cat.", "Still Tama."],
    })
    runtime.run_pulse(PERSONA, "meta_user", "My cat is called Tama.")
    runtime.run_pulse(PERSONA, "meta_user", "Who is Tama?")
    again = runtime.run_pulse(PERSONA, "meta_user", "Tell me about Tama again.")
    (memo,) = [w.content for w in again.memory_writes if w.playbook == "memory_recall"]
    assert memo.count("<system>") == 1 and memo.count("Memory recall for") == 1
    assert "The user said: My cat is called Tama." in memo
    assert "You said: Tama, your cat." in memo
    assert "The user said: Who is Tama?" in memo


def test_memory_research_that_finds_nothing_says_so_without_a_summary(
    make_runtime: MakeRuntime,
) -> None:
    research = {"playbook": "memory_research", "args": {"query": "zebras"}, "reason": "asks"}
    runtime = make_runtime({
        "sub_router_user.decide": [research],
        "memory_research.plan": [{"queries": ["zebra", "stripes"]}],
        "sub_speak.compose": ["I don't remember any zebras."],
    })
    result = runtime.run_pulse(PERSONA, "meta_user", "Tell me everything I said about zebras")
    assert result.status == "ok", result.error
    assert "memory_research.summarize" not in _nodes(result)
    (memo,) = [w.content for w in result.memory_writes if w.playbook == "memory_research"]
    assert memo == (
        '<system>Memory research about "zebras" (for you only): nothing was found.</system>'
    )
    assert memo in contents(request_of(result, "sub_speak", "compose"))


def test_memory_recall_without_a_query_finds_an_earlier_turn_from_a_natural_question(
    make_runtime: MakeRuntime,
) -> None:
    recall = {"playbook": "memory_recall", "reason": "asks about something said before"}
    runtime = make_runtime({
        "sub_router_user.decide": [GREETING, GREETING, recall],
        "sub_speak.compose": ["Nice to meet you, Ken!", "Sunny here.", "Your name is Ken."],
    })
    runtime.run_pulse(PERSONA, "meta_user", "Hi! My name is Ken.")
    runtime.run_pulse(PERSONA, "meta_user", "What is the weather like?")
    asked = runtime.run_pulse(PERSONA, "meta_user", "What is my name?")
    assert asked.status == "ok", asked.error
    (search,) = [e for e in asked.events if e.kind == "tool_call" and e.tool == "memory_search"]
    assert search.args["query"] == "What is my name?" and search.args["match"] == "any"
    (memo,) = [w.content for w in asked.memory_writes if w.playbook == "memory_recall"]
    assert "nothing was found" not in memo
    notes = json.loads(memo.split("(for you only): ", 1)[1].removesuffix("</system>"))
    assert notes == [
        "The user said: Hi! My name is Ken.",  # "name" outranks "what" and "is"
        "The user said: What is the weather like?",
    ]
    assert memo in contents(request_of(asked, "sub_speak", "compose"))
    assert asked.spoken == ["Your name is Ken."]


def test_meta_agentic_stops_when_the_model_says_the_results_answer(
        make_runtime: MakeRuntime, store: SQLiteStore) -> None:
    """The prior alone chooses the first playbook of a clear memory question; after it ran,
    the safe choice stays open and the model's basic_chat ends the loop (the prior alone
    would choose the recall again until the step bound)."""
    runtime = make_runtime({"sub_router_user.decide": [GREETING],
                            "sub_speak.compose": ["Your dog is Rex."]})
    store.append(NewMessage(PERSONA.id, "user", "My dog is called Rex.", ("conversation",)))
    result = runtime.run_pulse(PERSONA, "meta_agentic", "Do you remember my dog's name?")
    assert result.status == "ok", result.error
    assert [n for n in _nodes(result) if n == "meta_agentic.run"] == ["meta_agentic.run"]
    decides = [c for c in result.llm_calls if c.node == "decide"]
    assert len(decides) == 1  # the first route needed no model, the second asked it
    assert "Memory recall for" in contents(decides[0].messages)
    assert result.outputs["step_count"] == 1
    assert result.spoken == ["Your dog is Rex."]
