"""Every expectation kind of an eval case, passing and failing, on the scripted model
through the real runtime (a fresh SQLite store seeded with the case's persona per attempt)."""

from __future__ import annotations

from tests.eval.conftest import (
    CHAT_SCRIPT,
    DOG,
    MEMORY_SCRIPT,
    PLAN_SCRIPT,
    EvalSea,
    checks,
)

SEARCH = {"query": "dog", "match": "any", "limit": 3, "tags": ["conversation"]}
"""The arguments memory_research gives memory_search for the query "dog"."""


def test_every_expectation_kind_passes_and_fails(sea: EvalSea) -> None:
    held = {
        "route": "memory_research",
        "nodes_ran": ["memory_research.save", "search"],
        "nodes_not_ran": ["save_nothing", "sub_plan.draft"],
        "tool_calls": [{"tool": "memory_search", "args": {"query": "dog"}}],
        "tools_not_called": ["read_file", "plan_propose"],
        "reply": {"contains": ["pochi", "dog"], "not_contains": "cat",
                  "regex": r'"name":\s*"Pochi"', "json": {"dog.name": "Pochi",
                                                         "$.facts[1]": "Pochi"}},
        "memos": [{"tag": "memory_research", "contains": "called Pochi",
                   "playbook": "memory_research"}],
        "plan": {"proposed": False},
        "status": "ok",
    }
    broken = {
        "route": "basic_chat",
        "nodes_ran": ["sub_plan.draft"],
        "nodes_not_ran": ["memory_research.save"],
        "tool_calls": [{"tool": "memory_search", "args": {"query": "cat"}}],
        "tools_not_called": ["memory_search"],
        "reply": {"contains": "Tama", "not_contains": ["Pochi"], "regex": "^Tama$",
                  "json": {"dog.name": "Tama", "dog.age": 3}},
        "memos": [{"tag": "memory_research", "contains": "Tama"}],
        "plan": {"proposed": True},
        "status": "error",
    }
    calls = [
        ("exact-held", {"tool": "memory_search", "args": SEARCH, "match": "exact"}, True),
        ("exact-broken", {"tool": "memory_search", "args": {"query": "dog"}, "match": "exact"},
         False),
        ("pattern-held", {"tool": "memory_search", "args": {"query": "^d.g$", "tags":
                                                            "conversation"},
                          "match": "pattern"}, True),
        ("pattern-broken", {"tool": "memory_search", "args": {"query": "^cat"},
                            "match": "pattern"}, False),
    ]
    cases = [
        {"id": "held", "input": "Hey, sum up all about the dog", "persona": DOG,
         "expect": held},
        {"id": "broken", "input": "Hey, sum up all about the dog", "persona": DOG,
         "expect": broken},
        {"id": "any-held", "input": "Hey, sum up all about the dog", "persona": DOG,
         "expect": {"route_any": ["memory_recall", "memory_research"]}},
        {"id": "any-broken", "input": "Hey, sum up all about the dog", "persona": DOG,
         "expect": {"route_any": ["memory_recall", "basic_chat"]}},
        *({"id": name, "input": "Hey, sum up all about the dog", "persona": DOG,
           "expect": {"tool_calls": [call]}} for name, call, _ in calls),
    ]
    sets = sea.jsonl("kinds.jsonl", cases)
    done, run = sea.run(str(sets), "--model", sea.model(MEMORY_SCRIPT))
    assert done.code == 0, done.err

    passed = checks(run, "kinds/held")
    assert set(passed) == {"route", "nodes_ran", "nodes_not_ran", "tool_calls",
                           "tools_not_called", "reply.contains", "reply.not_contains",
                           "reply.regex", "reply.json", "memos", "plan", "status"}
    assert all(ok for ok, _ in passed.values()), passed

    failed = checks(run, "kinds/broken")
    assert set(failed) == set(passed)
    assert not any(ok for ok, _ in failed.values()), failed
    assert failed["route"][1] == "expected basic_chat, routed to memory_research"
    assert failed["nodes_ran"][1] == "did not run: sub_plan.draft"
    assert failed["nodes_not_ran"][1] == "ran: memory_research.save"
    assert failed["tools_not_called"][1] == "called: memory_search"
    assert "dog.name: expected \"Tama\", found \"Pochi\"" in failed["reply.json"][1]
    assert "dog.age: expected 3, found nothing" in failed["reply.json"][1]
    assert failed["plan"][1] == "no plan was proposed"
    assert failed["status"][1] == "expected error, ended ok"
    assert "no memo" in failed["memos"][1]

    assert checks(run, "kinds/any-held")["route"][0] is True
    assert checks(run, "kinds/any-broken")["route"] == [
        False, "expected one of memory_recall, basic_chat, routed to memory_research"]
    for name, _, ok in calls:
        assert checks(run, f"kinds/{name}")["tool_calls"][0] is ok, name

    (model,) = run["models"].values()
    assert model["cases"]["kinds/held"]["pass_rate"] == 1.0
    assert model["cases"]["kinds/broken"]["pass_rate"] == 0.0
    assert model["expectations"]["route"] == {"passed": 2, "judged": 4, "pass_rate": 0.5}
    assert model["pass_rate"] == 4 / 8


def test_a_proposed_plan_and_its_specs(sea: EvalSea) -> None:
    ask = "Write my game's outline into notes/outline.md."
    spec = {"kind": "create", "path": "notes/outline.md", "contains": "# Outline"}
    sets = sea.jsonl("plans.jsonl", [
        {"id": "held", "input": ask,
         "expect": {"route": "sub_plan", "status": "waiting",
                    "plan": {"proposed": True, "specs": [spec]}}},
        {"id": "broken", "input": ask,
         "expect": {"plan": {"proposed": False, "specs": [{**spec, "kind": "write"}]}}},
    ])
    done, run = sea.run(str(sets), "--model", sea.model(PLAN_SCRIPT))
    assert done.code == 0, done.err
    assert checks(run, "plans/held") == {"route": [True, ""], "status": [True, ""],
                                         "plan": [True, ""]}
    ok, detail = checks(run, "plans/broken")["plan"]
    assert not ok
    assert detail.startswith("a plan was proposed; no spec ")
    assert "(specs: create notes/outline.md)" in detail


def test_the_seeded_workspace_plan_and_messages_reach_the_pulse(sea: EvalSea) -> None:
    sea.write("pb/probe.json", """{"name": "probe", "description": "Says what it finds.",
      "start_node": "read", "nodes": [
      {"id": "read", "type": "tool", "action": "read_file", "args": {"path": "notes/a.md"},
       "output_key": "file", "next": "plan"},
      {"id": "plan", "type": "tool", "action": "plan_memory", "output_key": "plan",
       "next": "recent"},
      {"id": "recent", "type": "tool", "action": "memory_recent", "output_key": "recent",
       "next": "say"},
      {"id": "say", "type": "say", "action": "{file.content} | {plan.title} | {recent}"}]}""")
    sea.write("probe.yaml", """name: probe
defaults:
  playbook: probe
  persona:
    messages: [{role: user, content: "My dog is called Pochi."}]
cases:
  - id: seeded
    input: show
    persona:
      files: {notes/a.md: "buy milk"}
      plan: {title: Tidy the notes, content: Sort them.}
    expect:
      reply: {contains: [buy milk, Tidy the notes, called Pochi]}
      status: ok
  - id: no-file
    input: show
    expect: {status: ok}
""")
    done, run = sea.run("probe.yaml", "--playbooks", "pb", "--model", sea.model({}))
    assert done.code == 0, done.err
    assert checks(run, "probe/seeded") == {"reply.contains": [True, ""], "status": [True, ""]}
    ok, detail = checks(run, "probe/no-file")["status"]  # each case has its own workspace
    assert not ok and detail.startswith("expected ok, ended error (SEA")


def test_a_rubric_is_judged_by_the_judge_model(sea: EvalSea) -> None:
    sets = sea.jsonl("rubric.jsonl", [
        {"id": "polite", "input": "Hey, sum up all about the dog", "persona": DOG,
         "expect": {"rubric": "The reply names the dog."}}])
    model = sea.model(MEMORY_SCRIPT)
    done, run = sea.run(str(sets), "--model", model)
    assert done.code == 0, done.err
    assert checks(run, "rubric/polite") == {"rubric": [None, "not judged (no --judge)"]}
    judge = sea.model({"default": ["PASS\nIt names Pochi."]}, "pass.json")
    done, run = sea.run(str(sets), "--model", model, "--judge", judge)
    assert checks(run, "rubric/polite") == {"rubric": [True, ""]}
    judge = sea.model({"default": ["FAIL\nIt is JSON, not a sentence."]}, "fail.json")
    done, run = sea.run(str(sets), "--model", model, "--judge", judge)
    assert checks(run, "rubric/polite") == {"rubric": [False,
                                                       "FAIL\nIt is JSON, not a sentence."]}


def test_a_case_that_expects_only_the_route_stops_once_it_is_known(sea: EvalSea) -> None:
    routed = [{"id": "memory", "input": "Hey, sum up all about the dog", "persona": DOG,
               "expect": {"route": "memory_research"}},
              {"id": "full", "input": "Hey, sum up all about the dog", "persona": DOG,
               "expect": {"route": "memory_research", "status": "ok"}}]
    done, run = sea.run(str(sea.jsonl("routes.jsonl", routed)), "--model",
                        sea.model(MEMORY_SCRIPT))
    assert done.code == 0, done.err
    (model,) = run["models"].values()
    early = model["cases"]["routes/memory"]["attempts"][0]
    full = model["cases"]["routes/full"]["attempts"][0]
    assert early["passed"] and full["passed"]
    assert early["observed"]["nodes"][-1] == "memory_research.choose_topic"
    assert early["observed"]["status"] == "cancelled"
    assert "sub_speak.compose" in full["observed"]["nodes"]

    chat = [{"id": "chat", "input": "Hi!", "expect": {"route": "basic_chat"}},
            {"id": "broken", "input": "Hey, sum up all about the dog", "persona": DOG,
             "playbook": "meta_user",
             "expect": {"route_any": ["basic_chat"]}}]
    done, run = sea.run(str(sea.jsonl("chat.jsonl", chat[:1])), "--model",
                        sea.model(CHAT_SCRIPT))
    (model,) = run["models"].values()
    early = model["cases"]["chat/chat"]["attempts"][0]
    assert early["passed"] and early["observed"]["nodes"][-1] == "meta_user.speak"
    no_router = {"responses": {"sub_speak.compose": ["Hello."]}}  # the router's call fails
    done, run = sea.run(str(sea.jsonl("chat.jsonl", chat[1:])), "--model",
                        sea.model(no_router))
    assert checks(run, "chat/broken")["route"] == [
        False, "expected one of basic_chat, routed to None"]


def test_a_router_given_as_the_entry_runs_to_its_end_and_its_output_is_the_route(
        sea: EvalSea) -> None:
    """A router playbook as the entry has no ``exec`` to stop at: it runs whole, and the
    playbook it chose (its ``selected_playbook``) is the route; nothing is cancelled."""
    routed = [{"id": "dog", "input": "Do you remember what my dog's name is?",
               "playbook": "sub_router_user",
               "expect": {"route_any": ["memory_recall", "memory_research"]}},
              {"id": "wrong", "input": "Do you remember what my dog's name is?",
               "playbook": "sub_router_user", "expect": {"route": "sub_plan"}}]
    done, run = sea.run(str(sea.jsonl("ranked.jsonl", routed)), "--model",
                        sea.model({"default": ['{"playbook": "memory_recall"}']}))
    assert done.code == 0, done.err
    (model,) = run["models"].values()
    dog = model["cases"]["ranked/dog"]["attempts"][0]
    assert dog["passed"], dog
    assert dog["observed"]["status"] != "cancelled"
    assert dog["observed"]["route"] in {"memory_recall", "memory_research"}
    assert checks(run, "ranked/wrong")["route"][0] is False
