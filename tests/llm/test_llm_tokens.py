"""Tokens counted as tokens: each model's tokenizer (or an estimate), the history's token
budget per model, the newest messages kept whole, and what it leaves out folded into the
short-term memory."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from saimemory import CONVERSATION_TAG, NewMessage, Persona
from saimemory.records import Role
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.errors import UsageError
from sea.llm.call import LLMCaller
from sea.llm.models import ModelSet
from sea.llm.options import LLMOptions
from sea.llm.tokens import MESSAGE_OVERHEAD, TokenBudgets, counter_for, fit_history
from tests.llm.fakes import Recorder, request, run


def tiktoken_works() -> bool:
    """tiktoken is installed and has its encoding (it downloads it on first use)."""
    if importlib.util.find_spec("tiktoken") is None:
        return False
    import tiktoken

    try:
        tiktoken.get_encoding("o200k_base")
    except Exception:
        return False
    return True


class WordModel(ScriptedChatModel):
    """A scripted model with a tokenizer of its own: one token a word."""

    def count_tokens(self, text: str) -> int:
        return len(text.split())


class OpenAILike(ScriptedChatModel):
    """A scripted model that LangChain would take for an OpenAI chat model."""

    @property
    def _llm_type(self) -> str:
        return "openai-chat"


def conversation(store: SQLiteStore, persona: Persona, texts: list[str]) -> list[int]:
    ids = []
    for index, text in enumerate(texts):
        role: Role = "user" if index % 2 == 0 else "assistant"
        message = NewMessage(persona.id, role, text, pulse_id=f"old{index}",
                             tags=(CONVERSATION_TAG,))
        ids.append(store.append(message).id)
    return ids


def caller(store: SQLiteStore, normal: Any, light: Any = None, recorder: Any = None,
           **options: Any) -> LLMCaller:
    return LLMCaller(ModelSet(normal=normal, lightweight=light or normal), store,
                     on_record=recorder, options=LLMOptions(**options))


def sent_history(model: ScriptedChatModel, index: int = 0) -> list[str]:
    """The earlier conversation a call sent (between the system message and the prompt)."""
    return [m["content"] for m in model.calls[index].messages[1:-1]]


def test_each_model_is_counted_by_its_own_tokenizer_or_an_estimate() -> None:
    words = counter_for(WordModel())
    assert words.by == "model" and words.count("one two three four five") == 5
    estimate = counter_for(ScriptedChatModel())
    assert estimate.by == "estimate" and estimate.count("one two three four five") == 6
    openai = counter_for(OpenAILike(model_name="gpt-4o-mini"))
    if tiktoken_works():
        assert openai.by == "tiktoken:o200k_base" and openai.count("hello world") == 2
    else:
        assert openai.by == "estimate"


def test_a_token_budget_is_a_whole_number_per_model() -> None:
    budgets = TokenBudgets(default=100, models={"small": 20})
    assert (budgets.for_model("small"), budgets.for_model("big")) == (20, 100)
    assert TokenBudgets().for_model("any") is None and not TokenBudgets().active
    for wrong in (0, -3, 2.5, True):
        with pytest.raises(UsageError, match="whole number >= 1"):
            TokenBudgets(models={"m": wrong})  # type: ignore[dict-item]


def test_the_newest_messages_are_kept_whole_and_the_pulse_always(
    store: SQLiteStore, persona: Persona
) -> None:
    conversation(store, persona, ["one two three", "four five", "six seven eight nine"])
    store.append(NewMessage(persona.id, "user", "now " * 50, pulse_id="p1",
                            tags=(CONVERSATION_TAG,)))
    history = store.history(persona.id, pulse_id="p1")
    counter = counter_for(WordModel())
    room = 4 + MESSAGE_OVERHEAD + 2 + MESSAGE_OVERHEAD  # the two newest earlier ones
    fitted = fit_history(history, "p1", room, counter)
    assert [m.content for m in fitted.history] == ["four five", "six seven eight nine",
                                                    "now " * 50]
    assert [m.content for m in fitted.dropped] == ["one two three"]
    assert fitted.tokens == room
    one_short = fit_history(history, "p1", room - 1, counter)  # no message is cut to fit
    assert [m.content for m in one_short.history] == ["six seven eight nine", "now " * 50]


def test_the_call_path_budgets_each_model_in_its_own_tokens(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    conversation(store, persona, [f"message number {i}" for i in range(8)])
    normal = WordModel(model_name="big", default=["ok", "ok"])
    light = WordModel(model_name="small", default=["routed"])
    budgets = TokenBudgets(models={"big": 3 * (3 + MESSAGE_OVERHEAD),
                                   "small": 1 * (3 + MESSAGE_OVERHEAD)})
    call = caller(store, normal, light, recorder, history_tokens=budgets,
                  short_term_memory=False)
    run(call.call(request(persona, profile="conversation", prompt="Go on.")))
    run(call.call(request(persona, node="route", profile="router", prompt="Where?")))
    assert sent_history(normal) == [f"message number {i}" for i in (5, 6, 7)]
    assert sent_history(light) == ["message number 7"]
    big, small = recorder.records
    assert big.counted_by == small.counted_by == "model"
    history = next(p for p in big.context if p["part"] == "history")
    assert history == {"part": "history", "tokens": 9, "detail": "3 messages, cut"}
    prompt = next(p for p in big.context if p["part"] == "prompt")
    assert prompt["tokens"] == len(normal.calls[0].messages[-1]["content"].split())


def test_without_a_token_budget_the_store_budget_alone_decides(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    conversation(store, persona, [f"message number {i}" for i in range(8)])
    normal = ScriptedChatModel(default=["ok"])
    run(caller(store, normal, recorder=recorder, short_term_memory=False).call(
        request(persona, profile="conversation", prompt="Go on.")))
    assert len(sent_history(normal)) == 8 and recorder.records[0].counted_by == "estimate"


def test_what_the_token_budget_leaves_out_is_folded_into_the_short_term_memory(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    ids = conversation(store, persona, [f"message number {i}" for i in range(6)])
    normal = WordModel(model_name="big", default=["the answer"])
    light = WordModel(model_name="small", default=["They counted to three."])
    call = caller(store, normal, light, recorder,
                  history_tokens=TokenBudgets(models={"big": 2 * (3 + MESSAGE_OVERHEAD)}))
    run(call.call(request(persona, profile="conversation", prompt="Go on.")))
    update, main = recorder.records
    assert update.node == "n:short_term_memory"
    folded = light.calls[0].messages[-1]["content"]
    assert all(f"message number {i}" in folded for i in range(4))
    assert "message number 4" not in folded
    saved = store.short_term(persona.id)
    assert saved is not None and saved.through_id == ids[3]
    assert "They counted to three." in normal.calls[0].messages[0]["content"]
    assert sent_history(normal) == ["message number 4", "message number 5"]
    assert [p["part"] for p in main.context] == ["base", "short_term", "history", "prompt"]


class BrokenTokenizer(ScriptedChatModel):
    """A model whose tokenizer fails (its file is gone)."""

    def count_tokens(self, text: str) -> int:
        raise FileNotFoundError("model.gguf")


def test_a_tokenizer_that_fails_is_estimated_and_the_call_goes_on(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    counter = counter_for(BrokenTokenizer())
    assert counter.count("one two three four five") == 6  # the estimate
    model = BrokenTokenizer(default=["fine"])
    result = run(caller(store, model, recorder=recorder).call(request(persona, prompt="Go.")))
    assert result.text == "fine" and recorder.records[0].outcome == "ok"
