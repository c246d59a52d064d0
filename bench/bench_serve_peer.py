"""LangGraph's own server against the same graph in process, measured as ``bench_serve.py``
measures ``sea serve`` (issue 35: is its target within reach of a Python server?).

The peer of the ``chat`` pulse is a hand-written LangGraph graph (``serve_peer_graph.py``):
one node that asks a scripted chat model, which streams the same reply a chunk per word as
SEA's scripted model does, without delay, and returns the message.

* **In process**: ``graph.astream`` in this process, stream modes ``messages`` and
  ``values``, on an in-memory checkpointer; the first event is the first ``messages``
  event, the end is the last event.
* **Served**: ``langgraph dev`` (LangGraph's in-memory API server: ``langgraph-cli[inmem]``,
  ``langgraph-api``, ``langgraph-runtime-inmem``) on a loopback port, offline (no tracing,
  no version check, no browser, no reload), with as many concurrent runs as the most
  clients (``--jobs``; ``langgraph dev`` runs one at a time unless told); the client is
  ``bench_serve.py``'s (same request, ``messages-tuple`` and ``values``); the first event is
  the first ``messages`` event, the end is when the stream closes (the server sends no
  ``end`` event: its last is ``values``). Its in-memory queue looks for new runs every
  0.5 s, so a run waits up to a second before it starts; ``--queue-poll-s 0.001`` runs a
  variant polled every millisecond (``serve_peer_launch.py``) that shows what the server
  costs without that wait.

With 1, 10 and 100 concurrent clients (each on a thread of its own), the figures are
``bench_serve.py``'s: median and p99 to the first event and to the end, the added latency,
pulses per second and the ratio served/in process, and the same targets.

The peer runs in a virtualenv of its own, so that its pinned dependencies do not change
SEA's: ``python3 -m venv VENV && VENV/bin/pip install 'langgraph-cli[inmem]'``. This script
starts under any Python and runs itself again under ``VENV/bin/python``.

Run: ``python bench/bench_serve_peer.py --peer-venv VENV [--pulses 200]``.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
PEER_PACKAGES = "'langgraph-cli[inmem]'"


def peer_missing(venv: Path | None) -> str | None:
    """Why ``venv`` cannot run the peer (None when it can)."""
    if venv is None:
        return "no --peer-venv given"
    for program in ("python", "langgraph"):
        if not (venv / "bin" / program).exists():
            return f"{venv / 'bin' / program} is missing"
    found = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import langgraph_api, langgraph_runtime_inmem, orjson"],
                           capture_output=True, text=True)
    if found.returncode != 0:
        return f"{venv} cannot import LangGraph's server: {found.stderr.strip().splitlines()[-1]}"
    return None


# -- what runs under the peer's Python ---------------------------------------------------------


def start_peer(venv: Path, root: Path, jobs: int, poll_s: float | None) -> Any:
    """``langgraph dev`` serving ``serve_peer_graph.graph`` as ``agent``, from ``root``
    (with ``poll_s``, its in-memory queue polled that often: ``serve_peer_launch.py``)."""
    import orjson
    from bench_serve import Served, _listens

    (root / "langgraph.json").write_bytes(orjson.dumps({
        "dependencies": ["."], "graphs": {"agent": f"{BENCH / 'serve_peer_graph.py'}:graph"}}))
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("LANGSMITH_", "LANGCHAIN_", "LANGGRAPH_"))
           and name != "PYTHONPATH"}
    env.update(LANGSMITH_TRACING="false", LANGGRAPH_NO_VERSION_CHECK="true")
    launcher = [str(venv / "bin" / "langgraph")] if poll_s is None else [
        str(venv / "bin" / "python"), str(BENCH / "serve_peer_launch.py"), str(poll_s)]
    command = [*launcher, "dev", "--no-browser", "--no-reload",
               "--host", "127.0.0.1", "--port", str(free_port()), "--config", "langgraph.json",
               "--n-jobs-per-worker", str(jobs)]
    log = open(root / "server.log", "wb")  # the server writes it until it ends
    process = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = re.sub(r"\x1b\[[0-9;]*m", "", (root / "server.log").read_text(errors="replace"))
        found = re.search(r"API: http://([\d.]+):(\d+)", text)
        if found and "Application started up" in text and _listens(found[1], int(found[2])):
            return Served(found[1], int(found[2]), "", process)
        if process.poll() is not None:
            raise RuntimeError(f"langgraph dev exited:\n{text}")
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("langgraph dev did not start")


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def threads(http: Any, clients: int, tag: str) -> list[str]:
    """A thread for each client on the peer; their ids."""
    return [(await http.json("POST", "/threads", {"metadata": {"client": f"{tag}_{i}"}}))
            ["thread_id"] for i in range(clients)]


async def run_graph(graph: Any, clients: int, per_client: int, tag: str) -> Any:
    """``clients`` concurrent loops of ``per_client`` runs of ``graph``, each on a thread."""
    from bench_serve import Timings

    timings = Timings()

    async def client(i: int) -> None:
        config = {"configurable": {"thread_id": f"{tag}_{i}"}}
        for n in range(per_client):
            started = time.perf_counter()
            first = None
            last = None
            async for mode, _ in graph.astream(
                    {"messages": [{"type": "human", "content": f"hello {n}"}]}, config,
                    stream_mode=["messages", "values"]):
                if first is None and mode == "messages":
                    first = time.perf_counter()
                last = mode
            ended = time.perf_counter()
            assert first is not None and last == "values", last
            timings.first.append(first - started)
            timings.end.append(ended - started)

    return await timings.clocked(client(i) for i in range(clients))


async def bench(args: argparse.Namespace, root: Path) -> int:
    from bench_serve import CLIENTS, Http, missed, pulses_per_side, report, run_served
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph_api import __version__ as api_version
    from serve_peer_graph import compiled

    per = pulses_per_side(args.pulses)
    graph = compiled(InMemorySaver())
    served = start_peer(Path(args.peer_venv), root, args.jobs, args.queue_poll_s)
    http = Http(served)
    queue = ("as shipped (polled every 0.5 s)" if args.queue_poll_s is None else
             f"polled every {args.queue_poll_s} s (NOT as shipped)")
    print(f"langgraph dev (langgraph-api {api_version}), {args.jobs} concurrent runs, queue "
          f"{queue}; load average {os.getloadavg()[0]:.2f}")
    failures = []
    try:
        await run_served(http, 2, 3, "warm", threads, "values")  # first imports and connections
        await run_graph(graph, 2, 3, "warm")
        for clients in CLIENTS:
            local = await run_graph(graph, clients, per[clients], f"b{clients}")
            remote = await run_served(http, clients, per[clients], f"b{clients}", threads,
                                      "values")
            failures += missed(clients, report(clients, local, remote))
    finally:
        code = served.stop()
    print(f"\nserver exit code after SIGTERM: {code}; load average "
          f"{os.getloadavg()[0]:.2f}")
    print("targets: " + ("all met" if not failures else "MISSED: " + "; ".join(failures)))
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer-venv", metavar="VENV",
                        help="the virtualenv with LangGraph's server (langgraph-cli[inmem])")
    parser.add_argument("--pulses", type=int, default=200,
                        help="pulses with one client (10 clients run a tenth each, 100 a "
                        "hundredth, at least 2)")
    parser.add_argument("--jobs", type=int, default=100,
                        help="runs the server runs at once (langgraph dev --n-jobs-per-worker)")
    parser.add_argument("--queue-poll-s", type=float, metavar="SECONDS",
                        help="poll the in-memory queue this often instead of every 0.5 s "
                        "(a variant, not the server as shipped: shows its cost without "
                        "the queue's wait)")
    parser.add_argument("--keep", metavar="DIR", help="keep the files in DIR")
    args = parser.parse_args()
    venv = Path(args.peer_venv).absolute() if args.peer_venv else None
    if (why := peer_missing(venv)) is not None:
        print(f"LangGraph's server is not available: {why}.\nInstall it in a virtualenv of "
              f"its own: python3 -m venv VENV && VENV/bin/pip install {PEER_PACKAGES}; "
              "then pass --peer-venv VENV.", file=sys.stderr)
        raise SystemExit(2)
    assert venv is not None
    if Path(sys.prefix).resolve() != venv.resolve():  # run again under the peer's Python
        python = str(venv / "bin" / "python")
        os.execv(python, [python, str(Path(__file__).resolve()), *sys.argv[1:]])
    from bench_serve import run_in_workdir

    run_in_workdir(bench, args)


if __name__ == "__main__":
    main()
