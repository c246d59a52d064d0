"""Messages map to llama chat turns and are fitted into the context window."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from sea.chat.errors import UnsupportedMessage
from sea.chat.llama_messages import ChatTurn, fit_to_context, to_chat_turns


def _count(turns: list[ChatTurn]) -> int:
    """A stand-in tokenizer: 3 tokens of template per message, one token per 4 characters."""
    return sum(3 + len(t["content"]) // 4 for t in turns)


def test_roles_and_text_blocks_map_to_chat_turns() -> None:
    turns = to_chat_turns(
        [
            SystemMessage("be kind"),
            HumanMessage(content=[{"type": "text", "text": "hel"}, "lo"]),
            AIMessage("hi"),
        ]
    )
    assert turns == [
        {"role": "system", "content": "be kind"},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi"},
    ]


def test_tool_messages_and_images_are_refused() -> None:
    with pytest.raises(UnsupportedMessage, match="ToolMessage"):
        to_chat_turns([ToolMessage("42", tool_call_id="c1")])
    with pytest.raises(UnsupportedMessage, match="image_url"):
        to_chat_turns([HumanMessage(content=[{"type": "image_url", "image_url": {"url": "x"}}])])


def test_prompt_within_budget_is_untouched() -> None:
    turns = [{"role": "system", "content": "s"}, {"role": "user", "content": "u" * 40}]
    fitted = fit_to_context(turns, _count, budget=100)
    assert fitted.turns == turns
    assert fitted.trim_report() is None
    assert fitted.prompt_tokens == _count(turns)


def test_oldest_non_system_messages_are_dropped_first() -> None:
    turns = [{"role": "system", "content": "sys" * 10}]
    turns += [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{i}" * 40} for i in range(6)
    ]
    fitted = fit_to_context(turns, _count, budget=50)
    assert fitted.turns[0] == turns[0]
    assert fitted.turns[1:] == turns[-3:]
    assert fitted.prompt_tokens <= 50
    assert fitted.trim_report() == {
        "dropped_messages": 3,
        "truncated_messages": 0,
        "prompt_tokens": fitted.prompt_tokens,
    }


def test_a_single_huge_message_keeps_its_head_and_tail() -> None:
    text = "HEAD" + "x" * 4000 + "TAIL"
    fitted = fit_to_context([{"role": "user", "content": text}], _count, budget=200)
    content = fitted.turns[0]["content"]
    assert content.startswith("HEAD") and content.endswith("TAIL")
    assert "[…]" in content
    assert fitted.prompt_tokens <= 200
    assert fitted.truncated_messages == 1 and fitted.dropped_messages == 0


def test_template_overhead_beyond_budget_stops_instead_of_looping() -> None:
    turns = [{"role": "system", "content": "abc"}, {"role": "user", "content": "def"}]
    fitted = fit_to_context(turns, _count, budget=2)
    assert all(t["content"] == "" for t in fitted.turns)
    assert fitted.prompt_tokens > 2
