"""``sea serve`` against the in-process ``Runtime``, on the same pulses, in one run.

The pulse: a one-node playbook (``chat``: an ``llm`` node that speaks and stores its reply)
on the scripted model, its reply streamed a word a chunk (16) without delay, so what is
measured is SEA, the server and the client, not a model. Both sides build their runtime from the
same ``sea serve`` options with the same builders (store, models, library, limits), each on
a SQLite store of its own in a temporary directory.

* **In process**: ``Runtime.astream_pulse`` in this process; the first event is the first
  ``token``, the end is the last event (``pulse_end``).
* **Served**: one ``sea serve`` process on a loopback port; a client in this process
  streams each pulse as agent-chat-ui does (``POST /threads/{id}/runs/stream``, modes
  ``messages-tuple`` and ``values``) over a connection of its own (plain asyncio sockets
  and a small SSE reader, so that little of the client's own cost is counted); the first
  event is the first ``messages`` event, the end is the ``end`` event.

With 1, 10 and 100 concurrent clients (each its own persona and conversation, since a
persona runs one pulse at a time), each side runs the same pulses; the figures are the
median and p99 time to the first event and to the end, the server's added latency (served
minus in-process, median and p99), and pulses per second with the ratio served/in-process.
Memory per open stream: a server of its own (its model streams a chunk every 50 ms), its
resident memory with 500 streams joined to one slow run, less before, over 500. Then 1,000
pulses over 100 clients are streamed with every mode SEA maps each log entry to
(``custom`` added) and checked: every event's id is new and in order, every log entry
(``<seq>-k``) arrived with none missing, ``metadata`` first, ``end`` last, no ``error``,
the whole reply.

Targets (issue 35): added p50 <= 2 ms and p99 <= 15 ms at 10 clients; throughput with one
server process >= 80% of the in-process runtime's.

Run: ``PYTHONPATH=. python bench/bench_serve.py [--pulses 200] [--profile]`` (``--profile``
runs the server under pyinstrument and writes its report beside the output).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
CHAT = {
    "name": "chat", "description": "Answers the user.", "user_selectable": True,
    "start_node": "reply",
    "nodes": [{"id": "reply", "type": "llm", "action": None, "context_profile": "conversation",
               "speak": True, "memorize": {"tags": ["conversation"]}}],
}
REPLY = "Hello there, friend. It is good to hear from you again; how was the walk today?"
SLOW_REPLY = " ".join(f"w{i}" for i in range(400))
MODES = ["messages-tuple", "values"]
CLIENTS = (1, 10, 100)
STREAMS_FOR_MEMORY = 500


def percentile(samples: list[float], q: float) -> float:
    """The q-th percentile (0..100), interpolated."""
    ordered = sorted(samples)
    if len(ordered) == 1:
        return ordered[0]
    at = (len(ordered) - 1) * q / 100
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


@dataclass
class Timings:
    """Per-pulse seconds to the first event and to the end; wall seconds of the run."""

    first: list[float] = field(default_factory=list)
    end: list[float] = field(default_factory=list)
    wall: float = 0.0

    @property
    def rate(self) -> float:
        return len(self.end) / self.wall

    async def clocked(self, clients: Iterable[Awaitable[None]]) -> Timings:
        """Run ``clients`` at once; :attr:`wall` is how long they took together."""
        began = time.perf_counter()
        await asyncio.gather(*clients)
        self.wall = time.perf_counter() - began
        return self


# -- the setup both sides share ----------------------------------------------------------------


def write_setup(root: Path, pulses: int, chunk_delay_s: float = 0.0) -> list[str]:
    """Playbooks and script in ``root``; the ``sea serve`` options (without host/port)."""
    books = root / "books"
    books.mkdir(parents=True, exist_ok=True)
    (books / "chat.json").write_bytes(orjson.dumps(CHAT))
    (books / "slow.json").write_bytes(orjson.dumps({**CHAT, "name": "slow"}))
    (root / "script.json").write_bytes(orjson.dumps({
        "responses": {"slow.reply": [SLOW_REPLY] * 4},
        "default": [REPLY] * pulses, "chunk_delay_s": chunk_delay_s}))
    return ["--model", f"scripted:{root / 'script.json'}", "--playbooks", str(books),
            "chat"]


def in_process_runtime(root: Path, options: list[str]) -> Any:
    """The runtime ``sea serve`` would build from ``options`` (the same builders)."""
    from sea.cli import build_parser
    from sea.cli._runtime import runtime_args
    from sea.cli.run import playbook_library, writable_store
    from sea.host.runtime import Runtime

    args = build_parser("serve").parse_args(
        ["serve", "--db", str(root / "memory.sqlite"), *options])
    library, _ = playbook_library(args.playbook, args.playbooks)
    setup = runtime_args(args, library)
    store = writable_store(setup.location)
    return Runtime(setup.config(store)), store


async def run_in_process(runtime: Any, clients: int, per_client: int) -> Timings:
    """``clients`` concurrent loops of ``per_client`` pulses, each on a persona of its own."""
    from saimemory.records import Persona

    timings = Timings()

    async def client(i: int) -> None:
        persona = Persona(f"c{clients}_{i}", f"Aoi{i}", "You are Aoi.")
        for n in range(per_client):
            started = time.perf_counter()
            first = None
            async for event in runtime.astream_pulse(persona, "chat", f"hello {n}"):
                if first is None and event.kind == "token":
                    first = time.perf_counter()
                if event.kind == "pulse_end":
                    assert event.status == "ok", event
            ended = time.perf_counter()
            assert first is not None
            timings.first.append(first - started)
            timings.end.append(ended - started)

    return await timings.clocked(client(i) for i in range(clients))


# -- the served side ---------------------------------------------------------------------------


@dataclass
class Served:
    """A running ``sea serve``."""

    host: str
    port: int
    token: str
    process: subprocess.Popen[bytes]

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def start_server(root: Path, options: list[str], profile: Path | None) -> Served:
    env = {**os.environ, "SEA_HOME": str(root / "home"), "PYTHONPATH": str(ROOT)}
    env.pop("SEA_DB", None)
    prefix = [sys.executable, "-m", "sea"] if profile is None else [
        sys.executable, "-m", "pyinstrument", "-r", "text", "-o", str(profile), "-m", "sea"]
    command = [*prefix, "serve", "--port", "0", "--db", str(root / "served.sqlite"),
               "--token-file", str(root / "token"), "--keepalive", "60", *options]
    log = open(root / "server.log", "wb")  # the server writes it until it ends
    process = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = (root / "server.log").read_text(errors="replace")
        found = re.search(r"listening on http://([\d.]+):(\d+)", text)
        ready = found and "token" in text and (root / "token").exists()
        if found and ready and _listens(found.group(1), int(found.group(2))):
            token = (root / "token").read_text().strip()
            return Served(found.group(1), int(found.group(2)), token, process)
        if process.poll() is not None:
            raise RuntimeError(f"sea serve exited:\n{text}")
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("sea serve did not start")


def _listens(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        return False
    return True


class Http:
    """A minimal HTTP/1.1 client over asyncio sockets: one connection per request."""

    def __init__(self, served: Served) -> None:
        self.served = served

    async def _open(self, method: str, path: str, body: Any, accept: str
                    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, int, dict[str, str]]:
        reader, writer = await asyncio.open_connection(self.served.host, self.served.port)
        payload = b"" if body is None else orjson.dumps(body)
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"x-api-key: {self.served.token}\r\nAccept: {accept}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
                "Connection: close\r\n\r\n")
        writer.write(head.encode() + payload)
        status_line = await reader.readline()
        status = int(status_line.split()[1])
        headers = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        return reader, writer, status, headers

    async def _chunks(self, reader: asyncio.StreamReader, headers: dict[str, str]
                      ) -> AsyncIterator[bytes]:
        if headers.get("transfer-encoding") != "chunked":
            yield await reader.read(-1)
            return
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            if size == 0:
                return
            yield (await reader.readexactly(size + 2))[:-2]

    async def json(self, method: str, path: str, body: Any = None) -> Any:
        reader, writer, status, headers = await self._open(method, path, body,
                                                           "application/json")
        data = b"".join([c async for c in self._chunks(reader, headers)])
        writer.close()
        assert status < 300, (status, data)
        return orjson.loads(data)

    async def events(self, path: str, body: Any, method: str = "POST"
                     ) -> AsyncIterator[tuple[str | None, str, bytes]]:
        """The SSE events of a stream: (id, event, data), comments skipped."""
        reader, writer, status, headers = await self._open(method, path, body,
                                                           "text/event-stream")
        try:
            assert status == 200, status
            buffer = b""
            async for chunk in self._chunks(reader, headers):
                buffer += chunk
                if b"\r" in buffer:  # lines may end in CRLF (LangGraph's server)
                    buffer = buffer.replace(b"\r\n", b"\n")
                *blocks, buffer = buffer.split(b"\n\n")
                for block in blocks:
                    fields = dict(line.split(b": ", 1) for line in block.split(b"\n")
                                  if line and not line.startswith(b":"))
                    if b"event" in fields:
                        event_id = fields.get(b"id")
                        yield (event_id.decode() if event_id else None,
                               fields[b"event"].decode(), fields.get(b"data", b""))
        finally:
            writer.close()


async def conversations(http: Http, clients: int, tag: str) -> list[str]:
    """A persona and a conversation for each client; the conversations' ids."""
    threads = []
    for i in range(clients):
        persona = f"{tag}_{i}"
        await http.json("POST", "/v1/personas", {"id": persona, "name": f"Aoi{i}",
                                                 "system_prompt": "You are Aoi."})
        thread = await http.json("POST", "/threads", {"metadata": {"persona": persona}})
        threads.append(thread["thread_id"])
    return threads


def run_body(text: str, modes: list[str]) -> dict[str, Any]:
    return {"assistant_id": "agent", "input": {"messages": [{"type": "human",
                                                             "content": text}]},
            "stream_mode": modes, "stream_resumable": True, "on_disconnect": "continue"}


async def run_served(http: Http, clients: int, per_client: int, tag: str,
                     open_threads: Callable[[Http, int, str], Awaitable[list[str]]] = conversations,
                     closing: str = "end") -> Timings:
    """``clients`` concurrent loops of ``per_client`` streamed pulses on threads that
    ``open_threads`` opened; each stream's last event must be ``closing``."""
    threads = await open_threads(http, clients, tag)
    timings = Timings()

    async def client(thread: str) -> None:
        for n in range(per_client):
            started = time.perf_counter()
            first = None
            last = ""
            async for _, event, data in http.events(f"/threads/{thread}/runs/stream",
                                                    run_body(f"hello {n}", MODES)):
                if first is None and event == "messages":
                    first = time.perf_counter()
                assert event != "error", data
                last = event
            ended = time.perf_counter()
            assert first is not None and last == closing, last
            timings.first.append(first - started)
            timings.end.append(ended - started)

    return await timings.clocked(client(t) for t in threads)


async def memory_per_stream(root: Path) -> float:
    """KiB of a server's resident memory per stream joined to one slow run (a server of
    its own, whose model streams a chunk every 50 ms)."""
    root.mkdir()
    served = start_server(root, write_setup(root, 10, chunk_delay_s=0.05), None)
    try:
        return await _memory_per_stream(Http(served), served)
    finally:
        served.stop()


async def _memory_per_stream(http: Http, served: Served) -> float:
    thread = (await conversations(http, 1, "mem"))[0]
    started = await http.json("POST", f"/threads/{thread}/runs", {
        **run_body("go slowly", MODES), "assistant_id": "slow"})
    run_id = started["run_id"]
    await asyncio.sleep(0.5)
    before = served.rss_kib()
    opened = asyncio.Event()
    count = 0

    async def join() -> None:
        nonlocal count
        first = True
        async for _ in http.events(f"/threads/{thread}/runs/{run_id}/stream", None, "GET"):
            if first:
                first = False
                count += 1
                if count >= STREAMS_FOR_MEMORY:
                    opened.set()

    tasks = [asyncio.create_task(join()) for _ in range(STREAMS_FOR_MEMORY)]
    await asyncio.wait_for(opened.wait(), 60)
    await asyncio.sleep(1.0)
    after = served.rss_kib()
    await http.json("POST", f"/threads/{thread}/runs/{run_id}/cancel")
    await asyncio.gather(*tasks, return_exceptions=True)
    return (after - before) / STREAMS_FOR_MEMORY


async def check_thousand(http: Http, clients: int = 100, per_client: int = 10
                         ) -> tuple[int, int, float]:
    """1,000 pulses over 100 clients, every event checked; (pulses, events, seconds)."""
    threads = await conversations(http, clients, "check")
    modes = [*MODES, "custom"]  # every log entry becomes at least one event
    counted = 0

    async def client(thread: str) -> None:
        nonlocal counted
        for n in range(per_client):
            seen: list[tuple[int, int]] = []
            kinds: list[str] = []
            text = ""
            async for event_id, event, data in http.events(
                    f"/threads/{thread}/runs/stream", run_body(f"check {n}", modes)):
                assert event_id is not None, event
                seq, _, k = event_id.partition("-")
                seen.append((int(seq), int(k)))
                kinds.append(event)
                if event == "messages":
                    text += orjson.loads(data)[0]["content"]
            assert seen == sorted(set(seen)), "an event repeated or out of order"
            seqs = sorted({s for s, _ in seen})
            assert seqs == list(range(1, seqs[-1] + 1)), "a log entry never arrived"
            assert kinds[0] == "metadata" and kinds[-1] == "end", (kinds[0], kinds[-1])
            assert "error" not in kinds
            assert text.replace(" ", "") == REPLY.replace(" ", ""), text
            counted += len(seen)

    began = time.perf_counter()
    await asyncio.gather(*(client(t) for t in threads))
    return clients * per_client, counted, time.perf_counter() - began


# -- the run -----------------------------------------------------------------------------------


def _ms(value: float) -> str:
    return f"{value * 1000:7.2f}"


def report(clients: int, local: Timings, served: Timings) -> dict[str, float]:
    figures = {}
    print(f"\n{clients} client(s), {len(local.end)} pulses per side")
    print(f"{'':26}{'median ms':>10} {'p99 ms':>9}")
    for name, values in (("in process: first event", local.first),
                         ("in process: end", local.end),
                         ("served: first event", served.first), ("served: end", served.end)):
        print(f"{name:26}{_ms(statistics.median(values)):>10} {_ms(percentile(values, 99)):>9}")
    for what, a, b in (("first event", local.first, served.first),
                       ("end", local.end, served.end)):
        p50 = statistics.median(b) - statistics.median(a)
        p99 = percentile(b, 99) - percentile(a, 99)
        figures[f"{what} p50"], figures[f"{what} p99"] = p50, p99
        print(f"{'added: ' + what:26}{_ms(p50):>10} {_ms(p99):>9}")
    ratio = served.rate / local.rate
    figures["ratio"] = ratio
    print(f"pulses/s: in process {local.rate:7.1f}, served {served.rate:7.1f} "
          f"({ratio:.0%} of in process)")
    return figures


def missed(clients: int, figures: dict[str, float]) -> list[str]:
    """The targets of issue 35 that ``figures`` (from ``report``) miss."""
    failures = []
    if clients == 10:
        if figures["end p50"] > 0.002 or figures["first event p50"] > 0.002:
            failures.append("added p50 at 10 clients > 2 ms")
        if figures["end p99"] > 0.015 or figures["first event p99"] > 0.015:
            failures.append("added p99 at 10 clients > 15 ms")
    if figures["ratio"] < 0.8:
        failures.append(f"throughput at {clients} client(s) < 80% of in process")
    return failures


def pulses_per_side(pulses: int) -> dict[int, int]:
    """Pulses per client for 1, 10 and 100 clients (``--pulses`` with one)."""
    return {1: pulses, 10: max(pulses // 10, 10), 100: max(pulses // 100, 2)}


async def bench(args: argparse.Namespace, root: Path) -> int:
    per = pulses_per_side(args.pulses)
    total = sum(c * per[c] for c in CLIENTS) + 1000 + 100
    options = write_setup(root, total * 2)
    runtime, store = in_process_runtime(root, options)
    served = start_server(root, options, root / "profile.txt" if args.profile else None)
    http = Http(served)
    failures = []
    try:
        await run_served(http, 2, 3, "warm")  # first imports and connections
        await run_in_process(runtime, 2, 3)
        kib = await memory_per_stream(root / "memory")
        for clients in CLIENTS:
            local = await run_in_process(runtime, clients, per[clients])
            remote = await run_served(http, clients, per[clients], f"b{clients}")
            failures += missed(clients, report(clients, local, remote))
        print(f"\nmemory per open stream: {kib:.1f} KiB ({STREAMS_FOR_MEMORY} streams "
              "joined to one run)")
        pulses, events, seconds = await check_thousand(http)
        print(f"checked: {pulses} pulses over 100 clients, {events} events, none lost, none "
              f"repeated, no error ({pulses / seconds:.1f} pulses/s with every mode)")
    finally:
        code = served.stop()
        runtime.close()
        store.close()
    print(f"server exit code after SIGTERM: {code}")
    if args.profile:
        print(f"profile: {root / 'profile.txt'}")
    print("targets: " + ("all met" if not failures else "MISSED: " + "; ".join(failures)))
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pulses", type=int, default=200,
                        help="pulses with one client (10 clients run a tenth each, 100 a "
                        "hundredth, at least 2)")
    parser.add_argument("--profile", action="store_true",
                        help="run the server under pyinstrument (its report is kept)")
    parser.add_argument("--keep", metavar="DIR", help="keep the files in DIR")
    run_in_workdir(bench, parser.parse_args())


def run_in_workdir(run: Callable[[argparse.Namespace, Path], Awaitable[int]],
                   args: argparse.Namespace) -> None:
    """Exit with what ``run`` returns, its files in ``--keep`` (kept) or a temporary one."""
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        raise SystemExit(asyncio.run(run(args, Path(args.keep))))
    with tempfile.TemporaryDirectory() as tmp:
        raise SystemExit(asyncio.run(run(args, Path(tmp))))


if __name__ == "__main__":
    main()
