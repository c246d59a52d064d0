"""``sea run --response-cache FILE`` answers a deterministic call asked again from the cache,
``--history-tokens N`` bounds the history in tokens, and ``sea stats`` shows the hits and,
with ``--advise``, the nodes that stand out."""

from __future__ import annotations

import orjson
import pytest

from tests.trace.conftest import Sea
from tests.trace.test_cli_budgets import ANSWERS, books


def test_a_second_pulse_is_answered_from_the_cache_and_stats_show_it(sea: Sea) -> None:
    cache = str(sea.root / "responses.sqlite")
    common = ("--playbooks", str(books(sea)), "--json", "--response-cache", cache)
    first = sea("run", "think_twice", "--input", "go", "--model", sea.script(ANSWERS), *common)
    assert first.code == 0, first.err
    second = sea("run", "think_twice", "--input", "go", "--model", sea.script({}), *common)
    assert second.code == 0, second.err  # the empty script was never asked
    result = orjson.loads(second.out)
    assert result["spoken"] == ["Within budget."]
    assert [c["tokens_in"] for c in result["llm_calls"]] == [0, 0]
    stats = sea("stats", "--json", "--advise")
    totals = orjson.loads(stats.out)
    assert (totals["calls"], totals["cache_hits"], totals["cache_misses"]) == (4, 2, 2)
    assert totals["tokens_saved"] > 0 and totals["advice"] == []
    shown = sea("stats", "--advise")
    assert "response cache: 2 hits, 2 misses" in shown.out
    assert "advice: no node stands out" in shown.out


def test_history_tokens_is_a_whole_number(sea: Sea, capsys: pytest.CaptureFixture[str]) -> None:
    done = sea("run", "think_twice", "--input", "go", "--model", sea.script(ANSWERS),
               "--playbooks", str(books(sea)), "--json", "--history-tokens", "200")
    assert done.code == 0, done.err
    for wrong in ("lots", "0"):
        with pytest.raises(SystemExit) as exited:
            sea("run", "think_twice", "--input", "go", "--model", sea.script(ANSWERS),
                "--playbooks", str(books(sea)), "--history-tokens", wrong)
        assert exited.value.code == 2
        assert "--history-tokens: expected a whole number" in capsys.readouterr().err
