"""Fallbacks and rate limits: a failed light call is tried once on the normal model, a
ModelSet's chain goes on from there, rate-limited requests wait with bounded exponential
backoff and jitter (the waiting is injected), and records say what happened and what it
cost."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from saimemory import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.llm.call import LLMCaller
from sea.llm.errors import ModelError, ScriptExhausted, StructuredOutputError
from sea.llm.models import ModelSet
from sea.llm.options import LLMOptions
from sea.llm.prices import Price, PriceTable
from sea.llm.resilience import Backoff, is_rate_limit
from tests.llm.fakes import ROUTER_SCHEMA, FailingModel, Recorder, request, run


class RateLimitError(Exception):
    """Named like the providers' own (openai, anthropic)."""


class Throttled(BaseChatModel):
    """Answers after refusing ``refusals`` requests with a rate limit."""

    refusals: int
    answer: str = "finally"
    seen: int = 0

    @property
    def _llm_type(self) -> str:
        return "throttled"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen += 1
        if self.seen <= self.refusals:
            raise RateLimitError("429 Too Many Requests")
        usage = {"input_tokens": 1000, "output_tokens": 500, "total_tokens": 1500}
        message = AIMessage(content=self.answer, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


class HttpError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


class Waits:
    """The injected sleep: records each wait instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def caller(
    store: SQLiteStore, models: ModelSet, recorder: Recorder, **options: Any
) -> LLMCaller:
    return LLMCaller(models, store, on_record=recorder, options=LLMOptions(**options))


def test_a_failed_light_call_is_tried_once_on_the_normal_model(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    normal = ScriptedChatModel(model_name="normal", default=["from normal"])
    models = ModelSet(normal=normal, lightweight=FailingModel())
    result = run(caller(store, models, recorder).call(request(persona, profile="router")))
    assert result.text == "from normal"
    record = result.record
    assert (record.model, record.model_kind, record.fallback) == ("normal", "normal", "normal")
    assert record.fallback_errors == ["failing: ConnectionError: provider unreachable"]
    assert any("trying 'normal'" in w for w in record.warnings)
    assert recorder.records == [record] and record.outcome == "ok"


def test_an_invalid_structured_light_answer_falls_back_after_its_retries(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    light = ScriptedChatModel(model_name="light", default=[{"wrong": 1}] * 3)
    normal = ScriptedChatModel(model_name="normal",
                               default=[{"playbook": "basic_chat", "reason": "hi"}])
    models = ModelSet(normal=normal, lightweight=light)
    result = run(caller(store, models, recorder).call(
        request(persona, profile="worker_light", response_schema=ROUTER_SCHEMA)))
    assert result.parsed == {"playbook": "basic_chat", "reason": "hi"}
    assert len(light.calls) == 3 and len(normal.calls) == 1
    record = result.record
    assert record.fallback == "normal" and record.retries == 2
    assert record.attempts == [{"wrong": 1}] * 3 + [{"playbook": "basic_chat", "reason": "hi"}]
    assert "did not match response_schema after 3 attempt(s)" in record.fallback_errors[0]


def test_a_normal_call_has_no_fallback_unless_the_set_names_a_chain(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    spare = ScriptedChatModel(model_name="spare", default=["spare answer"])
    alone = ModelSet(normal=FailingModel(), lightweight=spare)
    with pytest.raises(ModelError, match="provider unreachable") as raised:
        run(caller(store, alone, recorder).call(request(persona, profile="conversation")))
    assert raised.value.record is not None and raised.value.record.fallback is None
    chained = ModelSet(normal=FailingModel(), lightweight=FailingModel(), fallbacks=(spare,))
    result = run(caller(store, chained, recorder).call(request(persona, profile="router")))
    assert (result.text, result.record.fallback, result.record.model_kind) == (
        "spare answer", "spare", "fallback")
    assert len(result.record.fallback_errors) == 2  # light, then normal


def test_when_every_model_fails_the_last_error_stands_with_the_earlier_ones(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    light = ScriptedChatModel(model_name="light", default=[{"wrong": 1}] * 3)
    models = ModelSet(normal=FailingModel(), lightweight=light)
    with pytest.raises(ModelError, match="provider unreachable") as raised:
        run(caller(store, models, recorder).call(
            request(persona, profile="router", response_schema=ROUTER_SCHEMA)))
    record = raised.value.record
    assert record is not None and record.outcome == "error" and record.model == "failing"
    assert "did not match" in record.fallback_errors[0]


def test_a_script_running_out_is_not_a_reason_to_fall_back(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    models = ModelSet(normal=ScriptedChatModel(default=["n"]),
                      lightweight=ScriptedChatModel(model_name="light"))
    with pytest.raises(ScriptExhausted):
        run(caller(store, models, recorder).call(request(persona, profile="router")))


def test_a_streamed_failure_is_not_tried_again(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    class Breaks(ScriptedChatModel):
        async def _astream(self, *args: Any, **kwargs: Any) -> Any:
            yield await _chunk("half ")
            raise ConnectionError("dropped")

    normal = ScriptedChatModel(model_name="normal", default=["whole"])
    models = ModelSet(normal=normal, lightweight=Breaks(model_name="light", default=["x"]))
    with pytest.raises(ModelError, match="dropped"):
        run(caller(store, models, recorder).call(request(persona, profile="router",
                                                         stream=True)))
    assert normal.calls == []  # the host saw half an answer: no second one


async def _chunk(text: str) -> Any:
    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    return ChatGenerationChunk(message=AIMessageChunk(content=text))


# -- rate limits ------------------------------------------------------------------------


def test_rate_limits_are_recognised() -> None:
    assert is_rate_limit(RateLimitError("slow down"))
    assert is_rate_limit(HttpError(429)) and not is_rate_limit(HttpError(500))
    wrapped = ValueError("wrapped")
    wrapped.__cause__ = HttpError(429)
    assert is_rate_limit(wrapped)
    assert not is_rate_limit(ConnectionError("down"))


def test_backoff_grows_exponentially_is_bounded_and_jittered() -> None:
    plain = Backoff(base_delay_s=1.0, max_delay_s=5.0, jitter=0.0)
    assert [plain.delay(n) for n in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    jittered = Backoff(base_delay_s=2.0, max_delay_s=60.0, jitter=0.5, random=lambda: 1.0)
    assert jittered.delay(0) == 1.0 and jittered.delay(1) == 2.0
    assert Backoff(random=lambda: 0.0).delay(100) == Backoff().max_delay_s


def test_a_rate_limited_request_waits_and_asks_again(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    waits = Waits()
    backoff = Backoff(retries=4, base_delay_s=0.5, max_delay_s=10, jitter=0.2,
                      sleep=waits, random=lambda: 0.5)
    model = Throttled(refusals=3)
    result = run(caller(store, ModelSet.single(model), recorder, backoff=backoff)
                 .call(request(persona)))
    assert result.text == "finally" and model.seen == 4
    assert waits.delays == pytest.approx([0.45, 0.9, 1.8])
    assert result.record.rate_limited == 3 and result.record.fallback is None
    assert sum("rate limited" in w for w in result.record.warnings) == 3


def test_rate_limits_past_the_bound_fail_over_to_the_next_model(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    waits = Waits()
    light = Throttled(refusals=10)
    normal = ScriptedChatModel(model_name="normal", default=["normal answer"])
    backoff = Backoff(retries=2, jitter=0.0, sleep=waits)
    result = run(caller(store, ModelSet(normal=normal, lightweight=light), recorder,
                        backoff=backoff).call(request(persona, profile="router")))
    assert light.seen == 3 and waits.delays == [1.0, 2.0]
    assert result.text == "normal answer" and result.record.fallback == "normal"
    assert "RateLimitError" in result.record.fallback_errors[0]


def test_the_price_table_gives_each_call_its_cost(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    prices = PriceTable({"throttled-model": Price(2.0, 10.0)}, default=Price(1.0, 1.0))

    class Named(Throttled):
        model_name: str = "throttled-model"

    paid = run(caller(store, ModelSet.single(Named(refusals=0)), recorder, prices=prices)
               .call(request(persona)))
    assert paid.record.cost == pytest.approx((1000 * 2.0 + 500 * 10.0) / 1e6)
    other = run(caller(store, ModelSet.single(Throttled(refusals=0)), recorder, prices=prices)
                .call(request(persona)))
    assert other.record.cost == pytest.approx(1500 / 1e6)  # the default price
    local = ScriptedChatModel(default=["free"])  # the scripted model runs on the host
    free = run(caller(store, ModelSet.single(local), recorder, prices=prices)
               .call(request(persona)))
    assert free.record.cost == 0.0


class ThrottledScript(ScriptedChatModel):
    """A scripted model (native structured output) refusing its first requests."""

    refusals: int = 1
    seen: int = 0

    async def _agenerate(self, *args: Any, **kwargs: Any) -> ChatResult:
        self.seen += 1
        if self.seen <= self.refusals:
            raise RateLimitError("429")
        return await super()._agenerate(*args, **kwargs)


def test_a_structured_rate_limit_is_not_taken_for_a_refused_method(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    waits = Waits()
    model = ThrottledScript(default=[{"playbook": "basic_chat", "reason": "hi"}])
    models = ModelSet.single(model)
    result = run(caller(store, models, recorder, backoff=Backoff(sleep=waits, jitter=0.0))
                 .call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert result.parsed == {"playbook": "basic_chat", "reason": "hi"}
    assert waits.delays == [1.0] and model.seen == 2
    assert not any("refused" in w for w in result.record.warnings)
    assert models.structured.method_of(model) == "json_schema"


def test_structured_error_type_is_kept() -> None:
    assert issubclass(StructuredOutputError, ModelError)
