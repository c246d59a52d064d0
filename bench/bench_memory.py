"""Benchmark of SAIMemory: history, append and search (both match modes) at 10k, 100k (and 1M).

One store per backend grows through the sizes: the fill uses a bulk path (one multi-row
insert per chunk, tags generated in SQL), the measured operations go through the public
API. Figures are medians and 90th percentiles in milliseconds (of 30 runs at least, so a
p90 is not merely the slowest run); the ratio column compares each size's median with the
smallest's, so "indexes, not scans" shows as ratios near 1. The ``any_*`` rows are
natural-language queries in the ``any`` match mode: a rare word among common ones, only
common words, and short words only (a hit, and a miss). PostgreSQL's ``floor_*`` rows are
the machine's least costs in the same run: a round trip, and an append to a table of one
text column without indexes, committed as the store commits.

    python bench/bench_memory.py                        # SQLite, 10k and 100k
    python bench/bench_memory.py --big                  # adds 1M
    python bench/bench_memory.py --dsn postgresql://... # PostgreSQL too
    python bench/bench_memory.py --big --personas 100   # 1M messages over 100 personas

A filled store can be kept and measured again (filling 1M messages takes minutes):
``--sqlite-path FILE`` and ``--pg-schema NAME`` use that file or schema, keep it, and add
only the messages it lacks; ``--sizes`` measures only the sizes named::

    python bench/bench_memory.py --personas 100 --sizes 1000000 --sqlite-path /tmp/b.db
    python bench/bench_memory.py --personas 100 --sizes 1000000 --no-sqlite \
        --dsn postgresql://... --pg-schema bench_keep
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from figures import median_p90  # run as a script from bench/, as the README shows

from saimemory import CONVERSATION_TAG, NewMessage
from saimemory.postgres import PostgresStore
from saimemory.sqlbase import SqlStore, main_thread_id
from saimemory.sqlite import SQLiteStore

PERSONA = "bench"
OTHER = "other"
PULSE_SIZE = 10
CHUNK = 20_000
TOPICS = ["東京タワー", "京都の抹茶", "猫の昼寝", "雨の日の読書", "夜景", "新しいレシピ"]
ENGLISH = ["the weather", "a long walk", "quantum physics", "the garden", "old movies"]

Row = tuple[Any, ...]


SEARCHES = 30
"""Runs of each search measured: enough for a p90 (:data:`figures.P90_SAMPLES`), few
enough that the slowest searches of a million messages take seconds, not minutes."""

PERSONAS = 2
"""How many personas share the messages (``--personas``): with the default, the measured
persona has nine pulses in ten and one other persona the tenth; with N, each of N personas
(the measured one among them) has one pulse in N."""


def persona_of(pulse: int) -> str:
    """Whose pulse ``pulse`` is."""
    if PERSONAS <= 2:
        return OTHER if pulse % 10 == 9 else PERSONA
    n = pulse % PERSONAS
    return PERSONA if n == 0 else f"{OTHER}{n}"


def message_rows(start: int, stop: int, t0_us: int) -> Iterator[Row]:
    """Synthetic messages: pulses of ten, the first and last of each pulse conversation."""
    for i in range(start, stop):
        pulse, k = divmod(i, PULSE_SIZE)
        persona = persona_of(pulse)
        node = "input" if k == 0 else "speak" if k == PULSE_SIZE - 1 else f"step{k}"
        role = "assistant" if node == "speak" or k % 2 else "user"
        content = (
            f"メッセージ{i}: 今日は{TOPICS[i % len(TOPICS)]}について話した。"
            f" Message {i} is about {ENGLISH[i % len(ENGLISH)]}."
        )
        if node.startswith("step"):
            content = f"<system>\n{content}\n</system>"
        yield (
            persona,
            main_thread_id(persona),
            role,
            content,
            t0_us + i * 1000,
            f"pulse-{pulse}",
            "",
            "{}",
            "bench_playbook",
            node,
            f"{i:032x}",
        )


TAGGED = ("input", "speak")
"""The nodes whose messages have the conversation tag: each pulse's first and last."""


def tag_statements(first_id: int) -> list[str]:
    """INSERT … SELECT statements that tag every message with id >= first_id: the
    conversation tag of each pulse's first and last message (the store derives the others,
    ``pulse:``, ``playbook:`` and ``node:``, from the columns)."""
    cols = "message_id, pos, tag, persona, thread"
    return [
        f"INSERT INTO message_tags ({cols}) SELECT id, 0, '{CONVERSATION_TAG}', persona, thread "
        f"FROM messages WHERE id >= {first_id} AND node IN {TAGGED}",
    ]


INSERT = (
    "INSERT INTO messages (persona, thread, role, content, created_us, pulse_id, scope, "
    "metadata, playbook, node, uid) VALUES "
)


def fill_sqlite(store: SQLiteStore, start: int, stop: int, t0_us: int) -> None:
    conn = store._conn
    for lo in range(start, stop, CHUNK):
        conn.execute("BEGIN IMMEDIATE")
        first = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM messages").fetchone()[0]
        conn.executemany(
            INSERT + "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            message_rows(lo, min(stop, lo + CHUNK), t0_us),
        )
        for statement in tag_statements(first):
            conn.execute(statement)
        conn.execute(  # SQLite keeps each message's tags in its row too (migration 10)
            "UPDATE messages SET tags = (SELECT json_group_array(tag) FROM (SELECT t.tag FROM "
            "message_tags t WHERE t.message_id = messages.id ORDER BY t.pos)) WHERE id >= ? "
            f"AND node IN {TAGGED}",
            (first,))
        conn.execute("COMMIT")


def fill_postgres(store: PostgresStore, start: int, stop: int, t0_us: int) -> None:
    conn = store._conn
    for lo in range(start, stop, CHUNK):
        with conn.transaction():
            first = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM messages").fetchone()[0]
            with conn.cursor().copy(
                "COPY messages (persona, thread, role, content, created_us, pulse_id, scope, "
                "metadata, playbook, node, uid, tags) FROM STDIN"
            ) as copy:
                for row in message_rows(lo, min(stop, lo + CHUNK), t0_us):
                    # PostgreSQL keeps each message's own tags in its row too (migration 14)
                    copy.write_row((*row, [CONVERSATION_TAG] if row[9] in TAGGED else None))
            for statement in tag_statements(first):
                conn.execute(statement)
    conn.execute("ANALYZE messages")
    conn.execute("ANALYZE message_tags")


def median_ms(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median and 90th percentile milliseconds of ``action`` (after one warm-up)."""
    action()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return median_p90(samples)


def measure(store: SqlStore, size: int) -> dict[str, tuple[float, float]]:
    """Medians of the operations the engine performs, at the current size, in a new pulse
    of their own: the appends measured go into it, so a pulse measured before (in a kept
    store, or before ``--optimize``) would give history more to read."""
    pulse = f"live-{size}-{uuid.uuid4().hex[:12]}"
    for text in ("今日はどうだった？", "<system>\nsub-playbook result\n</system>"):
        store.append(
            NewMessage(
                PERSONA,
                "user",
                text,
                pulse_id=pulse,
                tags=(CONVERSATION_TAG,) if "？" in text else (),
            )
        )
    counter = iter(range(10**9))
    rare = next(i for i in range(size // 2, size) if persona_of(i // PULSE_SIZE) == PERSONA)

    def any_search(query: str) -> None:
        store.search(PERSONA, query, limit=10, match="any")

    def append() -> None:
        store.append(
            NewMessage(
                PERSONA,
                "assistant",
                f"step {next(counter)}",
                pulse_id=pulse,
                playbook="bench",
                node="n",
            )
        )

    return {
        "history": median_ms(lambda: store.history(PERSONA, pulse_id=pulse), 50),
        "append": median_ms(append, 100),
        "recent": median_ms(lambda: store.recent(PERSONA, limit=20), 50),
        "search_rare": median_ms(lambda: store.search(PERSONA, f"メッセージ{rare}:"), SEARCHES),
        "search_common": median_ms(lambda: store.search(PERSONA, "東京タワー", limit=10), SEARCHES),
        "short_hit": median_ms(lambda: store.search(PERSONA, "猫", limit=10), SEARCHES),
        "short_miss": median_ms(lambda: store.search(PERSONA, "彗星", limit=10), SEARCHES),
        "any_rare": median_ms(lambda: any_search(f"What is message {rare} about?"), SEARCHES),
        "any_common": median_ms(lambda: any_search("What about the weather?"), SEARCHES),
        "any_short": median_ms(lambda: any_search("猫 夜景"), SEARCHES),
        "any_short_miss": median_ms(lambda: any_search("彗星 虹"), SEARCHES),
    }


def postgres_floors(store: PostgresStore) -> dict[str, tuple[float, float]]:
    """What the server and the machine cost at the least, in the same run, so the store's
    figures can be read against this machine: a round trip (``SELECT 1``) and the append of
    a row to a table with no index, trigger or function, committed as the store commits
    (its DSN's ``synchronous_commit``), on a connection made as the store's."""
    conn = store._connect()
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_floor (id bigint GENERATED ALWAYS AS "
                     "IDENTITY PRIMARY KEY, content text)")
        counter = iter(range(10**9))

        def insert() -> None:
            conn.execute("INSERT INTO bench_floor (content) VALUES (%s) RETURNING id",
                         [f"step {next(counter)}"]).fetchall()

        return {"floor_trip": median_ms(lambda: conn.execute("SELECT 1").fetchall(), 100),
                "floor_insert": median_ms(insert, 100)}
    finally:
        conn.execute("DROP TABLE IF EXISTS bench_floor")
        conn.close()


def filled_count(store: SqlStore) -> int:
    """How many synthetic messages a kept store already holds (the fill's own playbook)."""
    with store._read() as tx:
        return int(tx.fetch(
            "SELECT count(*) FROM messages WHERE playbook = 'bench_playbook'")[0][0])


def report(figures: dict[str, tuple[float, float]], base: dict[str, tuple[float, float]],
           first: int) -> None:
    """One size's figures: median, p90, and the median's ratio to the first size's."""
    for key, (median, p90) in figures.items():
        print(f"    {key:14} {median:9.3f} ms {p90:9.3f} ms   x{median / base[key][0]:6.2f} "
              f"vs {first:,}", flush=True)


def run(
    name: str, store: SqlStore, fill: Callable[[int, int, int], None], sizes: list[int],
    optimize: bool = False,
) -> None:
    for persona in sorted({persona_of(pulse) for pulse in range(max(PERSONAS, 10))}):
        store.main_thread(persona)
    t0_us = 1_700_000_000 * 10**6
    filled = filled_count(store)
    base: dict[str, tuple[float, float]] | None = None
    for size in sizes:
        if size < filled:
            print(f"{name} {size:,} skipped: the kept store already holds {filled:,}",
                  flush=True)
            continue
        started = time.perf_counter()
        fill(filled, size, t0_us)
        filled = size
        fill_s = time.perf_counter() - started
        figures = measure(store, size)
        if isinstance(store, PostgresStore):
            figures.update(postgres_floors(store))
        base = base or figures
        print(f"{name} {size:,} messages over {max(PERSONAS, 2)} personas (fill {fill_s:.1f}s); "
              "median, p90", flush=True)
        report(figures, base, sizes[0])
        if optimize:
            started = time.perf_counter()
            store.optimize()
            print(f"{name} {size:,} after store.optimize() ({time.perf_counter() - started:.1f}s)",
                  flush=True)
            report(measure(store, size), base, sizes[0])


def main() -> None:
    global PERSONAS  # the layout of the synthetic messages, set once from the options
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", action="store_true", help="also 1,000,000 messages")
    parser.add_argument("--dsn", help="PostgreSQL DSN: also benchmark PostgreSQL")
    parser.add_argument("--no-sqlite", action="store_true", help="skip SQLite")
    parser.add_argument("--personas", type=int, default=2,
                        help="how many personas share the messages (default 2: the measured "
                        "one has nine pulses in ten)")
    parser.add_argument("--sizes", type=int, nargs="+",
                        help="measure only these sizes (messages), e.g. 1000000")
    parser.add_argument("--sqlite-path", type=Path,
                        help="the SQLite file to fill and keep (reused when already filled)")
    parser.add_argument("--pg-schema",
                        help="the PostgreSQL schema to fill and keep (reused when filled)")
    parser.add_argument("--optimize", action="store_true",
                        help="at each size, measure again after store.optimize()")
    args = parser.parse_args()
    PERSONAS = args.personas
    sizes = args.sizes or [10_000, 100_000] + ([1_000_000] if args.big else [])
    if not args.no_sqlite:
        with tempfile.TemporaryDirectory() as tmp:
            sqlite = SQLiteStore(args.sqlite_path or Path(tmp) / "bench.db")
            run("sqlite", sqlite, lambda a, b, t: fill_sqlite(sqlite, a, b, t), sizes,
                args.optimize)
            sqlite.close()
    if args.dsn:
        pg = PostgresStore(args.dsn, schema=args.pg_schema or f"bench_{uuid.uuid4().hex[:12]}")
        try:
            run("postgres", pg, lambda a, b, t: fill_postgres(pg, a, b, t), sizes,
                args.optimize)
        finally:
            if args.pg_schema is None:
                pg.drop_schema()
            pg.close()


if __name__ == "__main__":
    main()
