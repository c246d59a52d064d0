"""Hostile schedules: an interval that is too short, too long, infinite or overflowing is
refused when the schedule is added (``sea schedule add`` exits 2 and says which bound, and
how to change it), and a schedule left broken in the database (by an older version or a
hand edit) is stopped and reported by the workers while the other schedules go on firing.

The refusals need no database (they come before the queue is opened; ``--db`` names a
SQLite file and then the PostgreSQL queue); the workers need PostgreSQL
(``SEA_TEST_POSTGRES_DSN``)."""

from __future__ import annotations

import json
import math
import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sea.cli import main
from sea.errors import UsageError
from sea.queue.records import IntervalBounds, due_run, parse_every
from tests.workers import conftest as workers
from tests.workers.conftest import Spawn, needs_postgres

BAD_INTERVALS = {
    "0.001": "at least 1s",  # a millisecond
    "0.0000001s": "at least 1s",
    "0": "longer than 0",
    "-5m": "expected a number and a unit",
    "nan": "expected a number and a unit",
    "inf": "expected a number and a unit",
    "9" * 400: "a finite number",  # float() of it is infinite
    "99999999999d": "at most 366d",  # past what a date can hold
    "367d": "at most 366d",
}
queue_dsn = workers.queue_dsn  # the fixtures of the queue tests
spawn = workers.spawn
BACKENDS = ["sqlite", pytest.param("postgres", marks=needs_postgres)]


def _db(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        return str(tmp_path / "memory.sqlite")
    dsn: str = request.getfixturevalue("queue_dsn")
    return dsn


def _sea(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    code = main(list(words))
    out, err = capsys.readouterr()
    return code, out, err


def _schedules(db: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """The schedules ``sea schedule list`` shows; none where no queue was ever made (the
    list creates nothing: SEA392)."""
    code, out, err = _sea(capsys, "schedule", "list", "--db", db, "--json")
    if code == 2 and "SEA392" in err:
        return []
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("every", list(BAD_INTERVALS))
def test_sea_schedule_add_refuses_a_bad_interval(
    every: str, backend: str, tmp_path: Path, request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = _db(backend, tmp_path, request)
    code, out, err = _sea(capsys, "schedule", "add", "meta_auto",
                          f"--every={every}", "--db", db)
    assert code == 2, (out, err)
    assert "SEA363" in err and "--every" in err and BAD_INTERVALS[every] in err, err
    assert "Traceback" not in err and out == ""
    if backend == "postgres":
        assert _schedules(db, capsys) == []  # nothing was added
    else:
        assert not Path(db).exists()  # nothing was opened


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_bounds_name_the_options_that_change_them(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = _db(backend, tmp_path, request)
    code, _, err = _sea(capsys, "schedule", "add", "meta_auto",
                        "--every", "0.5s", "--db", db)
    assert code == 2 and "--min-every" in err, err
    code, _, err = _sea(capsys, "schedule", "add", "meta_auto",
                        "--every", "400d", "--db", db)
    assert code == 2 and "--max-every" in err, err
    # a bound itself out of range is refused, naming it
    for option, value, words in [("--min-every", "0", "longer than 0"),
                                 ("--max-every", "99999999d", "at most 36600d"),
                                 ("--min-every", "400d", "is longer than the longest")]:
        code, out, err = _sea(capsys, "schedule", "add", "meta_auto",
                              "--every", "3h", option, value, "--db", db)
        assert code == 2 and option in err and words in err, (option, err)
        assert "Traceback" not in err and out == ""


@needs_postgres[0]
@needs_postgres[1]
def test_raised_bounds_let_an_interval_through(queue_dsn: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _sea(capsys, "schedule", "add", "meta_auto", "--every",
                          "0.5s", "--min-every", "0.1s", "--db", queue_dsn)
    assert code == 0, err
    code, out, err = _sea(capsys, "schedule", "add", "meta_auto", "--every",
                          "400d", "--max-every", "1000d", "--db", queue_dsn)
    assert code == 0, err
    assert sorted(s["every_s"] for s in _schedules(queue_dsn, capsys)) == [0.5, 400 * 86400]


# -- unit: the bounds and a due run --------------------------------------------------------


@pytest.mark.parametrize("text", ["1s", "1", "366d", "10m"])
def test_intervals_within_the_bounds(text: str) -> None:
    assert 1 <= parse_every(text) <= 366 * 86400


@pytest.mark.parametrize("text", [t for t in BAD_INTERVALS if t not in ("0", "-5m")])
def test_parse_every_refuses_what_the_cli_refuses(text: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_every(text)
    assert info.value.code == "SEA363" and BAD_INTERVALS[text] in info.value.message


@pytest.mark.parametrize(("min_s", "max_s"), [(0, 10), (-1, 10), (math.nan, 10), (5, 1),
                                               (1, math.inf), (1, 1e300)])
def test_bounds_out_of_range_are_refused(min_s: float, max_s: float) -> None:
    with pytest.raises(UsageError) as info:
        IntervalBounds(min_s, max_s)
    assert info.value.code == "SEA363"


NOW = datetime(2026, 1, 1, tzinfo=UTC)
AOI = {"id": "aoi", "name": "Aoi", "system_prompt": ""}


@pytest.mark.parametrize(("persona", "every_s", "due", "words"), [
    (AOI, math.nan, NOW, "interval"),
    (AOI, math.inf, NOW, "interval"),
    (AOI, 0.0, NOW, "interval"),
    (AOI, -60.0, NOW, "interval"),
    (AOI, 1e300, NOW, "interval"),
    (AOI, 3e11, NOW, "interval"),  # about 9,500 years: past the last date
    (AOI, 60.0, None, "next run time"),
    ("aoi", 60.0, NOW, "persona"),
    ({"name": "no id"}, 60.0, NOW, "persona"),
    ({"id": ""}, 60.0, NOW, "persona"),
])
def test_a_broken_schedule_row_is_named_not_raised_as_a_crash(
    persona: Any, every_s: float, due: datetime | None, words: str
) -> None:
    with pytest.raises(UsageError) as info:
        due_run("s1", persona, every_s, due, NOW)
    assert info.value.code == "SEA366"
    assert "schedule s1" in info.value.message and words in info.value.message
    assert "sea schedule remove s1" in info.value.message


def test_a_due_run_one_interval_on() -> None:
    persona, following = due_run("s1", AOI, 60.0, NOW, NOW)
    assert persona.id == "aoi" and (following - NOW).total_seconds() == 60
    # a tiny interval (added with a lowered --min-every) still moves on from now
    _, following = due_run("s1", AOI, 0.001, NOW, NOW)
    assert following > NOW


@needs_postgres[0]
@needs_postgres[1]
def test_the_queue_refuses_a_bad_interval_and_lists_a_broken_row(queue_dsn: str) -> None:
    import asyncio

    from saimemory import Persona
    from sea.queue import PulseQueue

    aoi = Persona("aoi", "Aoi", "")

    async def work() -> list[Any]:
        async with PulseQueue(queue_dsn) as queue:
            for every_s in (math.nan, math.inf, -1.0, 0.0, True, 0.001, 1e300, 400 * 86400.0):
                with pytest.raises(UsageError) as info:
                    await queue.add_schedule(aoi, "meta_auto", every_s)  # type: ignore[arg-type]
                assert info.value.code == "SEA363", every_s
            quick = await queue.add_schedule(aoi, "meta_auto", 0.5,
                                             bounds=IntervalBounds(min_s=0.1))
            _execute(queue_dsn, "INSERT INTO sea_schedules (id, persona, persona_json, "
                     "playbook, every_s, next_at) VALUES ('odd', 'x', '[1]', 'meta_auto', "
                     "'NaN', '-infinity')")
            return [quick, *await queue.schedules()]

    quick, *listed = asyncio.run(work())
    assert quick.every_s == 0.5
    odd = next(s for s in listed if s.id == "odd")
    assert odd.next_at is None and odd.persona.id == "x" and math.isnan(odd.every_s)
    assert sorted(s.id for s in listed) == sorted(["odd", quick.id])


# -- end to end: a worker with broken schedules in its database -------------------------------

BROKEN_ROWS = {
    "nan": ("'NaN'", "'{\"id\": \"b1\"}'", "now()"),
    "infinite": ("'Infinity'", "'{\"id\": \"b2\"}'", "now()"),
    "overflow": ("1e300", "'{\"id\": \"b3\"}'", "now()"),
    "not_a_persona": ("60", "'\"b4\"'", "now()"),
    "minus_infinity": ("60", "'{\"id\": \"b5\"}'", "'-infinity'"),
}


def _execute(dsn: str, sql: str) -> list[tuple[Any, ...]]:
    import psycopg

    from saimemory.postgres import split_schema

    server, schema = split_schema(dsn)
    with psycopg.connect(server, autocommit=True, options=f"-c search_path={schema}") as conn:
        cursor = conn.execute(sql)
        return list(cursor.fetchall()) if cursor.description else []


def _wait(check: Callable[[], bool], seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, f"still not {what} after {seconds:g}s"
        time.sleep(0.1)


@needs_postgres[0]
@needs_postgres[1]
def test_a_broken_schedule_does_not_stop_the_others(
    queue_dsn: str, tmp_path: Path, spawn: Spawn, capsys: pytest.CaptureFixture[str]
) -> None:
    reflection = {"thought": "Quiet day.", "remember": False, "note": ""}
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": {"meta_auto.reflect": [reflection] * 40}}))
    good = []
    for persona in ("aoi", "ken"):
        code, out, err = _sea(capsys, "schedule", "add", "meta_auto", "--every",
                              "1h", "--persona", persona, "--db", queue_dsn)
        assert code == 0, err
        good.append(out.strip())
    for sid, (every_s, persona, next_at) in BROKEN_ROWS.items():  # as a hand edit leaves them
        _execute(queue_dsn, "INSERT INTO sea_schedules (id, persona, persona_json, playbook, "
                 f"every_s, next_at) VALUES ('{sid}', '{sid}', {persona}, 'meta_auto', "
                 f"{every_s}, {next_at})")
    worker = spawn("worker", "--db", queue_dsn, "--model", f"scripted:{script}",
                   "--tick", "0.2")

    def fired() -> bool:
        rows = _execute(queue_dsn, "SELECT count(*) FROM sea_pulses WHERE status = 'done' "
                        f"AND schedule_id IN ('{good[0]}', '{good[1]}')")
        return bool(rows[0][0] == 2)

    try:
        _wait(fired, 30, "fired the good schedules (the broken ones stopped the tick)")
        _wait(lambda: len(_execute(queue_dsn, "SELECT id FROM sea_schedules "
                                   "WHERE error IS NOT NULL")) == len(BROKEN_ROWS),
              10, "recorded why each broken schedule cannot run")
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
    log = worker.log.read_text()  # type: ignore[attr-defined]
    for sid in BROKEN_ROWS:  # each reported once, by name, then left alone
        assert log.count(f"schedule {sid} cannot run") == 1, log
    assert "_tick:" not in log, log  # the worker's report of a failed look at the schedules
    listed = {s["id"]: s for s in _schedules(queue_dsn, capsys)}
    assert {listed[sid]["runs"] for sid in good} == {1}
    assert listed[good[0]]["error"] is None
    for sid in ("nan", "infinite", "overflow"):
        assert "SEA366" in listed[sid]["error"] and "interval" in listed[sid]["error"]
    assert "persona" in listed["not_a_persona"]["error"]
    assert "next run time" in listed["minus_infinity"]["error"]
    assert listed["minus_infinity"]["next_at"] is None
    code, out, err = _sea(capsys, "schedule", "list", "--db", queue_dsn)
    assert code == 0 and "cannot run" in out, err
    assert all(_execute(queue_dsn, f"SELECT runs FROM sea_schedules WHERE id = '{sid}'")
               == [(0,)] for sid in BROKEN_ROWS)
