"""The LLM call path end to end: context, model choice, records, streaming, failures."""

from __future__ import annotations

import asyncio
import json

import pytest

from saimemory import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.errors import PulseCancelled
from sea.llm.errors import ModelError, ScriptExhausted
from tests.llm.fakes import (
    FailingModel,
    Recorder,
    TextOnlyModel,
    caller_for,
    request,
    run,
    seed,
)

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
