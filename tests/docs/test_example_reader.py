"""The reader of the documentation's examples finds each step and the output a page shows,
and a step that prints something else than its page shows fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.examples import Step, examples
from tests.docs.scenes import Outcome
from tests.docs.test_commands import _check_shown, _groups

PAGE = """# A page

Text, then a block:

    mkdir game
    sea run --workspace game \\
        --input "Hi; there"               # a comment that explains
    # waiting for approval: plan "Outline" (…) asks for approval of spec(s) 1
    #   sea resume 3f2a… --approve …
    sea worker --model openai:gpt-4o-mini &
    sea schedule list; sea schedule remove 9c1d…

```python
    sea run --input "in a fenced block: not an example"
```

    $ sea stats
    2 model calls

     node   calls
    ───────────────
     a.b        2
"""


@pytest.fixture
def steps(tmp_path: Path) -> list[Step]:
    (tmp_path / "page.md").write_text(PAGE, encoding="utf-8")
    found = examples(docs=tmp_path)
    assert [example.name for example in found] == ["page.md:5", "page.md:17"]
    return [step for example in found for step in example.steps]


def test_each_step_is_read_with_the_output_shown(steps: list[Step]) -> None:
    assert [step.command for step in steps] == [
        "mkdir game",
        'sea run --workspace game --input "Hi; there"',
        "sea worker --model openai:gpt-4o-mini",
        "sea schedule list",
        "sea schedule remove 9c1d…",
        "sea stats",
    ]
    assert steps[1].shown == ('waiting for approval: plan "Outline" (…) asks for approval of '
                              "spec(s) 1", "sea resume 3f2a… --approve …")
    assert steps[2].background and not steps[3].background
    assert steps[5].console
    assert steps[5].shown == ("2 model calls", "", " node   calls", "───────────────",
                              " a.b        2")


def test_a_step_that_prints_other_lines_than_shown_fails(steps: list[Step]) -> None:
    printed = ('waiting for approval: plan "Outline" (0123abcd) asks for approval of spec(s) 1\n'
               "  sea resume 0123456789abcdef0123456789abcdef --approve --model x\n")
    _check_shown(steps[1], Outcome(0, "", printed))
    with pytest.raises(AssertionError, match="printed no line"):
        _check_shown(steps[1], Outcome(0, "", printed.replace("spec(s) 1", "spec(s) 1, 2")))
    with pytest.raises(AssertionError, match="printed no line"):  # in the order shown
        _check_shown(steps[1], Outcome(0, "", "\n".join(reversed(printed.splitlines()))))


def test_a_console_transcript_is_compared_line_by_line(steps: list[Step]) -> None:
    stats = "2 model calls\n\n node   calls\n ─────\n a.b        2\n   \n"
    _check_shown(steps[5], Outcome(0, stats, ""))
    with pytest.raises(AssertionError):
        _check_shown(steps[5], Outcome(0, stats.replace("2\n   ", "3\n   "), ""))


def test_a_postgres_store_and_a_model_server_are_marked() -> None:
    from tests.docs.examples import Example

    example = Example("p.md", 1, (
        Step(1, "export SEA_DB=postgresql://sea@db.example/sea"),
        Step(2, "sea submit --persona ken"),
        Step(3, "mkdir x"),
        Step(4, "sea run --model openai:x --model-option base_url=http://127.0.0.1:8765/v1"),
        Step(5, "sea run --input Hi"),
    ))
    groups = _groups(example)
    assert [s.line for s in groups["postgres"]] == [1, 2, 3, 5]
    assert [s.line for s in groups["needs a model server at the URL it names"]] == [4]
    assert None not in groups
