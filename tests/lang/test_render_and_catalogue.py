"""Mermaid details and the tool catalogue formats."""

import pytest

from sea.errors import UsageError
from sea.lang.checks import ToolCatalogue
from sea.lang.models import Playbook
from sea.lang.render import to_mermaid


def test_labels_escape_quotes_and_end_edges_are_drawn() -> None:
    playbook = Playbook.model_validate(
        {
            "name": "q",
            "description": 'say "hi"',
            "start_node": "a",
            "nodes": [
                {
                    "id": "a",
                    "type": "pass",
                    "conditional_next": {"field": "x", "cases": {'"quoted"': None, "b": "b"}},
                },
                {"id": "b", "type": "tool", "action": "t", "error_next": "a"},
            ],
        }
    )
    text = to_mermaid(playbook)
    assert '-->|"#quot;quoted#quot;"| pb_end' in text
    assert '-->|"default"| pb_end' in text
    assert "n1 -. error .-> n0" in text
    assert 'n1[/"b<br/>tool: t"/]' in text


@pytest.mark.parametrize(
    "data",
    [
        {"tools": [{"name": "t", "parameters": {"type": "object"}}, {"name": "u"}]},
        [{"name": "t", "args_schema": {"type": "object"}}, {"name": "u"}],
        {"t": {"type": "object"}, "u": None},
    ],
)
def test_catalogue_formats(data: object) -> None:
    catalogue = ToolCatalogue.from_json(data)
    assert dict(catalogue.tools) == {"t": {"type": "object"}, "u": None}


@pytest.mark.parametrize("data", [[{"nom": "t"}], 3, "tools"])
def test_bad_catalogues_are_usage_errors(data: object) -> None:
    with pytest.raises(UsageError):
        ToolCatalogue.from_json(data)


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"t": 5}, "not integer"),
        ({"tools": [{"name": "t", "parameters": "string"}]}, "not string"),
        (
            {"t": {"properties": {"q": {"type": "int"}}}},
            '/properties/q/type: unknown type "int", write "integer"',
        ),
        ([{"name": "t", "input_schema": {"type": "object", "required": "q"}}], "at /required"),
    ],
)
def test_argument_schemas_that_are_not_json_schemas_are_usage_errors(
    data: object, where: str
) -> None:
    with pytest.raises(UsageError, match="argument schema of `t`") as caught:
        ToolCatalogue.from_json(data)
    assert where in str(caught.value)
