"""The tool box: lookup, argument checks and normalization, failures, cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, tool
from pydantic import BaseModel, Field

from sea.engine.tools.box import ToolBox
from sea.errors import ToolArgumentError, ToolFailed, ToolNotFound, UsageError


@tool
def respond(action_results: list[dict[str, Any]], prompt_override: str = "") -> dict[str, Any]:
    """Answer from earlier action results."""
    return {"results": action_results, "prompt": prompt_override}


@tool
def plan_tasks(step_id: str) -> str:
    """Make a task list for a plan step."""
    return f"tasks for {step_id}"


@tool
def search(query: str, limit: int = 5, tags: list[str] | None = None) -> dict[str, Any]:
    """Search something."""
    return {"query": query, "limit": limit, "tags": tags}


class Window(BaseModel):
    start: int = Field(ge=0)
    end: int


@tool
def read_window(path: str, window: Window) -> str:
    """Read part of a file."""
    return f"{path}:{window.start}-{window.end}"


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"cannot: {reason}")


def box_of(*tools: BaseTool) -> ToolBox:
    return ToolBox(tools or [respond, plan_tasks, search, read_window, explode])


def call(box: ToolBox, name: str, args: dict[str, Any]) -> Any:
    return asyncio.run(box.invoke(name, args, playbook="pb", node="n"))


def test_names_get_and_select() -> None:
    box = box_of()
    assert box.names() == ["explode", "plan_tasks", "read_window", "respond", "search"]
    assert box.get("search") is search
    assert box.select(["search", "respond"]) == [search, respond]
    assert "search" in box and "web" not in box


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(UsageError, match="two tools are named 'search'"):
        ToolBox([search, search])


def test_unknown_tool_lists_the_known_ones() -> None:
    with pytest.raises(ToolNotFound) as caught:
        call(box_of(search, respond), "web_search", {"query": "x"})
    assert caught.value.code == "SEA530"
    assert (caught.value.playbook, caught.value.node) == ("pb", "n")
    assert "unknown tool 'web_search' (available tools: respond, search)" in str(caught.value)


def test_matching_arguments_pass_unchanged() -> None:
    assert call(box_of(), "search", {"query": "cats", "limit": 2}) == {
        "query": "cats",
        "limit": 2,
        "tags": None,
    }


def test_dict_where_a_list_is_expected_becomes_a_one_item_list() -> None:
    result = call(box_of(), "respond", {"action_results": {"content": "chapter 1"}})
    assert result["results"] == [{"content": "chapter 1"}]


def test_structured_result_where_a_string_is_expected_yields_its_text() -> None:
    for field in ("content", "text", "response"):
        result = call(
            box_of(),
            "respond",
            {"action_results": [], "prompt_override": {field: "the text", "other": 1}},
        )
        assert result["prompt"] == "the text"


def test_content_is_preferred_to_text_and_response() -> None:
    value = {"response": "r", "text": "t", "content": "c"}
    result = call(box_of(), "respond", {"action_results": [], "prompt_override": value})
    assert result["prompt"] == "c"


def test_structured_result_without_a_text_field_becomes_json() -> None:
    result = call(box_of(), "plan_tasks", {"step_id": {"plan_id": "p1", "first_step_id": "s1"}})
    assert result == 'tasks for {"plan_id":"p1","first_step_id":"s1"}'


def test_list_where_a_string_is_expected_becomes_json() -> None:
    result = call(box_of(), "plan_tasks", {"step_id": ["s1", "s2"]})
    assert result == 'tasks for ["s1","s2"]'


def test_none_for_an_optional_argument_is_left_out() -> None:
    assert call(box_of(), "search", {"query": "q", "limit": None})["limit"] == 5


def test_none_for_a_required_argument_is_a_type_error() -> None:
    with pytest.raises(ToolArgumentError, match="argument 'query' expects string, got null"):
        call(box_of(), "search", {"query": None})


def test_wrong_type_names_argument_expected_and_actual() -> None:
    with pytest.raises(ToolArgumentError) as caught:
        call(box_of(), "search", {"query": "q", "limit": "five"})
    assert caught.value.code == "SEA531"
    assert str(caught.value) == (
        "pb.n: tool 'search': argument 'limit' expects integer, got string (\"five\")"
    )


def test_optional_union_type_is_named_in_full() -> None:
    with pytest.raises(
        ToolArgumentError, match="argument 'tags' expects array or null, got integer"
    ):
        call(box_of(), "search", {"query": "q", "tags": 3})


def test_wrapped_object_that_still_does_not_fit_is_refused() -> None:
    # tags is list[str] | None: the object becomes [object], whose item is not a string.
    with pytest.raises(ToolArgumentError, match=r"argument 'tags' \(at tags/0\): .* not of type"):
        call(box_of(), "search", {"query": "q", "tags": {"a": 1}})


def test_missing_required_argument_is_named() -> None:
    with pytest.raises(ToolArgumentError, match="tool 'search': 'query' is a required argument"):
        call(box_of(), "search", {"limit": 1})


def test_unknown_argument_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ToolArgumentError) as caught:
        call(box_of(), "search", {"query": "q", "max_results": 3})
    assert "tool 'search' has no argument 'max_results' (its arguments: query, limit, tags)" in str(
        caught.value
    )


def test_nested_model_arguments_are_checked() -> None:
    assert call(box_of(), "read_window", {"path": "a.txt", "window": {"start": 1, "end": 4}}) == (
        "a.txt:1-4"
    )
    with pytest.raises(ToolArgumentError, match=r"argument 'window' \(at window/start\)"):
        call(box_of(), "read_window", {"path": "a.txt", "window": {"start": -1, "end": 4}})
    with pytest.raises(ToolArgumentError, match="argument 'window' expects object, got string"):
        call(box_of(), "read_window", {"path": "a.txt", "window": "1-4"})


def test_check_returns_the_normalized_arguments_without_calling() -> None:
    box = box_of()
    assert box.check("respond", {"action_results": {"a": 1}}) == {"action_results": [{"a": 1}]}


def test_a_tool_that_raises_is_tool_failed_with_its_cause() -> None:
    with pytest.raises(ToolFailed) as caught:
        call(box_of(), "explode", {"reason": "no disk"})
    assert caught.value.code == "SEA532"
    assert "tool 'explode' failed: RuntimeError: cannot: no disk" in str(caught.value)
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_tools_see_the_node_and_pulse_in_their_config() -> None:
    seen: list[dict[str, Any]] = []

    async def where(config: RunnableConfig) -> str:
        seen.append(dict(config.get("metadata") or {}))
        return "here"

    probe = StructuredTool.from_function(coroutine=where, name="where", description="Where am I.")
    box = ToolBox([probe])
    assert asyncio.run(box.invoke("where", {}, playbook="pb", node="n", pulse_id="p9")) == "here"
    assert {k: seen[0][k] for k in ("sea_playbook", "sea_node", "sea_pulse_id")} == {
        "sea_playbook": "pb",
        "sea_node": "n",
        "sea_pulse_id": "p9",
    }


def test_cancellation_passes_through_a_tool() -> None:
    started = asyncio.Event()

    async def slow() -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    box = ToolBox([StructuredTool.from_function(coroutine=slow, name="slow", description="Slow.")])

    async def scenario() -> None:
        task = asyncio.create_task(box.invoke("slow", {}))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())


def test_a_tool_with_a_json_schema_dict_is_checked_the_same_way() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "object"}},
            "note": {"type": "string"},
        },
        "required": ["items"],
    }

    async def collect(**kwargs: Any) -> dict[str, Any]:
        return kwargs

    box = ToolBox(
        [
            StructuredTool.from_function(
                coroutine=collect, name="collect", description="Collect.", args_schema=schema
            )
        ]
    )
    result = asyncio.run(box.invoke("collect", {"items": {"a": 1}, "note": {"text": "hi"}}))
    assert result == {"items": [{"a": 1}], "note": "hi"}
    with pytest.raises(ToolArgumentError, match="argument 'note' expects string, got integer"):
        asyncio.run(box.invoke("collect", {"items": [], "note": 3}))


def test_a_tool_of_a_maker_is_made_once_on_first_use() -> None:
    made: list[str] = []

    def maker(base: BaseTool) -> Any:
        def make() -> BaseTool:
            made.append(base.name)
            return base

        return make

    box = ToolBox([respond], makers={"search": maker(search), "explode": maker(explode)})
    assert box.names() == ["explode", "respond", "search"]
    assert "search" in box and "nothing" not in box and made == []
    assert call(box, "search", {"query": "q"}) == {"query": "q", "limit": 5, "tags": None}
    assert call(box, "search", {"query": "r", "limit": 2})["limit"] == 2
    assert box.select(["search", "respond"]) == [search, respond]
    assert made == ["search"]  # once, and `explode` never
    with pytest.raises(ToolNotFound, match="available tools: explode, respond, search"):
        box.get("nothing")


def test_makers_are_checked_for_their_names() -> None:
    with pytest.raises(UsageError, match="two tools are named 'search'"):
        ToolBox([search], makers={"search": lambda: search})
    box = ToolBox(makers={"find": lambda: search})
    with pytest.raises(UsageError, match="the maker of tool 'find' made a tool named 'search'"):
        box.get("find")


def test_a_made_tool_takes_the_signature_known_for_it() -> None:
    from sea.engine.tools.box import signatures

    known = signatures([search])
    box = ToolBox(makers={"search": lambda: search}, known=known)
    assert box.signature("search") is known["search"]
    learned: dict[str, Any] = {}
    box = ToolBox(makers={"search": lambda: search}, known=learned)
    assert box.signature("search").tool is search and learned["search"].tool is search
