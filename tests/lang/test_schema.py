"""The published schema is generated from the models and agrees with them."""

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from sea.lang.models import Playbook
from sea.lang.schema import SCHEMA_FILE, dumps, node_definitions
from sea.lang.vocabulary import BUILTIN_NODE_TYPES
from sea.resources import schemas_dir

ROOT = Path(__file__).resolve().parents[2]


def generate_schema() -> dict[str, Any]:
    return BUILTIN_NODE_TYPES.schema

DATA = Path(__file__).resolve().parent.parent / "data"


def test_published_schema_is_up_to_date() -> None:
    assert (schemas_dir() / SCHEMA_FILE).read_bytes() == dumps(generate_schema()), (
        "schemas/playbook.schema.json is stale: run `make schemas`"
    )


def test_check_script_reports_current_and_stale_files(tmp_path: Path) -> None:
    script = [sys.executable, str(ROOT / "dev" / "schemas.py"), "--check"]
    done = subprocess.run(script, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "playbook.schema.json is up to date" in done.stdout


def test_schema_is_valid_2020_12_with_one_definition_per_node_type() -> None:
    schema = generate_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    definitions = node_definitions(schema)
    assert set(definitions) == set(BUILTIN_NODE_TYPES.models)
    for node_type, name in definitions.items():
        node_schema = schema["$defs"][name]
        assert node_schema["additionalProperties"] is False
        assert node_schema["properties"]["type"]["const"] == node_type
        for field, spec in node_schema["properties"].items():
            assert spec.get("description"), f"{name}.{field} has no description"


@pytest.mark.parametrize(
    "path",
    sorted((DATA / "valid").glob("*.json")) + sorted((DATA / "library").glob("*.json")),
    ids=lambda p: p.name,
)
def test_schema_and_models_agree_on_valid_documents(path: Path) -> None:
    document = orjson.loads(path.read_bytes())
    assert list(Draft202012Validator(generate_schema()).iter_errors(document)) == []
    Playbook.model_validate(document)


@pytest.mark.parametrize(
    "node",
    [
        {"id": "a", "type": "llm", "tools": []},
        {"id": "a", "type": "set"},
        {"id": "a", "type": "pass", "error_next": "b"},
        {"id": "a b", "type": "pass"},
        {"id": "a", "type": "subplay", "playbook": "Bad-Name"},
        {"id": "a", "type": "exec", "execution": "banana"},
    ],
)
def test_schema_and_models_agree_on_invalid_nodes(node: dict[str, object]) -> None:
    document = {"name": "x", "description": "", "start_node": "a", "nodes": [node]}
    assert list(Draft202012Validator(generate_schema()).iter_errors(document)) != []
    with pytest.raises(ValueError):
        Playbook.model_validate(document)


def test_every_field_of_every_object_has_a_description_and_no_extras_are_allowed() -> None:
    schema = generate_schema()
    objects = {"playbook": schema, **schema["$defs"]}
    assert set(schema["$defs"]) >= {"InputParam", "ConditionalNext", "MemorizeOption"}
    for name, definition in objects.items():
        assert definition.get("description"), f"{name} has no description"
        assert definition["additionalProperties"] is False, name
        for field, spec in definition["properties"].items():
            assert spec.get("description"), f"{name}.{field} has no description"
