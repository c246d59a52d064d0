"""Nothing a playbook, a tool or a model supplies can crash or exhaust the host: expressions
have a length and a nesting limit checked before the CEL parser sees them, every size a pulse
can grow (a state value, the whole state, a tool result, a model answer, a stored message) is
bounded by ``Limits`` with a routable ``SEA565`` naming the bound, and ``sea validate`` lists
at most 100 problems per file and finds its hints in linear time.

Before: a 50,000-term expression crashed ``sea validate`` (exit 139); 20,000 terms passed
validation and crashed the run; a ``set`` loop doubling a string reached 3.8 GB; 5,000
undefined variables took 39 s to report, one diagnostic each.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool

from saimemory import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.engine.limits import Limits
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.host.result import PulseResult
from sea.host.runtime import Runtime
from sea.lang import codes, expressions, loader
from sea.lang.expressions import ExpressionSyntaxError, compile_expression
from sea.lang.loader import check_document
from sea.llm.models import ModelSet


def _set_playbook(expression: str) -> dict[str, Any]:
    return {"name": "sums", "description": "Adds up.", "start_node": "add",
            "nodes": [{"id": "add", "type": "set", "assignments": {"total": "=" + expression}}]}


def _terms(count: int) -> str:
    return " + ".join(["1"] * count)


# -- expressions -------------------------------------------------------------------------------


def test_a_50000_term_expression_is_a_diagnostic_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "sums.json"
    path.write_text(json.dumps(_set_playbook(_terms(50_000))), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "sea", "validate", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.returncode  # a segfault is -11 (exit 139)
    assert f"{codes.EXPRESSION_TOO_LARGE} error" in done.stdout
    assert "the expression length limit" in done.stdout


def test_a_20000_term_expression_never_reaches_the_parser_or_the_run() -> None:
    found = check_document(json.dumps(_set_playbook(_terms(20_000))), file="sums.json")
    assert found.playbook is None
    (diagnostic,) = found.diagnostics
    assert diagnostic.code == codes.EXPRESSION_TOO_LARGE
    assert diagnostic.pointer == "/nodes/0/assignments/total" and diagnostic.line == 1
    assert f"more than {expressions.MAX_EXPRESSION_LENGTH:,}" in diagnostic.message
    assert diagnostic.hint is not None and "split it" in diagnostic.hint


@pytest.mark.parametrize("expression", [
    "-" * 3_000 + "1",  # a unary chain: no bracket, all depth
    "!" * 3_000 + "true",
    "(" * 1_500 + "1" + ")" * 1_500,
    _terms(102),  # short, but CEL nests a chain of + as deep as it is long
    "{a}" + ".b" * 1_000,
])
def test_a_deeply_nested_expression_is_refused_before_parsing(expression: str) -> None:
    with pytest.raises(ExpressionSyntaxError, match="the expression depth limit") as refused:
        compile_expression(expression)
    assert refused.value.code == codes.EXPRESSION_TOO_LARGE
    assert expressions.MAX_EXPRESSION_DEPTH < 102


def test_ordinary_expressions_stay_well_within_the_limits() -> None:
    for expression in ("{count} + 1", "size({found}) > 0 && {round} <= 3 || !{done}",
                       "[1.5, 2.5, 3.5].map(x, x * 2.0)", "'a+b+c' + {name}", _terms(60)):
        compile_expression(expression)


# -- sizes in a pulse --------------------------------------------------------------------------


@pytest.fixture
def books(tmp_path: Path) -> Path:
    folder = tmp_path / "books"
    folder.mkdir()
    return folder


def _write(books: Path, playbook: dict[str, Any]) -> None:
    (books / f"{playbook['name']}.json").write_text(json.dumps(playbook), encoding="utf-8")


@pytest.fixture
def run(store: SQLiteStore, persona: Persona, books: Path, tmp_path: Path) -> Iterator[Any]:
    made: list[Runtime] = []

    def run_one(playbook: dict[str, Any], *, script: dict[str, Any] | None = None,
                tools: Any = (), limits: Limits | None = None) -> PulseResult:
        _write(books, playbook)
        model = ScriptedChatModel.from_mapping(script or {})
        runtime = Runtime(RuntimeConfig(store, ModelSet.single(model), tools=tools, library=[books],
                          limits=limits, checkpoint_path=tmp_path / "checkpoints.sqlite"))
        made.append(runtime)
        return runtime.run_pulse(persona, playbook["name"], "go")

    yield run_one
    for runtime in made:
        runtime.close()


def _size_error(result: PulseResult, limit: str) -> dict[str, Any]:
    assert result.status == "error" and result.error is not None, result
    assert result.error["code"] == "SEA565"
    assert f"Limits.{limit}" in result.error["message"]
    return result.error


DOUBLING: dict[str, Any] = {
    "name": "doubling", "description": "Doubles a text until it is huge.", "start_node": "seed",
    "nodes": [
        {"id": "seed", "type": "set", "assignments": {"s": "x" * 1_000}, "next": "double"},
        {"id": "double", "type": "set",
         "assignments": {"s": "={s} + {s}", "done": "=size({s}) > 100000000"},
         "conditional_next": {"field": "done", "cases": {"true": None}, "default": "double"}},
    ],
}


def test_a_set_loop_doubling_a_string_stops_at_the_value_limit(run: Any) -> None:
    result = run(DOUBLING, limits=Limits(max_value_chars=1_000_000))  # the default, said
    error = _size_error(result, "max_value_chars")
    assert error["node"] == "double" and "`s`" in error["message"]
    runs = [e for e in result.events if e.kind == "node_start" and e.node == "double"]
    assert len(runs) == 10  # 1,000 characters doubled ten times pass 1,000,000


def test_the_whole_state_is_bounded_and_the_error_names_the_largest_values(run: Any) -> None:
    playbook = {
        "name": "hoard", "description": "Keeps several large texts.", "start_node": "a",
        "nodes": [
            {"id": "a", "type": "set", "assignments": {"first": "a" * 900}, "next": "b"},
            {"id": "b", "type": "set", "assignments": {"second": "b" * 900}, "next": "c"},
            {"id": "c", "type": "set", "assignments": {"third": "c" * 900}},
        ],
    }
    result = run(playbook, limits=Limits(max_value_chars=1_000, max_state_chars=2_500))
    error = _size_error(result, "max_state_chars")
    assert error["node"] == "c"
    assert "`first` (902)" in error["message"] and "`third` (902)" in error["message"]


@tool
def flood() -> str:
    """Return far too much text."""
    return "z" * 1_500_000


def test_a_huge_tool_result_fails_the_node_and_is_routed_not_stored(run: Any) -> None:
    playbook = {
        "name": "flooded", "description": "Calls a tool that floods.", "start_node": "call",
        "nodes": [
            {"id": "call", "type": "tool", "action": "flood", "output_key": "got",
             "error_next": "note", "next": "note"},
            {"id": "note", "type": "set", "assignments": {"code": "{error.code}"}},
        ],
    }
    result = run(playbook, tools=[flood])
    assert result.status == "ok"  # error_next took over
    assert result.outputs["code"] == "SEA565" and "got" not in result.outputs
    (handled,) = result.handled_errors
    assert "Limits.max_tool_result_chars" in handled["message"]


@tool
def nested_flood() -> dict[str, Any]:
    """Return far too much text inside an object."""
    return {"pages": [{"text": "z" * 300_000} for _ in range(5)]}


@tool
def wide_text() -> dict[str, Any]:
    """Return text of many bytes but few characters."""
    return {"text": "猫" * 900}


CALLING: dict[str, Any] = {
    "name": "calling", "description": "Calls one tool.", "start_node": "call",
    "nodes": [
        {"id": "call", "type": "tool", "action": "nested_flood", "output_key": "got",
         "error_next": "note"},
        {"id": "note", "type": "set", "assignments": {"code": "{error.code}"}},
    ],
}


def test_a_huge_result_inside_an_object_is_refused_too(run: Any) -> None:
    result = run(CALLING, tools=[nested_flood])
    assert result.outputs["code"] == "SEA565" and "got" not in result.outputs


def test_the_limit_counts_characters_not_bytes(run: Any) -> None:
    playbook = json.loads(json.dumps(CALLING).replace("nested_flood", "wide_text"))
    # about 2,700 bytes of JSON text, 913 characters: under a limit of 1,000
    result = run(playbook, tools=[wide_text], limits=Limits(max_tool_result_chars=1_000))
    assert result.status == "ok" and result.outputs["got"] == {"text": "猫" * 900}
    refused = run(playbook, tools=[wide_text], limits=Limits(max_tool_result_chars=900))
    assert refused.outputs["code"] == "SEA565" and "got" not in refused.outputs


ASKING: dict[str, Any] = {
    "name": "asking", "description": "Asks the model.", "start_node": "ask",
    "nodes": [{"id": "ask", "type": "llm", "action": "Say something.", "output_key": "said"}],
}


@pytest.mark.parametrize("shape", ["plain", "streamed", "structured"])
def test_a_huge_model_answer_fails_the_call(run: Any, shape: str) -> None:
    words = ("y" * 999 + " ") * 250  # 250,000 characters, in 250 streamed chunks
    node = dict(ASKING["nodes"][0])
    answer: Any = words
    if shape == "streamed":
        node["speak"] = True
    elif shape == "structured":
        node["response_schema"] = {"type": "object", "properties": {"w": {"type": "string"}}}
        answer = {"w": words}
    playbook = {**ASKING, "nodes": [node]}
    result = run(playbook, script={"responses": {"asking.ask": [answer]}})
    error = _size_error(result, "max_answer_chars")
    assert error["node"] == "ask" and "said" not in result.outputs
    assert all(len(text) <= 200_000 for text in result.spoken)


def test_a_huge_message_is_not_written_to_memory(
    run: Any, store: SQLiteStore, persona: Persona
) -> None:
    playbook = {
        "name": "diary", "description": "Writes a long note.", "start_node": "note",
        "nodes": [{"id": "note", "type": "memorize", "role": "user",
                   "action": "<system>" + "n" * 2_000 + "</system>"}],
    }
    result = run(playbook, limits=Limits(max_message_chars=1_000))
    _size_error(result, "max_message_chars")
    assert not any("nnnn" in m.content for m in store.recent(persona.id, limit=50))


def test_a_huge_typed_input_is_refused_before_it_is_stored(
    store: SQLiteStore, persona: Persona, books: Path, tmp_path: Path
) -> None:
    _write(books, {"name": "hush", "description": "Does nothing.", "start_node": "s",
                   "nodes": [{"id": "s", "type": "pass"}]})
    model = ModelSet.single(ScriptedChatModel.from_mapping({}))
    with Runtime(RuntimeConfig(store, model, library=[books],
                               limits=Limits(max_message_chars=1_000),
                               checkpoint_path=tmp_path / "checkpoints.sqlite")) as runtime:
        result = runtime.run_pulse(persona, "hush", "y" * 5_000)
    assert result.status == "error" and result.error is not None
    assert result.error["code"] == "SEA565" and "max_message_chars" in result.error["message"]
    assert not any("yyyy" in m.content for m in store.recent(persona.id, limit=50))


def test_size_limits_must_be_positive() -> None:
    with pytest.raises(UsageError, match="max_state_chars"):
        Limits(max_state_chars=0)


# -- the report --------------------------------------------------------------------------------


def _undefined_reads(count: int) -> str:
    """A playbook that defines ``v0000``… and reads as many undefined ``u0000``…: names of one
    length, so no hint can be skipped for being too long or too short."""
    assignments = {f"v{i:04d}": f"{{u{i:04d}}}" for i in range(count)}
    return json.dumps({"name": "unknowns", "description": "Reads what is never defined.",
                       "start_node": "s", "nodes": [{"id": "s", "type": "set",
                                                     "assignments": assignments}]})


def test_diagnostics_are_capped_per_file_with_a_count_of_the_rest() -> None:
    found = check_document(_undefined_reads(5_000), file="unknowns.json").diagnostics
    assert len(found) <= 101  # one each, 5,000 of them, before
    assert len(found) == loader.MAX_DIAGNOSTICS + 1
    assert all(d.code == codes.UNDEFINED_VARIABLE for d in found[:-1])
    last = found[-1]
    assert last.code == codes.TOO_MANY_DIAGNOSTICS and last.file == "unknowns.json"
    assert "and 4,900 more problems" in last.message and "4,900 errors" in last.message


def test_hints_for_thousands_of_unknown_names_take_linear_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compared = 0
    original = difflib.SequenceMatcher.set_seq1

    def counting(self: difflib.SequenceMatcher[str], a: str) -> None:
        nonlocal compared
        compared += 1
        original(self, a)

    monkeypatch.setattr(difflib.SequenceMatcher, "set_seq1", counting)
    found = check_document(_undefined_reads(5_000), file="unknowns.json").diagnostics
    assert found[0].hint is not None and found[0].hint.startswith("did you mean `v0000`?")
    assert compared <= 200_000  # 5,000 x 5,000 = 25 million before
