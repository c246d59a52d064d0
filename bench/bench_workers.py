"""Benchmark of the pulse queue: pulses per second with 1, 2 and 4 worker processes on the
scripted model, against as many in-process runtimes on the same database, and the queue's
own overhead per pulse.

Each worker is a ``sea worker`` process (``--concurrency`` pulses at once); the pulses are
``meta_user`` turns (router, then the persona speaks) of 20 personas, answered by the
scripted model without delay, so the figures are SEA's and the queue's own cost. The clock
starts when every worker has registered and stops when the last pulse is recorded done.

Beside each count of workers, as many processes that each run a ``Runtime`` in process
(``in-process``): the same pulses, shared out among them, ``--concurrency`` at once in each,
the same durability as a worker's (``recover=True``, checkpoints kept in the same
PostgreSQL database and removed when the pulse ends), the same store; no queue. Their clock
starts when every process has built its runtime and stops when the last pulse ends. The
ratio is the workers' rate over theirs: what the queue (submitting, claiming, recording,
the per-persona job locks, waking the workers) costs at that scale.

The overhead is what the queue adds to a pulse, measured in this process: submit (one
transaction: the pulse's row and its job), fetch, claim, record and finish, with a
runtime that returns at once instead of running the pulse.

    python bench/bench_workers.py --dsn postgresql://postgres@127.0.0.1:5432/test
    python bench/bench_workers.py --dsn ... --pulses 400 --workers 1 2 4 --concurrency 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psycopg

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


async def _submit(dsn: str, pulses: int) -> float:
    async with PulseQueue(dsn) as queue:
        started = time.perf_counter()
        for n in range(pulses):
            persona = Persona(f"p{n % PERSONAS:02d}", "P", "You are brief.")
            await queue.submit(persona, "meta_user", f"hello {n}")
        return time.perf_counter() - started


def _script(tmp: Path, pulses: int) -> Path:
    script = tmp / "script.json"
    script.write_text(json.dumps({"responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "hi"}] * pulses,
        "sub_speak.compose": ["Nice to see you."] * pulses}}))
    return script


def workers_rate(dsn: str, workers: int, pulses: int, concurrency: int, tmp: Path) -> float:
    """Pulses per second of ``workers`` processes."""
    script = _script(tmp, pulses)
    asyncio.run(_submit(dsn, 0))  # creates the tables
    processes = [subprocess.Popen(
        [sys.executable, "-m", "sea", "worker", "--db", dsn, "--model", f"scripted:{script}",
         "--concurrency", str(concurrency), "--quiet"], cwd=ROOT) for _ in range(workers)]
    try:
        while _count(dsn, "SELECT count(*) FROM procrastinate_workers") < workers:
            time.sleep(0.05)
        # one connection polls (a new one every 20 ms cost the server a backend each)
        with _connect(dsn) as conn:
            started = time.perf_counter()
            asyncio.run(_submit(dsn, pulses))
            while _counted(conn, _DONE) < pulses:
                time.sleep(0.02)
            return pulses / (time.perf_counter() - started)
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(timeout=60)


def inprocess_rate(dsn: str, processes: int, pulses: int, concurrency: int,
                   tmp: Path) -> float:
    """Pulses per second of ``processes`` processes each running its share of the pulses
    on a runtime of its own (``--child``), ``concurrency`` at once."""
    script = _script(tmp, pulses)
    ready = [tmp / f"ready{n}" for n in range(processes)]
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
        started = time.perf_counter()
        go.touch()
        for child in children:
            child.wait(timeout=600)
        return pulses / (time.perf_counter() - started)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()


def _child(dsn: str, script: Path, index: int, processes: int, pulses: int,
           concurrency: int, ready: Path, go: Path) -> None:
    """One in-process side's process: pulses ``index``, ``index + processes``... of the
    workers' run, ``concurrency`` at once, as a worker runs them but with no queue."""
    from saimemory import open_store
    from sea.chat.scripted import ScriptedChatModel
    from sea.host.config import RuntimeConfig
    from sea.host.runtime import Runtime
    from sea.lang.library import PlaybookLibrary
    from sea.llm.models import ModelSet

    store = open_store(dsn)
    model = ScriptedChatModel.from_mapping(json.loads(script.read_text()))
    runtime = Runtime(RuntimeConfig(store, ModelSet.single(model),
                                    library=PlaybookLibrary.bundled([]), checkpoint_path=dsn,
                                    keep_checkpoints=True))

    async def run() -> None:
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
        await asyncio.gather(*(pulse(n) for n in mine))
        await runtime.aclose()

    try:
        asyncio.run(run())
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'workers':>8} {'concurrency':>12} {'pulses/s':>10} {'in-process':>11} "
              f"{'ratio':>6}")
        for count in args.workers:
            rates = []
            for measure in (workers_rate, inprocess_rate):
                schema = f"bench_{uuid.uuid4().hex[:8]}"
                try:
                    rates.append(measure(_schema_dsn(args.dsn, schema), count, args.pulses,
                                         args.concurrency, Path(tmp)))
                finally:
                    _drop(args.dsn, schema)
            print(f"{count:>8} {args.concurrency:>12} {rates[0]:>10.1f} {rates[1]:>11.1f} "
                  f"{rates[0] / rates[1]:>5.2f}x", flush=True)
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    try:
        submit_ms, total_ms = asyncio.run(_overhead(_schema_dsn(args.dsn, schema), args.pulses))
    finally:
        _drop(args.dsn, schema)
    print(f"queue overhead per pulse: {total_ms:.2f} ms (submit {submit_ms:.2f} ms; then "
          "fetch, claim, record, finish; one worker, one pulse at a time)")


if __name__ == "__main__":
    main()
