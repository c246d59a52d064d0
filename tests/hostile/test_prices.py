"""``--max-cost`` with a price table that prices none of the models in use: every call costs
0 by that table, so the bound could never be reached. ``sea run`` refuses it before any
model call (exit 2), naming the models and the table, unless ``--allow-unpriced`` says the
user means it; a table that leaves only some of the models unpriced is run with a warning
naming them."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from sea.llm.prices import Price, PriceTable
from tests.trace import conftest as trace
from tests.trace.conftest import Sea

sea = trace.sea  # the fixture of the command-line tests



def _prices(sea: Sea, data: object) -> str:
    path = sea.root / "prices.json"
    path.write_bytes(orjson.dumps(data))
    return str(path)


@pytest.mark.parametrize("table", [
    {"models": {"gpt-4o-mini": {"input_per_million": 0.15, "output_per_million": 0.6}}},
    # a default price is for remote models: the scripted and local models stay free
    {"models": {}, "default": {"input_per_million": 1, "output_per_million": 4}},
    {"models": {"scripted": {"input_per_million": 0, "output_per_million": 0}}},
])
def test_max_cost_that_no_model_in_use_can_reach_is_refused_before_any_call(
    sea: Sea, table: object
) -> None:
    path = _prices(sea, table)
    script = sea.script()
    done = sea("run", "--input", "go", "--model", script, "--max-cost", "0.01",
               "--prices", path)
    assert done.code == 2, (done.out, done.err)  # before: 0, the bound silently unreachable
    assert "SEA367" in done.err and "--max-cost 0.01" in done.err
    assert "prices none of the models in use" in done.err and "'scripted'" in done.err
    assert str(Path(path).resolve()) in done.err and "--allow-unpriced" in done.err
    assert "Traceback" not in done.err and done.out == ""
    assert not (sea.root / "home" / "memory.sqlite").exists()  # nothing ran, nothing stored


def test_allow_unpriced_runs_it_as_asked(sea: Sea) -> None:
    path = _prices(sea, {"models": {"gpt-4o-mini": {"input_per_million": 0.15}}})
    done = sea("run", "--input", "go", "--model", sea.script(), "--max-cost", "0",
               "--prices", path, "--allow-unpriced", "--json")
    assert done.code == 0, done.err
    assert orjson.loads(done.out)["status"] == "ok"  # a cost bound of 0, never reached


def test_a_priced_model_is_bounded_as_before(sea: Sea) -> None:
    path = _prices(sea, {"models": {"scripted": {"input_per_million": 1000}}})
    done = sea("run", "--input", "go", "--model", sea.script(), "--max-cost", "1",
               "--prices", path, "--json")
    assert done.code == 0, done.err
    assert "warning" not in done.err


def test_the_unpriced_models_of_a_table() -> None:
    table = PriceTable({"gpt-4o": Price(2.5, 10), "cheap": Price(0, 0)}, default=Price(0, 0))
    in_use = [("gpt-4o", "openai-chat"), ("cheap", "openai-chat"), ("other", "anthropic"),
              ("local", "sea-local-llama-cpp")]
    assert table.unpriced(in_use) == ["cheap", "other", "local"]
    with_default = PriceTable({}, default=Price(0, 1))
    assert with_default.unpriced(in_use) == ["local"]  # a host model is free unless named
    assert PriceTable({"local": Price(0.1, 0)}).unpriced([("local", "sea-local-llama-cpp")]) == []
