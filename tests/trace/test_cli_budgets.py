"""``sea run`` / ``sea resume`` budgets and prices: ``--max-calls``, ``--max-tokens-in``,
``--max-tokens-out``, ``--max-cost`` bound a pulse's model calls (SEA566), what a pulse spent
counts on after an approval wait, and ``--prices FILE`` prices each call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.trace.conftest import Sea

TWICE = {
    "name": "think_twice",
    "description": "Thinks, looks at memory (a person approves), thinks again.",
    "start_node": "think",
    "nodes": [
        {"id": "think", "type": "llm", "context_profile": "worker", "action": "Think.",
         "output_key": "thought", "next": "look", "error_next": "over"},
        {"id": "look", "type": "tool", "action": "memory_recent", "args": {"limit": 1},
         "next": "again"},
        {"id": "again", "type": "llm", "context_profile": "worker", "action": "Again.",
         "output_key": "second", "next": "done", "error_next": "over"},
        {"id": "done", "type": "speak", "action": "Within budget."},
        {"id": "over", "type": "speak", "action": "{error.code}: {error.message}"},
    ],
}
ANSWERS = {"default": ["a thought", "another thought"]}


def books(sea: Sea) -> Path:
    directory = sea.root / "books"
    directory.mkdir(exist_ok=True)
    (directory / "think_twice.json").write_bytes(orjson.dumps(TWICE))
    return directory


def run(sea: Sea, *options: str) -> dict[str, Any]:
    done = sea("run", "think_twice", "--input", "go", "--model", sea.script(ANSWERS),
               "--playbooks", str(books(sea)), "--json", *options)
    assert done.code == 0, done.err
    result: dict[str, Any] = orjson.loads(done.out)
    result["stderr"] = done.err
    return result


def prices(sea: Sea, data: object) -> str:
    path = sea.root / "prices.json"
    path.write_bytes(orjson.dumps(data))
    return str(path)


def test_a_call_budget_stops_the_pulse_naming_the_budget(sea: Sea) -> None:
    result = run(sea, "--max-calls", "1")
    (spoken,) = result["spoken"]
    assert spoken.startswith("SEA566: budget max_calls exceeded: the pulse has made 1 model")
    assert run(sea, "--max-calls", "2")["spoken"] == ["Within budget."]
    tokens = run(sea, "--max-tokens-out", "1")["spoken"][0]
    assert tokens.startswith("SEA566: budget max_tokens_out exceeded")


def test_the_budget_counts_on_across_an_approval_wait_and_a_resume(sea: Sea) -> None:
    waiting = run(sea, "--max-calls", "1", "--ask-before", "memory_recent")
    assert waiting["status"] == "waiting"
    assert "--max-calls 1" in waiting["stderr"]  # the printed resume command keeps the bound
    done = sea("resume", waiting["pulse_id"], "--approve", "--model", sea.script(ANSWERS),
               "--playbooks", str(books(sea)), "--max-calls", "1", "--json")
    assert done.code == 0, done.err
    (spoken,) = orjson.loads(done.out)["spoken"]
    assert spoken.startswith("SEA566: budget max_calls exceeded: the pulse has made 1 model")


def test_prices_give_each_call_its_cost_and_bound_it(sea: Sea) -> None:
    table = prices(sea, {"models": {"scripted": {"input_per_million": 1000,
                                                 "output_per_million": 4000}}})
    result = run(sea, "--prices", table)
    assert result["spoken"] == ["Within budget."]
    stats = sea("stats", "--json")
    totals = orjson.loads(stats.out)
    assert totals["calls"] == 2
    assert totals["cost"] == pytest.approx(
        (totals["tokens_in"] * 1000 + totals["tokens_out"] * 4000) / 1e6)
    first_call = (result["llm_calls"][0]["tokens_in"] * 1000
                  + result["llm_calls"][0]["tokens_out"] * 4000) / 1e6
    bounded = run(sea, "--prices", table, "--max-cost", f"{first_call * 1.5}")
    (spoken,) = bounded["spoken"]
    assert spoken.startswith("SEA566: budget max_cost exceeded")
    unpriced = sea("run", "--input", "go", "--model", sea.script(), "--max-cost", "0.01")
    assert unpriced.code == 2
    assert "--max-cost 0.01 needs --prices FILE" in unpriced.err


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ({"models": {"gpt-4o-mini": {"input_per_million": -1}}},
         "models.gpt-4o-mini.input_per_million: input should be greater than or equal to 0"),
        ({"models": {"gpt-4o-mini": {"input": 0.15}}}, "models.gpt-4o-mini.input: unknown field"),
        ([0.15, 0.6], "a price file is a JSON object, not a JSON array"),
    ],
)
def test_a_bad_price_file_is_refused_before_anything_runs(
    sea: Sea, content: object, named: str
) -> None:
    table = prices(sea, content)
    with pytest.raises(SystemExit) as info:
        sea("run", "--input", "go", "--model", sea.script(), "--prices", table)
    assert info.value.code == 2
    err = sea.capsys.readouterr().err
    assert f"argument --prices: {Path(table).resolve()}" in err and named in err
    assert not (sea.root / "home" / "memory.sqlite").exists()


def test_budget_options_take_numbers_at_least_zero(sea: Sea) -> None:
    for option, value in (("--max-calls", "-1"), ("--max-tokens-in", "many"),
                          ("--max-cost", "nan")):
        with pytest.raises(SystemExit) as info:
            sea("run", "--input", "go", option, value)
        assert info.value.code == 2
        assert f"argument {option}: expected" in sea.capsys.readouterr().err


def test_safety_rules_from_a_file_reach_every_calls_base(sea: Sea) -> None:
    rules = sea.root / "rules.txt"
    rules.write_text("Never share the user's address.\n")
    result = run(sea, "--safety-rules", str(rules))
    calls = result["llm_calls"]
    assert len(calls) == 2
    for call in calls:
        system = call["messages"][0]
        assert system["role"] == "system"
        assert "Never share the user's address." in system["content"]
    plain = run(sea)["llm_calls"][0]["messages"][0]["content"]
    assert "Never share" not in plain


@pytest.mark.parametrize(("content", "expected"), [
    (None, "cannot read"),
    ("  \n", "is empty"),
    ("x" * 20_001, "more than 20,000 characters"),
])
def test_a_safety_rules_file_that_cannot_serve_is_a_usage_error(
    sea: Sea, content: str | None, expected: str
) -> None:
    rules = sea.root / "rules.txt"
    if content is not None:
        rules.write_text(content)
    with pytest.raises(SystemExit) as info:  # argparse: the option's value is refused
        sea("run", "--input", "go", "--safety-rules", str(rules))
    assert info.value.code == 2
    assert expected in sea.capsys.readouterr().err
