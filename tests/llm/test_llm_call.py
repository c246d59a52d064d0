"""The LLM call path end to end: a real SQLite store, the scripted model and small fakes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from saimemory import CONVERSATION_TAG, NewMessage, Persona
from saimemory.sqlite import SQLiteStore
from sea.errors import ModelError, PulseCancelled, ScriptExhausted, StructuredOutputError
from sea.llm.call import LLMCaller, LLMRequest
from sea.llm.models import ModelSet
from sea.llm.records import LLMCallRecord
from sea.scripted import ScriptedChatModel

ROUTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"playbook": {"type": "string"}, "reason": {"type": "string"}},
    "required": ["playbook", "reason"],
}


class TextOnlyModel(BaseChatModel):
    """A chat model without native structured output or tools: answers from a list."""

    answers: list[str]
    seen: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "text-only"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        text = self.answers[len(self.seen) - 1]
        usage = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
        message = AIMessage(content=text, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


class FailingModel(BaseChatModel):
    """A provider that is down."""

    @property
    def _llm_type(self) -> str:
        return "failing"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise ConnectionError("provider unreachable")


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


class Recorder:
    """Collects every record the caller emits."""

    def __init__(self) -> None:
        self.records: list[LLMCallRecord] = []

    def __call__(self, record: LLMCallRecord) -> None:
        self.records.append(record)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def caller_for(
    store: SQLiteStore,
    model: BaseChatModel,
    recorder: Recorder | None = None,
    *,
    light: BaseChatModel | None = None,
    max_retries: int = 2,
) -> LLMCaller:
    models = ModelSet(normal=model, lightweight=light or model)
    return LLMCaller(models, store, max_retries=max_retries, on_record=recorder)


def request(persona: Persona, **overrides: Any) -> LLMRequest:
    fields: dict[str, Any] = {
        "playbook": "pb",
        "node": "n",
        "persona": persona,
        "profile": "conversation",
        "pulse_id": "p1",
    }
    fields.update(overrides)
    return LLMRequest(**fields)


def seed(store: SQLiteStore, persona: Persona) -> None:
    conv = (CONVERSATION_TAG,)
    store.append(NewMessage(persona.id, "user", "Do you have poems?", pulse_id="p0", tags=conv))
    store.append(NewMessage(persona.id, "assistant", "Many.", pulse_id="p0", tags=conv))
    store.append(NewMessage(persona.id, "user", "Any by Basho?", pulse_id="p1", tags=conv))
    store.append(NewMessage(persona.id, "user", "<system>found 2 books</system>", pulse_id="p1"))


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- context, model choice, record ---------------------------------------------------------


def test_conversation_call_sends_the_context_and_records_it(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    seed(store, persona)
    model = ScriptedChatModel(responses={"pb.n": ["Two of them."]})
    result = run(caller_for(store, model, recorder).call(request(persona, prompt="Answer.")))
    assert result.text == "Two of them."
    assert result.parsed is None and result.tool_call is None
    sent = model.calls[0].messages
    assert sent == [
        {"role": "system", "content": "You are Mika, a careful librarian."},
        {"role": "user", "content": "Do you have poems?"},
        {"role": "assistant", "content": "Many."},
        {"role": "user", "content": "Any by Basho?"},
        {"role": "user", "content": "<system>found 2 books</system>"},
        {"role": "user", "content": "<system>\nAnswer.\n</system>"},
    ]
    record = result.record
    assert record.messages == sent
    assert (record.playbook, record.node, record.model) == ("pb", "n", "scripted")
    assert record.response == "Two of them."
    assert record.outcome == "ok" and record.error is None and record.retries == 0
    assert record.tokens_in > 0 and record.tokens_out == 3
    assert record.latency_s >= 0
    assert recorder.records == [record]
    assert json.loads(json.dumps(record.to_json()))["response"] == "Two of them."


def test_worker_profile_sends_no_history(store: SQLiteStore, persona: Persona) -> None:
    seed(store, persona)
    model = ScriptedChatModel(default=["3"])
    run(caller_for(store, model).call(request(persona, profile="worker", prompt="Sum 1+2.")))
    assert [m["content"] for m in model.calls[0].messages] == [
        "You are Mika, a careful librarian.",
        "<system>\nSum 1+2.\n</system>",
    ]


@pytest.mark.parametrize(
    ("profile", "model_type", "expected"),
    [
        ("conversation", "lightweight", "normal"),
        ("router", "normal", "light"),
        ("worker", "lightweight", "normal"),
        ("worker_light", "normal", "light"),
        (None, "lightweight", "light"),
        (None, "normal", "normal"),
    ],
)
def test_profile_then_model_type_choose_the_model(
    store: SQLiteStore, persona: Persona, profile: str | None, model_type: str, expected: str
) -> None:
    normal = ScriptedChatModel(model_name="normal-model", default=["normal"])
    light = ScriptedChatModel(model_name="light-model", default=["light"])
    caller = caller_for(store, normal, light=light)
    result = run(caller.call(request(persona, profile=profile, model_type=model_type)))
    assert result.text == expected
    assert result.record.model == f"{expected}-model"


def test_unknown_profile_is_a_model_error(store: SQLiteStore, persona: Persona) -> None:
    caller = caller_for(store, ScriptedChatModel(default=["x"]))
    with pytest.raises(ModelError, match="unknown context profile 'chat'"):
        run(caller.call(request(persona, profile="chat")))


# -- structured output -----------------------------------------------------------------------


def test_structured_answer_is_parsed_and_validated(store: SQLiteStore, persona: Persona) -> None:
    answer = {"playbook": "basic_chat", "reason": "small talk"}
    model = ScriptedChatModel(responses={"pb.n": [answer]})
    result = run(caller_for(store, model).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert result.parsed == answer
    assert json.loads(result.text) == answer
    assert result.record.response == answer
    assert result.record.attempts == [answer]
    assert result.record.retries == 0 and result.record.warnings == []


def test_invalid_answer_is_retried_with_what_was_wrong(
    store: SQLiteStore, persona: Persona
) -> None:
    bad, good = {"playbook": "basic_chat"}, {"playbook": "basic_chat", "reason": "ok"}
    model = ScriptedChatModel(responses={"pb.n": [bad, good]})
    result = run(caller_for(store, model).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert result.parsed == good
    assert result.record.retries == 1
    assert result.record.attempts == [bad, good]
    second = model.calls[1].messages
    assert second[:-2] == model.calls[0].messages
    assert second[-2] == {"role": "assistant", "content": json.dumps(bad, separators=(",", ":"))}
    assert second[-1]["role"] == "user"
    assert "could not be used: 'reason' is a required property" in second[-1]["content"]
    assert result.record.messages == second


def test_text_that_is_not_json_is_retried(store: SQLiteStore, persona: Persona) -> None:
    good = {"playbook": "basic_chat", "reason": "ok"}
    model = ScriptedChatModel(responses={"pb.n": ["I pick basic_chat.", good]})
    result = run(caller_for(store, model).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert result.parsed == good
    retry = model.calls[1].messages[-1]["content"]
    assert "the answer contained no JSON value" in retry


def test_retries_are_bounded_then_a_structured_output_error(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    model = ScriptedChatModel(responses={"pb.n": [{"playbook": 1}] * 3 + ["spare"]})
    caller = caller_for(store, model, recorder, max_retries=2)
    with pytest.raises(StructuredOutputError) as caught:
        run(caller.call(request(persona, response_schema=ROUTER_SCHEMA)))
    error = caught.value
    assert error.code == "SEA521" and (error.playbook, error.node) == ("pb", "n")
    assert "after 3 attempt(s)" in str(error)
    assert "at /playbook: 1 is not of type 'string'" in str(error)
    assert error.record is not None
    assert error.record.outcome == "error" and error.record.retries == 2
    assert error.record.error == error.detail
    assert error.record.tokens_out > 0
    assert len(model.calls) == 3 and model.remaining("pb.n") == 1
    assert recorder.records == [error.record]


def test_zero_retries_fails_on_the_first_bad_answer(store: SQLiteStore, persona: Persona) -> None:
    model = ScriptedChatModel(responses={"pb.n": [{"playbook": 1}]})
    with pytest.raises(StructuredOutputError, match="after 1 attempt"):
        run(
            caller_for(store, model, max_retries=0).call(
                request(persona, response_schema=ROUTER_SCHEMA)
            )
        )


def test_invalid_response_schema_is_reported(store: SQLiteStore, persona: Persona) -> None:
    model = ScriptedChatModel(default=[{"a": 1}])
    caller = caller_for(store, model)
    for _ in range(2):  # the verdict on a schema is kept, and still reported
        with pytest.raises(StructuredOutputError, match="not a valid JSON Schema"):
            run(caller.call(request(persona, response_schema={"type": "int"})))
    assert model.calls == []


def test_extraction_path_for_a_model_without_native_structured_output(
    store: SQLiteStore, persona: Persona
) -> None:
    fenced = 'Sure.\n```json\n{"playbook": "basic_chat", "reason": "chat"}\n```'
    model = TextOnlyModel(answers=["I do not know.", fenced], seen=[])
    result = run(caller_for(store, model).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert result.parsed == {"playbook": "basic_chat", "reason": "chat"}
    assert result.text == fenced
    first = model.seen[0]
    assert "Answer with only a JSON value that matches this JSON Schema" in str(first[-1].content)
    assert '"required":["playbook","reason"]' in str(first[-1].content)
    assert "the answer contained no JSON value" in str(model.seen[1][-1].content)
    record = result.record
    assert record.retries == 1 and record.tokens_in == 14 and record.tokens_out == 6
    assert record.model == "text-only"
    assert record.warnings == ["no native structured output: JSON extracted from the text"]


def test_router_enum_is_injected_and_enforced(store: SQLiteStore, persona: Persona) -> None:
    answers = [
        '{"playbook": "web_search", "reason": "x"}',
        '{"playbook": "memory_recall", "reason": "y"}',
    ]
    model = TextOnlyModel(answers=answers, seen=[])
    names = ["basic_chat", "memory_recall"]
    req = request(persona, profile="router", response_schema=ROUTER_SCHEMA, playbook_enum=names)
    result = run(caller_for(store, model).call(req))
    assert result.parsed == {"playbook": "memory_recall", "reason": "y"}
    instruction = str(model.seen[0][-1].content)
    assert '"enum":["basic_chat","memory_recall"]' in instruction
    retry = str(model.seen[1][-1].content)
    assert "'web_search' is not one of ['basic_chat', 'memory_recall']" in retry
    assert "enum" not in ROUTER_SCHEMA["properties"]["playbook"]


def test_structured_answers_are_not_streamed(store: SQLiteStore, persona: Persona) -> None:
    tokens: list[str] = []

    async def on_token(text: str) -> None:
        tokens.append(text)

    model = ScriptedChatModel(default=[{"playbook": "a", "reason": "b"}])
    req = request(persona, response_schema=ROUTER_SCHEMA, stream=True)
    result = run(caller_for(store, model).call(req, on_token=on_token))
    assert result.parsed == {"playbook": "a", "reason": "b"}
    assert tokens == []


def test_schema_and_tools_together_are_refused(store: SQLiteStore, persona: Persona) -> None:
    model = ScriptedChatModel(default=["x"])
    req = request(persona, response_schema=ROUTER_SCHEMA, tools=[lookup])
    with pytest.raises(ModelError, match="both a response_schema and tools") as caught:
        run(caller_for(store, model).call(req))
    assert (caught.value.playbook, caught.value.node) == ("pb", "n")
    assert caught.value.record is not None and caught.value.record.outcome == "error"


# -- streaming and cancellation --------------------------------------------------------------


def test_streaming_sends_each_token_and_returns_the_full_text(
    store: SQLiteStore, persona: Persona
) -> None:
    tokens: list[str] = []

    async def on_token(text: str) -> None:
        tokens.append(text)

    model = ScriptedChatModel(responses={"sub_speak.compose": ["Here are two books."]})
    req = request(persona, playbook="sub_speak", node="compose", stream=True)
    result = run(caller_for(store, model).call(req, on_token=on_token))
    assert tokens == ["Here ", "are ", "two ", "books."]
    assert result.text == "Here are two books."
    assert result.record.response == "Here are two books."
    assert result.record.tokens_out == 5


def test_without_stream_no_tokens_are_sent(store: SQLiteStore, persona: Persona) -> None:
    tokens: list[str] = []

    async def on_token(text: str) -> None:
        tokens.append(text)

    model = ScriptedChatModel(default=["Quiet answer."])
    result = run(caller_for(store, model).call(request(persona), on_token=on_token))
    assert result.text == "Quiet answer." and tokens == []


def test_cancellation_propagates_untouched_and_is_recorded(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    model = ScriptedChatModel(default=["one two three four"])
    caller = caller_for(store, model, recorder)

    async def scenario() -> None:
        first_token = asyncio.Event()

        async def on_token(text: str) -> None:
            first_token.set()
            await asyncio.Event().wait()  # the host is slow; the pulse is cancelled meanwhile

        task = asyncio.create_task(caller.call(request(persona, stream=True), on_token=on_token))
        await first_token.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())
    [record] = recorder.records
    assert record.outcome == "cancelled"
    assert record.response == "one "


# -- tools -----------------------------------------------------------------------------------


def test_tool_call_is_returned(store: SQLiteStore, persona: Persona) -> None:
    entry = {"tool_calls": [{"name": "lookup", "args": {"query": "Basho"}}], "content": "Looking."}
    model = ScriptedChatModel(responses={"pb.n": [entry]})
    result = run(caller_for(store, model).call(request(persona, tools=[lookup])))
    assert result.tool_call is not None
    assert (result.tool_call.name, result.tool_call.args) == ("lookup", {"query": "Basho"})
    assert result.tool_call.id
    assert result.text == "Looking."
    assert result.record.response == {
        "tool_calls": [{"name": "lookup", "args": {"query": "Basho"}, "id": result.tool_call.id}],
        "content": "Looking.",
    }


def test_streamed_tool_call_is_returned(store: SQLiteStore, persona: Persona) -> None:
    entry = {"tool_calls": [{"name": "lookup", "args": {"query": "Issa"}}]}
    model = ScriptedChatModel(default=[entry])
    result = run(caller_for(store, model).call(request(persona, tools=[lookup], stream=True)))
    assert result.tool_call is not None and result.tool_call.args == {"query": "Issa"}


def test_text_answer_in_tool_mode_has_no_tool_call(store: SQLiteStore, persona: Persona) -> None:
    model = ScriptedChatModel(default=["No tool needed."])
    result = run(caller_for(store, model).call(request(persona, tools=[lookup])))
    assert result.tool_call is None and result.text == "No tool needed."


def test_a_tool_that_was_not_offered_is_an_error(store: SQLiteStore, persona: Persona) -> None:
    entry = {"tool_calls": [{"name": "delete_everything", "args": {}}]}
    model = ScriptedChatModel(default=[entry])
    with pytest.raises(ModelError, match="'delete_everything', which was not offered \\(lookup\\)"):
        run(caller_for(store, model).call(request(persona, tools=[lookup])))


def test_several_tool_calls_keep_the_first_and_warn(store: SQLiteStore, persona: Persona) -> None:
    entry = {
        "tool_calls": [
            {"name": "lookup", "args": {"query": "a"}},
            {"name": "lookup", "args": {"query": "b"}},
        ]
    }
    model = ScriptedChatModel(default=[entry])
    result = run(caller_for(store, model).call(request(persona, tools=[lookup])))
    assert result.tool_call is not None and result.tool_call.args == {"query": "a"}
    assert result.record.warnings == [
        "the model asked for several tool calls; only the first runs (lookup ignored)"
    ]


def test_a_model_without_tool_support_is_an_error(store: SQLiteStore, persona: Persona) -> None:
    model = TextOnlyModel(answers=["x"], seen=[])
    with pytest.raises(ModelError, match="cannot call tools"):
        run(caller_for(store, model).call(request(persona, tools=[lookup])))


# -- failures --------------------------------------------------------------------------------


def test_provider_failure_is_a_model_error_with_record_and_cause(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    with pytest.raises(ModelError) as caught:
        run(caller_for(store, FailingModel(), recorder).call(request(persona, prompt="Hi")))
    error = caught.value
    assert error.code == "SEA520"
    assert "model 'failing' failed: ConnectionError: provider unreachable" in str(error)
    assert isinstance(error.__cause__, ConnectionError)
    assert error.record is not None and error.record.outcome == "error"
    assert error.record.messages[-1] == {"role": "user", "content": "<system>\nHi\n</system>"}
    assert recorder.records == [error.record]


def test_exhausted_script_keeps_its_error_and_gets_the_record(
    store: SQLiteStore, persona: Persona
) -> None:
    model = ScriptedChatModel(responses={"pb.other": ["x"]})
    with pytest.raises(ScriptExhausted, match="'pb.n'") as caught:
        run(caller_for(store, model).call(request(persona)))
    assert caught.value.record is not None
    assert caught.value.record.outcome == "error" and caught.value.record.model == "scripted"


def test_store_is_read_not_written(store: SQLiteStore, persona: Persona) -> None:
    seed(store, persona)
    before = list(store.iter_messages(persona.id))
    run(caller_for(store, ScriptedChatModel(default=["x"])).call(request(persona, prompt="Hi")))
    assert list(store.iter_messages(persona.id)) == before


def test_pulse_cancelled_from_the_token_sink_is_not_a_model_error(
    store: SQLiteStore, persona: Persona, recorder: Recorder
) -> None:
    async def on_token(text: str) -> None:
        raise PulseCancelled("the host cancelled the pulse")

    model = ScriptedChatModel(default=["one two"])
    with pytest.raises(PulseCancelled):
        run(
            caller_for(store, model, recorder).call(
                request(persona, stream=True), on_token=on_token
            )
        )
    assert [r.outcome for r in recorder.records] == ["cancelled"]
    assert recorder.records[0].response == "one "


class ToolCallingModel(BaseChatModel):
    """A provider whose structured output is langchain's default: a forced tool call."""

    arguments: list[dict[str, Any]]
    offered: list[list[dict[str, Any]]] = []

    @property
    def _llm_type(self) -> str:
        return "tool-calling"

    def bind_tools(self, tools: Any, *, tool_choice: str | None = None, **kwargs: Any) -> Any:
        formatted = [convert_to_openai_tool(t) for t in tools]
        self.offered.append(formatted)
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        name = kwargs["tools"][0]["function"]["name"]
        args = self.arguments.pop(0)
        message = AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "c1"}])
        return ChatResult(generations=[ChatGeneration(message=message)])


def test_native_structured_output_through_a_tool_call(store: SQLiteStore, persona: Persona) -> None:
    bad, good = {"playbook": "basic_chat"}, {"playbook": "basic_chat", "reason": "chat"}
    model = ToolCallingModel(arguments=[bad, good], offered=[])
    result = run(caller_for(store, model).call(request(persona, response_schema=ROUTER_SCHEMA)))
    assert result.parsed == good
    function = model.offered[0][0]["function"]
    assert function["name"] == "structured_answer"
    assert function["parameters"]["required"] == ["playbook", "reason"]
    assert result.record.attempts == [bad, good]
    assistant, retry = result.record.messages[-2:]
    assert assistant == {"role": "assistant", "content": '{"playbook":"basic_chat"}'}
    assert "'reason' is a required property" in retry["content"]


def test_streaming_a_model_that_cannot_stream_sends_one_token(
    store: SQLiteStore, persona: Persona
) -> None:
    tokens: list[str] = []

    async def on_token(text: str) -> None:
        tokens.append(text)

    model = TextOnlyModel(answers=["All at once."], seen=[])
    result = run(caller_for(store, model).call(request(persona, stream=True), on_token=on_token))
    assert tokens == ["All at once."]
    assert result.text == "All at once." and result.record.tokens_out == 3
