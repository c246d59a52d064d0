"""Benchmark of the pulse queue: pulses per second with 1, 2 and 4 worker processes on the
scripted model, against as many in-process runtimes on the same database, where the CPU
went, and the queue's own overhead per pulse.

Each worker is a ``sea worker`` process (``--concurrency`` pulses at once); the pulses are
``meta_user`` turns (router, then the persona speaks) of 20 personas, answered by the
scripted model without delay, so the figures are SEA's and the queue's own cost. Two ways
to fill the queue, both once every worker has registered, the clock stopping when the
last pulse is recorded done:

- ``queued``: the pulses are submitted in one transaction; the clock starts as it commits
  (the workers' capacity: what they do with a queue that holds work);
- ``live``: the clock starts, then this process submits the pulses one by one while the
  workers run them (the submissions' CPU, here and in the server, is then on the same
  cores as the workers').

Beside each count of workers, as many processes that each run a ``Runtime`` in process
(``in-process``): the same pulses, shared out among them, ``--concurrency`` at once in each,
the same durability as a worker's (``recover=True``, checkpoints kept in the same
PostgreSQL database and removed when the pulse ends), the same store; no queue. Their clock
starts when every process has built its runtime and stops when the last pulse ends. The
ratio is the workers' rate over theirs: what the queue (submitting, claiming, recording,
the per-persona job locks, waking the workers) costs at that scale. Each side runs
``--rounds`` times, the order of the three turning each round; the medians are printed,
with each round's ratio.

Where the time went, as CPU milliseconds a pulse (Linux, a server on this machine): the
side's own processes (the workers, or the in-process runtimes), the PostgreSQL server's
processes, and this process submitting.

The overhead is what the queue adds to a pulse, measured in this process: submit (one
transaction: the pulse's row and its job), fetch, claim, record and finish, with a
runtime that returns at once instead of running the pulse.

    python bench/bench_workers.py --dsn postgresql://postgres@127.0.0.1:5432/test
    python bench/bench_workers.py --dsn ... --pulses 400 --workers 2 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psycopg
from cpu_use import ServerCpu, processes_cpu  # run as a script from bench/

from saimemory import Persona
from saimemory.postgres import split_schema
from sea.engine.events import PulseEnded
from sea.host.result import pulse_result
from sea.queue import PulseQueue, Worker, WorkerOptions

PERSONAS = 20
ROOT = Path(__file__).resolve().parents[1]


def _schema_dsn(dsn: str, schema: str) -> str:
    return f"{dsn}{'&' if '?' in dsn else '?'}schema={schema}"


def _drop(dsn: str, schema: str) -> None:
    with psycopg.connect(split_schema(dsn)[0], autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


_DONE = "SELECT count(*) FROM sea_pulses WHERE status = 'done'"


def _connect(dsn: str) -> psycopg.Connection[Any]:
    """A connection to ``dsn``'s server, in its schema."""
    server, schema = split_schema(dsn)
    return psycopg.connect(server, autocommit=True, options=f"-c search_path={schema}")


def _counted(conn: psycopg.Connection[Any], sql: str) -> int:
    row = conn.execute(sql).fetchone()
    return int(row[0]) if row else 0


def _count(dsn: str, sql: str) -> int:
    with _connect(dsn) as conn:
        return _counted(conn, sql)


async def _submit(queue: PulseQueue, pulses: int, conn: Any = None) -> None:
    """Submit ``pulses`` pulses (in ``conn``'s transaction, if given)."""
    for n in range(pulses):
        persona = Persona(f"p{n % PERSONAS:02d}", "P", "You are brief.")
        await queue.submit(persona, "meta_user", f"hello {n}", conn=conn)


async def _create_tables(dsn: str) -> None:
    async with PulseQueue(dsn):  # opening the queue makes its tables
        pass


def _script(tmp: Path, pulses: int) -> Path:
    script = tmp / "script.json"
    script.write_text(json.dumps({"responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "hi"}] * pulses,
        "sub_speak.compose": ["Nice to see you."] * pulses}}))
    return script


def _worker_options(dsn: str, script: Path, concurrency: int) -> list[str]:
    """``sea worker``'s options: the in-process side builds its runtime from them too."""
    return ["worker", "--db", dsn, "--model", f"scripted:{script}",
            "--concurrency", str(concurrency), "--quiet"]


@dataclass(frozen=True, slots=True)
class Run:
    """One side's run: its rate, and the CPU a pulse cost its own processes, the PostgreSQL
    server (None: not on this machine) and the process that submitted the pulses."""

    rate: float
    side_ms: float | None
    server_ms: float | None
    submit_ms: float = 0.0


def _per_pulse(seconds: float | None, pulses: int) -> float | None:
    return None if seconds is None else seconds / pulses * 1000


async def _until_workers(dsn: str, workers: int) -> None:
    while _count(dsn, "SELECT count(*) FROM procrastinate_workers") < workers:
        await asyncio.sleep(0.05)


async def _timed_workers(dsn: str, pulses: int, workers: int, live: bool,
                         processes: list[subprocess.Popen[bytes]]) -> Run:
    """The workers' run, its clock started as the pulses are submitted (``live``) or once
    they are all in the queue (one transaction, made while the workers wait)."""
    pids = [process.pid for process in processes]
    async with PulseQueue(dsn) as queue:
        await _until_workers(dsn, workers)
        submit_cpu = time.process_time()
        if live:
            started = time.perf_counter()
            server, before = ServerCpu(), processes_cpu(pids)
            await _submit(queue, pulses)
        else:
            async with queue.connection() as conn:
                await _submit(queue, pulses, conn)
                server, before = ServerCpu(), processes_cpu(pids)
                started = time.perf_counter()  # the jobs appear when this commits
        submit_s = time.process_time() - submit_cpu
        # one connection polls (a new one every 20 ms cost the server a backend each)
        with _connect(dsn) as conn:
            polls = 0
            while _counted(conn, _DONE) < pulses:
                polls += 1
                if polls % 5 == 0:
                    server.sample()
                await asyncio.sleep(0.02)
        rate = pulses / (time.perf_counter() - started)
        after = processes_cpu(pids)
    side = None if before is None or after is None else after - before
    return Run(rate, _per_pulse(side, pulses), _per_pulse(server.used(), pulses),
               submit_s / pulses * 1000)


def workers_rate(dsn: str, workers: int, pulses: int, concurrency: int, tmp: Path,
                 live: bool) -> Run:
    """The run of ``workers`` processes: the pulses submitted while they run (``live``),
    or queued before the clock starts."""
    script = _script(tmp, pulses)
    asyncio.run(_create_tables(dsn))
    processes = [subprocess.Popen([sys.executable, "-m", "sea",
                                   *_worker_options(dsn, script, concurrency)], cwd=ROOT)
                 for _ in range(workers)]
    try:
        return asyncio.run(_timed_workers(dsn, pulses, workers, live, processes))
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(timeout=60)


def inprocess_rate(dsn: str, processes: int, pulses: int, concurrency: int,
                   tmp: Path) -> Run:
    """The run of ``processes`` processes each running its share of the pulses on a
    runtime of its own (``--child``), ``concurrency`` at once."""
    script = _script(tmp, pulses)
    ready = [tmp / f"ready{n}" for n in range(processes)]
    for path in ready:
        path.unlink(missing_ok=True)
    go = tmp / "go"
    go.unlink(missing_ok=True)
    children = [subprocess.Popen(
        [sys.executable, __file__, "--child", dsn, str(script), str(n), str(processes),
         str(pulses), str(concurrency), str(ready[n]), str(go)], cwd=ROOT,
        stdout=subprocess.PIPE, text=True) for n in range(processes)]
    try:
        while not all(path.exists() for path in ready):
            if any(child.poll() is not None for child in children):
                raise RuntimeError("an in-process child ended before it was ready")
            time.sleep(0.02)
        server = ServerCpu()
        started = time.perf_counter()
        go.touch()
        while any(child.poll() is None for child in children):
            server.sample()  # a child's connections end with it
            time.sleep(0.1)
        rate = pulses / (time.perf_counter() - started)
        # each child prints the CPU seconds its pulses took
        side = sum(float((child.stdout.read() if child.stdout else "0").strip() or 0)
                   for child in children)
        return Run(rate, _per_pulse(side, pulses), _per_pulse(server.used(), pulses))
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()


def _child(dsn: str, script: Path, index: int, processes: int, pulses: int,
           concurrency: int, ready: Path, go: Path) -> None:
    """One in-process side's process: pulses ``index``, ``index + processes``... of the
    workers' run, ``concurrency`` at once, as a worker runs them (its runtime built from
    the same options, as ``sea worker`` builds it) but with no queue; prints the CPU
    seconds they took."""
    import os

    from saimemory import open_store
    from sea.cli import build_parser
    from sea.cli._project.resolve import prepare, resolve
    from sea.cli._runtime import runtime_args
    from sea.host.runtime import Runtime

    parser = build_parser(only="worker", lazy=True)
    slots = prepare(parser)
    args = parser.parse_args(_worker_options(dsn, script, concurrency))
    resolve(args, slots, os.environ, ROOT)
    setup = runtime_args(args)
    store = open_store(setup.location)
    runtime = Runtime(setup.config(store, keep_checkpoints=True))

    async def run() -> float:
        mine = list(range(index, pulses, processes))
        slots = asyncio.Semaphore(concurrency)

        async def pulse(n: int) -> None:
            async with slots:
                persona = Persona(f"p{n % PERSONAS:02d}", "P", "You are brief.")
                pulse_id = uuid.uuid4().hex
                result = await runtime.arun_pulse(persona, "meta_user", f"hello {n}",
                                                  pulse_id=pulse_id, recover=True)
                assert result.status == "ok", result.error
                await runtime.aforget(pulse_id)

        ready.touch()
        while not go.exists():
            await asyncio.sleep(0.005)
        cpu = time.process_time()
        await asyncio.gather(*(pulse(n) for n in mine))
        spent = time.process_time() - cpu
        await runtime.aclose()
        return spent

    try:
        print(asyncio.run(run()), flush=True)
    finally:
        runtime.close()
        store.close()


class _Instant:
    """A runtime that ends every pulse at once: what is left is the queue's own work."""

    keeps_checkpoints = True

    def __init__(self) -> None:
        self.turns = SimpleNamespace(busy=lambda persona: False,
                                     waits_elsewhere=lambda *args: None)

    async def arun_pulse(self, persona: Persona, playbook: str, input: str, **kw: Any) -> Any:
        pulse_id = kw["pulse_id"]
        return pulse_result(pulse_id, [PulseEnded(pulse_id, "ok", 0.0, None)], {}, None)

    async def aforget(self, pulse_id: str) -> None:
        return None


async def _overhead(dsn: str, pulses: int) -> tuple[float, float]:
    async with PulseQueue(dsn) as queue:
        worker = Worker(queue, _Instant(), WorkerOptions(concurrency=1))  # type: ignore[arg-type]
        running = asyncio.create_task(worker.run(install_signal_handlers=False))
        await asyncio.sleep(0.5)
        started = time.perf_counter()
        ids = []
        for n in range(pulses):
            persona = Persona(f"p{n % PERSONAS:02d}", "P", "")
            ids.append(await queue.submit(persona, "meta_user", "x"))
        submitted = time.perf_counter() - started
        while (await queue.pulse(ids[-1])).status != "done":
            await asyncio.sleep(0.005)
        total = time.perf_counter() - started
        worker.stop()
        await running
    return submitted / pulses * 1000, total / pulses * 1000


def _measure(dsn: str, measure: Callable[..., Run], *args: Any) -> Run:
    """One run, in a schema of its own (dropped after)."""
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    try:
        return measure(_schema_dsn(dsn, schema), *args)
    finally:
        _drop(dsn, schema)


def _ms(values: list[float | None]) -> str:
    known = [v for v in values if v is not None]
    return f"{statistics.median(known):5.1f}" if len(known) == len(values) else "  n/a"


def _rounds(dsn: str, count: int, pulses: int, concurrency: int, rounds: int,
            tmp: Path) -> dict[str, list[Run]]:
    """``rounds`` runs of each side, each round in another order."""
    sides: dict[str, Callable[[], Run]] = {
        "queued": lambda: _measure(dsn, workers_rate, count, pulses, concurrency, tmp, False),
        "live": lambda: _measure(dsn, workers_rate, count, pulses, concurrency, tmp, True),
        "in-process": lambda: _measure(dsn, inprocess_rate, count, pulses, concurrency, tmp),
    }
    runs: dict[str, list[Run]] = {name: [] for name in sides}
    names = list(sides)
    for round_ in range(rounds):
        for name in names[round_ % 3:] + names[:round_ % 3]:
            runs[name].append(sides[name]())
    return runs


def main() -> None:
    """Run the benchmark and print a table."""
    if sys.argv[1:2] == ["--child"]:
        dsn, script, *numbers, ready, go = sys.argv[2:]
        index, processes, pulses, concurrency = (int(n) for n in numbers)
        _child(dsn, Path(script), index, processes, pulses, concurrency, Path(ready), Path(go))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="a PostgreSQL server to use (a schema "
                        "of its own is made and dropped)")
    parser.add_argument("--pulses", type=int, default=200)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3,
                        help="runs of each side, alternated (medians are printed)")
    args = parser.parse_args()
    print(f"{args.pulses} pulses, {args.concurrency} at once a process, medians of "
          f"{args.rounds} rounds; CPU ms a pulse: the side's processes + the PostgreSQL "
          "server + the submitter")
    print(f"{'workers':>7} {'side':<11} {'pulses/s':>9} {'/ in-process':>13} "
          f"{'cpu: own':>9} {'server':>7} {'submit':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.workers:
            runs = _rounds(args.dsn, count, args.pulses, args.concurrency, args.rounds,
                           Path(tmp))
            base = statistics.median(run.rate for run in runs["in-process"])
            for name, done in runs.items():
                rate = statistics.median(run.rate for run in done)
                ratios = "/".join(f"{run.rate / other.rate:.2f}" for run, other in
                                  zip(done, runs["in-process"], strict=True))
                print(f"{count:>7} {name:<11} {rate:>9.1f} {rate / base:>6.2f}x "
                      f"({ratios}) {_ms([r.side_ms for r in done]):>9} "
                      f"{_ms([r.server_ms for r in done]):>7} "
                      f"{_ms([r.submit_ms for r in done]):>7}", flush=True)
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    try:
        submit_ms, total_ms = asyncio.run(_overhead(_schema_dsn(args.dsn, schema), args.pulses))
    finally:
        _drop(args.dsn, schema)
    print(f"queue overhead per pulse: {total_ms:.2f} ms (submit {submit_ms:.2f} ms; then "
          "fetch, claim, record, finish; one worker, one pulse at a time)")


if __name__ == "__main__":
    main()
