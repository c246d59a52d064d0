"""Property-based: mutated playbooks never make the loader raise; only diagnostics come out."""

import copy
import json
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from sea.errors import Severity
from sea.lang.checks import CheckContext, ToolCatalogue
from sea.lang.codes import CODES
from sea.lang.conditions import choose_target
from sea.lang.expressions import ExpressionError, compile_expression
from sea.lang.library import PlaybookLibrary
from sea.lang.loader import check_document
from sea.lang.models import Playbook
from sea.lang.node import ConditionalNext
from sea.lang.templates import render
from sea.lang.vocabulary import BUILTIN_NODE_TYPES

DATA = Path(__file__).resolve().parent.parent / "data"
SEEDS = [
    orjson.loads(p.read_bytes())
    for d in ("valid", "saiverse", "library")
    for p in sorted((DATA / d).glob("*.json"))
]
CONTEXT = CheckContext(
    library=PlaybookLibrary([DATA / "saiverse", DATA / "library"]),
    tools=ToolCatalogue.load(DATA / "tools.json"),
)

KEYS = st.sampled_from(
    ["id", "type", "next", "error_next", "conditional_next", "cases", "field", "operator",
     "action", "args", "output_key", "response_schema", "assignments", "playbook", "nodes",
     "start_node", "name", "tools", "default", "true", "{x}", "=", ""]
)  # fmt: skip
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["llm", "pass", "set", "stelis_start", "={x} + 1", "{input}", "a", "=1 +"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=8,
)


def _containers(value: Any) -> list[Any]:
    found = [value] if isinstance(value, (dict, list)) else []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    for item in items:
        found.extend(_containers(item))
    return found


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    document = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        target = draw(st.sampled_from(_containers(document) or [document]))
        if isinstance(target, dict) and target:
            key = draw(st.sampled_from(sorted(target)))
            action = draw(st.sampled_from(["delete", "replace", "add", "rename"]))
            if action == "delete":
                del target[key]
            elif action == "replace":
                target[key] = draw(VALUES)
            elif action == "add":
                target[draw(KEYS)] = draw(VALUES)
            else:
                target[draw(KEYS)] = target.pop(key)
        elif isinstance(target, list):
            if target and draw(st.booleans()):
                target[draw(st.integers(0, len(target) - 1))] = draw(VALUES)
            else:
                target.append(draw(VALUES))
        else:
            document = draw(VALUES)
    return document


def _assert_only_diagnostics(data: bytes) -> None:
    result = check_document(data, file="m.json", context=CONTEXT)
    for diagnostic in result.diagnostics:
        assert diagnostic.code in CODES
        assert diagnostic.message
    has_errors = any(d.severity is Severity.ERROR for d in result.diagnostics)
    assert (result.playbook is None) == has_errors


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_documents_give_only_diagnostics(document: Any) -> None:
    _assert_only_diagnostics(json.dumps(document, indent=2).encode())


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(SEEDS), st.data())
def test_corrupted_bytes_give_only_diagnostics(document: Any, data: st.DataObject) -> None:
    raw = bytearray(json.dumps(document).encode())
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(raw) - 1))
        raw[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    _assert_only_diagnostics(bytes(raw[:cut]) if data.draw(st.booleans()) else bytes(raw))


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet='{}ab.0 "', max_size=20), st.dictionaries(st.text("ab", min_size=1), VALUES)
)
def test_render_never_fails_with_keep(template: str, state: dict[str, Any]) -> None:
    result = render(template, state, missing="keep")
    if "{" not in template and "}" not in template:
        assert result == template


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_what_the_strict_models_accept_the_schema_accepts(document: Any) -> None:
    # The loader's fast path trusts the strict models; the published schema must agree.
    try:
        Playbook.model_validate(document, strict=True)
    except ValueError:
        return
    assert list(Draft202012Validator(BUILTIN_NODE_TYPES.schema).iter_errors(document)) == []


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["eq", "ne", "gt", "gte", "lt", "lte"]),
    st.dictionaries(st.text(max_size=6) | st.sampled_from(["true", "5", "null", "{v}"]),
                    st.sampled_from(["a", "b", None]), min_size=1, max_size=4),
    VALUES,
)  # fmt: skip
def test_choose_target_never_raises(operator: str, cases: dict[str, Any], value: Any) -> None:
    cond = ConditionalNext.model_validate({"field": "v", "operator": operator, "cases": cases})
    assert choose_target(cond, {"v": value}) in {"a", "b", None}


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_expression_reads_any_value_as_data(value: Any) -> None:
    expression = compile_expression("{v} == {v}")
    try:
        assert expression.evaluate({"v": value}) is True
    except ExpressionError:
        assert _has_huge_int(value)


def _has_huge_int(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return not -(2**63) <= value < 2**63
    if isinstance(value, dict):
        return any(_has_huge_int(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_huge_int(v) for v in value)
    return False
