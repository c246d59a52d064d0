"""Caching: the prompt's stable prefix (byte-identical, marked for Anthropic), and the opt-in
response cache through LangChain's cache interface, its hits and misses in the records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.caches import InMemoryCache
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult, Generation

from saimemory import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.llm.cache import ResponseCache, SQLiteResponseCache, is_deterministic
from sea.llm.call import LLMCaller
from sea.llm.compose import SUMMARY_HEADING, MainRead, compose
from sea.llm.models import ModelSet
from sea.llm.options import LLMOptions
from sea.llm.patterns import profile_named
from sea.llm.specialized import Guidelines
from tests.llm.fakes import ROUTER_SCHEMA, Recorder, lookup, request, run, seed


class SamplingModel(ScriptedChatModel):
    """A scripted model with sampling settings, as providers' models have."""

    temperature: float | None = 0.7
    seed: int | None = None


class RawModel(BaseChatModel):
    """A model that keeps the messages exactly as sent, and names a provider."""

    llm_type: str = "anthropic-chat"
    raw: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return self.llm_type

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        self.raw.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="ok"))])


def caller(store: SQLiteStore, model: Any, recorder: Recorder | None = None,
           **options: Any) -> LLMCaller:
    return LLMCaller(ModelSet.single(model), store, on_record=recorder,
                     options=LLMOptions(**options))


def test_the_sqlite_cache_keeps_answers_in_its_file(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    first = SQLiteResponseCache(path)
    assert first.lookup("prompt", "llm") is None
    first.update("prompt", "llm", [Generation(text="answer", generation_info={"n": 1})])
    first.close()
    again = SQLiteResponseCache(path)
    assert again.lookup("prompt", "llm") == [Generation(text="answer",
                                                        generation_info={"n": 1})]
    assert again.lookup("prompt", "other model") is None
    again.clear()
    assert again.lookup("prompt", "llm") is None


def test_a_call_asked_again_is_answered_from_the_cache(
    tmp_path: Path, store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    seed(store, persona)
    model = ScriptedChatModel(default=["Basho wrote many."])
    cache = ResponseCache.sqlite(tmp_path / "cache.sqlite")
    call = caller(store, model, recorder, response_cache=cache)
    first = run(call.call(request(persona, prompt="Answer.")))
    second = run(call.call(request(persona, prompt="Answer.")))
    assert len(model.calls) == 1  # the second call made no model call
    assert second.text == first.text == "Basho wrote many."
    miss, hit = recorder.records
    assert (miss.cache, miss.tokens_saved) == ("miss", 0) and miss.tokens_in > 0
    assert (hit.cache, hit.tokens_in, hit.tokens_out) == ("hit", 0, 0)
    assert hit.tokens_saved == miss.tokens_in + miss.tokens_out
    assert hit.messages == miss.messages and hit.response == "Basho wrote many."
    assert call.meter.spent.calls == 1  # a hit is not a model call
    row = hit.call_row("mika", "p1")
    assert (row.cache, row.tokens_saved) == ("hit", hit.tokens_saved)
    store.record_calls([miss.call_row("mika", "p1"), row])
    assert [(r.cache, r.tokens_saved) for r in store.call_records("mika")] == [
        ("miss", 0), ("hit", hit.tokens_saved)]


def test_another_context_or_another_model_is_a_miss(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    cache = ResponseCache(InMemoryCache())  # any LangChain cache will do
    model = ScriptedChatModel(model_name="a", default=["one", "two"])
    other = ScriptedChatModel(model_name="b", default=["three"])
    run(caller(store, model, recorder, response_cache=cache).call(
        request(persona, prompt="Answer.")))
    run(caller(store, model, recorder, response_cache=cache).call(
        request(persona, prompt="Answer briefly.")))
    run(caller(store, other, recorder, response_cache=cache).call(
        request(persona, prompt="Answer.")))
    assert [r.cache for r in recorder.records] == ["miss", "miss", "miss"]
    assert (len(model.calls), len(other.calls)) == (2, 1)


def test_structured_answers_tool_calls_and_streams_come_back_whole(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    decision = {"playbook": "basic_chat", "reason": "a greeting"}
    chose = {"tool_calls": [{"name": "lookup", "args": {"query": "basho"}, "id": "c1"}],
             "content": ""}
    model = ScriptedChatModel(responses={"pb.route": [decision], "pb.tools": [chose],
                                         "pb.speak": ["Hello there, Ken."]})
    call = caller(store, model, recorder, response_cache=ResponseCache(InMemoryCache()))
    asks = [request(persona, node="route", response_schema=ROUTER_SCHEMA, prompt="Route."),
            request(persona, node="tools", tools=[lookup], prompt="Look it up."),
            request(persona, node="speak", stream=True, prompt="Speak.")]
    first = [run(call.call(ask)) for ask in asks]
    streamed: list[str] = []

    async def on_token(text: str) -> None:
        streamed.append(text)

    again = [run(call.call(ask, on_token=on_token)) for ask in asks]
    assert len(model.calls) == 3
    assert again[0].parsed == first[0].parsed == decision
    assert again[1].tool_call == first[1].tool_call and again[1].tool_call is not None
    assert again[1].tool_call.args == {"query": "basho"}
    assert again[2].text == "Hello there, Ken." and "".join(streamed) == "Hello there, Ken."
    assert [r.cache for r in recorder.records] == ["miss"] * 3 + ["hit"] * 3


def test_only_deterministic_models_are_cached(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    assert not is_deterministic(SamplingModel())
    assert is_deterministic(SamplingModel(temperature=0))
    assert is_deterministic(SamplingModel(seed=7)) and is_deterministic(ScriptedChatModel())
    model = SamplingModel(default=["one", "two"])
    call = caller(store, model, recorder, response_cache=ResponseCache(InMemoryCache()))
    run(call.call(request(persona, prompt="Answer.")))
    run(call.call(request(persona, prompt="Answer.")))
    assert len(model.calls) == 2 and [r.cache for r in recorder.records] == [None, None]


def test_without_a_cache_nothing_is_cached(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    model = ScriptedChatModel(default=["one", "two"])
    call = caller(store, model, recorder)
    run(call.call(request(persona, prompt="Answer.")))
    run(call.call(request(persona, prompt="Answer.")))
    assert len(model.calls) == 2 and [r.cache for r in recorder.records] == [None, None]


def test_the_stable_prefix_comes_first_and_the_short_term_memory_after_it(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    store.pin(persona.id, "Ken likes haiku.")
    model = ScriptedChatModel(default=["a", "b", "c"])
    call = caller(store, model, recorder)
    for profile, specialized in (("conversation", None), ("base_main_specialized", "planning"),
                                 ("base_specialized", "summary")):
        run(call.call(request(persona, profile=profile, specialized=specialized,
                              prompt="Go.")))
    systems = [c.messages[0]["content"] for c in model.calls]
    prefixes = [s[:r.stable_chars] for s, r in zip(systems, recorder.records, strict=True)]
    base = "You are Mika, a careful librarian."
    assert all(p.startswith(base) for p in prefixes)
    assert prefixes[0] == systems[0] and "Ken likes haiku." in prefixes[0]
    assert prefixes[1].startswith(prefixes[0]) and "Guidelines for this task:" in prefixes[1]
    assert "Ken likes haiku." not in prefixes[2]  # no Main: no pins


def test_the_short_term_memory_follows_the_stable_prefix(
    store: SQLiteStore, persona: Persona
) -> None:
    pin = store.pin(persona.id, "Ken likes haiku.")
    main = MainRead(history=[], pins=[pin], short_term=None, cut=True, unfolded=[])
    planning = Guidelines().for_node("planning")
    before = compose(persona, profile_named("base_main_specialized"), main=main,
                     summary="They met in May.", specialized=planning, prompt="Go.")
    after = compose(persona, profile_named("base_main_specialized"), main=main,
                    summary="They met in May and June.", specialized=planning, prompt="Go.")
    texts = [str(c.messages[0].content) for c in (before, after)]
    assert before.stable == after.stable and all(t.startswith(before.stable) for t in texts)
    assert texts[0][len(before.stable):] == f"\n\n{SUMMARY_HEADING}\nThey met in May."
    assert [p.name for p in before.parts] == ["base", "pins", "specialized", "short_term",
                                              "history", "prompt"]


def test_the_prefix_is_marked_for_anthropic_and_left_alone_for_others(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    store.pin(persona.id, "Ken likes haiku.")
    anthropic = RawModel()
    run(caller(store, anthropic, recorder).call(request(persona, prompt="Go.")))
    system = anthropic.raw[0][0]
    assert system.type == "system" and isinstance(system.content, list)
    stable = system.content[0]
    assert isinstance(stable, dict) and stable["cache_control"] == {"type": "ephemeral"}
    assert stable["text"] == recorder.records[0].messages[0]["content"][
        :recorder.records[0].stable_chars]
    plain = RawModel(llm_type="openai-chat")
    run(caller(store, plain, recorder).call(request(persona, prompt="Go.")))
    assert plain.raw[0][0].content == stable["text"]  # the same bytes, as one string


class BrokenCache(InMemoryCache):
    """A cache whose file is locked by another process."""

    def lookup(self, prompt: str, llm_string: str) -> Any:
        raise OSError("database is locked")

    def update(self, prompt: str, llm_string: str, return_val: Any) -> None:
        raise OSError("disk full")


def test_a_cache_that_fails_leaves_the_call_to_the_model(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    model = ScriptedChatModel(default=["still answered"])
    result = run(caller(store, model, recorder, response_cache=ResponseCache(BrokenCache()))
                 .call(request(persona, prompt="Answer.")))
    assert result.text == "still answered" and len(model.calls) == 1
    record = recorder.records[0]
    assert (record.outcome, record.cache) == ("ok", "miss")
    assert "response cache not read: OSError: database is locked" in record.warnings
    assert "response cache not written: OSError: disk full" in record.warnings
