"""``sea memory pin|unpin|pins`` and ``sea stats`` on a real SQLite file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from saimemory.calls import CallRecord
from saimemory.sqlite import SQLiteStore
from sea.cli import main
from sea.cli.stats import since_time
from sea.errors import UsageError


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "memory.db")


def test_pin_list_and_unpin(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "pin", "Ken loves hiking.", "--db", db, "--persona", "aoi"]) == 0
    assert main(["memory", "pin", "Answer briefly.", "--db", db, "--persona", "aoi"]) == 0
    capsys.readouterr()
    assert main(["memory", "pins", "--db", db, "--persona", "aoi", "--json"]) == 0
    pins = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(p["id"], p["text"]) for p in pins] == [(1, "Ken loves hiking."),
                                                    (2, "Answer briefly.")]
    assert main(["memory", "unpin", "1", "--db", db, "--persona", "aoi"]) == 0
    assert capsys.readouterr().out == "#2 Answer briefly.\n"
    assert main(["memory", "unpin", "1", "--db", db, "--persona", "aoi"]) == 1
    assert "has no pinned item #1" in capsys.readouterr().err


def test_a_sixth_pin_is_refused_with_the_store_code(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for index in range(5):
        assert main(["memory", "pin", f"fact {index}", "--db", db, "--persona", "aoi"]) == 0
    capsys.readouterr()
    assert main(["memory", "pin", "one more", "--db", db, "--persona", "aoi"]) == 1
    assert "MEM011" in capsys.readouterr().err


def test_stats_filters_by_persona_and_time(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = SQLiteStore(Path(db))
    store.record_calls([
        CallRecord("aoi", "model", "m", "ok", playbook="pb", node="n", pattern="base_main",
                   tokens_in=10, tokens_out=2, cost=0.5),
        CallRecord("aoi", "model", "m", "error", playbook="pb", node="n", pattern="base_main",
                   tokens_in=5, error="down"),
        CallRecord("ken", "model", "m", "ok", playbook="pb", node="n", tokens_in=7),
    ])
    store.close()
    assert main(["stats", "--db", db, "--persona", "aoi", "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert (data["calls"], data["failures"], data["tokens_in"], data["cost"]) == (2, 1, 15, 0.5)
    assert data["by_node"][0]["failure_rate"] == 0.5
    assert main(["stats", "--db", db, "--json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["calls"] == 3
    assert main(["stats", "--db", db, "--since", "2999-01-01T00:00:00+00:00"]) == 0
    assert "no calls recorded" in capsys.readouterr().out
    assert main(["stats", "--db", db, "--since", "yesterday"]) == 2


def test_since_takes_a_time_ago_or_an_iso_time() -> None:
    now = datetime(2025, 5, 1, 12, tzinfo=UTC)
    assert since_time("24h", now) == now - timedelta(hours=24)
    assert since_time("7d", now) == now - timedelta(days=7)
    assert since_time("2025-04-30T00:00:00+09:00", now) == datetime(2025, 4, 29, 15, tzinfo=UTC)
    assert since_time(None, now) is None
    with pytest.raises(UsageError, match="UTC offset"):
        since_time("2025-04-30T00:00:00", now)
    with pytest.raises(UsageError, match="neither a time ago"):  # not an OverflowError
        since_time("99999999999999d", now)


def test_unpin_of_a_number_not_pinned_names_the_pinned_ones(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", "unpin", "3", "--db", db, "--persona", "aoi"]) == 1
    assert "'aoi' has no pinned item #3; it has none" in capsys.readouterr().err
    assert main(["memory", "pin", "Ken loves hiking.", "--db", db, "--persona", "aoi"]) == 0
    capsys.readouterr()
    assert main(["memory", "unpin", "3", "--db", db, "--persona", "aoi"]) == 1
    err = capsys.readouterr().err
    assert "no pinned item #3; its pinned items are #1 (`sea memory pins` shows them)" in err
