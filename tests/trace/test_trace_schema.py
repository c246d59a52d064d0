"""The published trace schema matches the trace models and describes real traces."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from jsonschema import Draft202012Validator

from sea.cli import main
from sea.lang.schema import dumps
from sea.resources import schemas_dir
from sea.trace.format import TRACE_SCHEMA_FILE, trace_schema

SCRIPT = {
    "responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "a greeting"}],
        "sub_speak.compose": ["Hello, I'm Aoi."],
    }
}


def test_published_trace_schema_is_generated_from_the_models() -> None:
    path = schemas_dir() / TRACE_SCHEMA_FILE
    assert path.read_bytes() == dumps(trace_schema()), (
        "schemas/trace.schema.json is stale: run `make schemas`"
    )


def test_a_recorded_trace_is_valid_against_the_published_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SEA_DB", raising=False)
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps(SCRIPT))
    trace_file = tmp_path / "pulse.json"
    code = main(["run", "--input", "Hello", "--model", f"scripted:{script}",
                 "--record", str(trace_file), "--json"])
    assert code == 0
    trace = orjson.loads(trace_file.read_bytes())
    schema = orjson.loads((schemas_dir() / TRACE_SCHEMA_FILE).read_bytes())
    errors = list(Draft202012Validator(schema).iter_errors(trace))
    assert errors == []
    assert [n["node"] for n in trace["nodes"] if n["depth"] == 0] == ["route", "check", "speak"]
    assert trace["spoken"] == ["Hello, I'm Aoi."]
