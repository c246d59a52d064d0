"""The runner on its own: what a case's persona seeds reaches the model, each attempt has a
store of its own, and a case that cannot run is a failed attempt, not a crash."""

from __future__ import annotations

import asyncio

from sea.chat.scripted import ScriptedChatModel
from sea.eval.cases import EvalCase
from sea.eval.runner import Setup, run_case, run_cases
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.eval.conftest import CHAT_SCRIPT


def _case(**fields: object) -> EvalCase:
    base: dict[str, object] = {"id": "c", "set": "s", "turns": ("Hi!",),
                               "playbook": "meta_user", "persona": {}, "expect": {}}
    return EvalCase(**{**base, **fields})  # type: ignore[arg-type]


def test_pins_messages_and_the_persona_reach_the_model() -> None:
    model = ScriptedChatModel.from_mapping(CHAT_SCRIPT)
    setup = Setup("scripted", lambda: ModelSet(normal=model, lightweight=model),
                  PlaybookLibrary.bundled())
    persona = {"id": "kai", "name": "Kai", "system_prompt": "You are Kai, a pirate.",
               "pins": ["The user's birthday is 3 May."],
               "messages": [{"role": "user", "content": "I grow tomatoes."}]}
    attempt = asyncio.run(run_case(setup, _case(persona=persona,
                                                expect={"reply": {"contains": "Aoi"}})))
    assert attempt.passed, attempt.checks
    (speak,) = [c for c in model.calls if c.key == "sub_speak.compose"]
    sent = "\n".join(m["content"] for m in speak.messages)
    assert "You are Kai, a pirate." in sent
    assert "The user's birthday is 3 May." in sent
    assert "I grow tomatoes." in sent


def test_each_attempt_starts_from_the_seeded_memory_only() -> None:
    made: list[ScriptedChatModel] = []

    def models() -> ModelSet:
        made.append(ScriptedChatModel.from_mapping(CHAT_SCRIPT))
        return ModelSet(normal=made[-1], lightweight=made[-1])

    setup = Setup("scripted", models, PlaybookLibrary.bundled(), concurrency=2)
    case = _case(persona={"messages": [{"role": "user", "content": "seeded line"}]})
    attempts = asyncio.run(run_cases(setup, [case], 3))
    assert [a.repeat for a in attempts] == [0, 1, 2] and all(a.passed for a in attempts)
    for model in made:  # no attempt saw another's "Hi!" or reply
        (speak,) = [c for c in model.calls if c.key == "sub_speak.compose"]
        sent = "\n".join(m["content"] for m in speak.messages)
        assert sent.count("seeded line") == 1 and "Hello! I'm Aoi." not in sent


def test_a_case_that_cannot_run_is_a_failed_attempt() -> None:
    setup = Setup("scripted", lambda: ModelSet(normal=ScriptedChatModel(),
                                               lightweight=ScriptedChatModel()),
                  PlaybookLibrary.bundled())
    bad = _case(persona={"plan": {"title": "T", "specs": [{"kind": "create",
                                                           "path": "../out.md"}]}})
    attempt = asyncio.run(run_case(setup, bad))
    assert not attempt.passed
    assert attempt.error is not None and attempt.error.startswith(
        "ValueError: persona.plan.specs: not valid")
