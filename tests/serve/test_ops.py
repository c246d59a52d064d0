"""Operations of a real ``sea serve`` process: ``/metrics`` moves with the pulses and
streams, one log line per request (never the key), and a SIGTERM drains: the running pulse
ends (or is cancelled when its grace is over), its stream ends cleanly, open streams are
told, and the process exits 0."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import orjson
from prometheus_client.parser import text_string_to_metric_families

from tests.serve.server import (
    LONG,
    QUICK_CHUNK_DELAY_S,
    REPLY,
    Server,
    script_of,
    serve_command,
    start_server,
)
from tests.serve.test_agent_chat_ui import events_of


def metrics(server: Server) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``/metrics``: (name, sorted labels) -> value."""
    answer = httpx.get(f"{server.url}/metrics", headers=server.headers, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(answer.text)
            for s in family.samples}


def total(found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str,
          **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    return sum(value for (n, have), value in found.items()
               if n == name and set(labels.items()) <= set(have))


def message(text: str) -> dict[str, Any]:
    return {"messages": [{"type": "human", "content": text}]}


def test_metrics_move_with_a_pulse_and_need_a_key(server: Server) -> None:
    assert httpx.get(f"{server.url}/metrics").status_code == 401
    before = metrics(server)
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as http:
        thread = http.post("/threads", json={}).json()["thread_id"]
        done = http.post(f"/threads/{thread}/runs/wait",
                         json={"assistant_id": "agent", "input": message("hi")})
        assert done.json()["messages"][-1]["content"] == REPLY
    after = metrics(server)
    assert total(after, "sea_pulses_total", status="ok") == \
        total(before, "sea_pulses_total", status="ok") + 1
    assert total(after, "sea_pulse_duration_seconds_count") == \
        total(before, "sea_pulse_duration_seconds_count") + 1
    assert total(after, "sea_model_calls_total", outcome="ok") == \
        total(before, "sea_model_calls_total", outcome="ok") + 1
    assert total(after, "sea_model_tokens_total", kind="output") > \
        total(before, "sea_model_tokens_total", kind="output")
    assert total(after, "sea_model_tokens_total", kind="input") > \
        total(before, "sea_model_tokens_total", kind="input")
    assert ("sea_model_cost_total", (("model", "scripted"),)) in after
    waits = ("sea_http_requests_total", (("method", "POST"), ("route",
             "/threads/{thread_id}/runs/wait"), ("status", "200")))
    assert after[waits] == before.get(waits, 0) + 1  # by template: no id in a label
    assert total(after, "sea_runs_active") == 0 and total(after, "sea_queue_depth") == 0
    assert total(after, "sea_draining") == 0


def test_open_streams_and_queue_depth_are_gauges(server: Server) -> None:
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as http:
        thread = http.post("/threads", json={}).json()["thread_id"]
        other = http.post("/threads", json={}).json()["thread_id"]  # same persona (aoi)
        with http.stream("POST", f"/threads/{thread}/runs/stream", json={
                "assistant_id": "slow", "input": message("tell me"),
                "stream_mode": ["messages-tuple"]}) as stream:
            lines = stream.iter_lines()
            next(line for line in lines if line.startswith("event: messages"))
            queued = http.post(f"/threads/{other}/runs", json={
                "assistant_id": "agent", "input": message("me too"),
                "multitask_strategy": "enqueue"})
            assert queued.status_code == 200, queued.text
            during = metrics(server)
            assert total(during, "sea_open_streams") == 1
            assert total(during, "sea_runs_active") == 2
            assert total(during, "sea_queue_depth") == 1  # waits for aoi's turn
            for _ in lines:
                pass
        http.get(f"/threads/{other}/runs/{queued.json()['run_id']}/join", timeout=60)
    after = metrics(server)
    assert total(after, "sea_open_streams") == 0
    assert total(after, "sea_runs_active") == 0 and total(after, "sea_queue_depth") == 0


def test_one_log_line_per_request_names_the_route_and_key_never_the_key(
        server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        made = http.post("/threads", json={"metadata": {"note": "secret-body-text"}},
                         headers=server.headers)
        thread = made.json()["thread_id"]
        http.get(f"/threads/{thread}", headers=server.headers)
        http.get(f"/threads/{thread}", headers={"x-api-key": "not-a-key"})
        http.get("/no/such/path?token=abc")
    time.sleep(0.3)
    text = (server.root / "server.log").read_text()
    lines = [line for line in text.splitlines() if "sea.serve.access" in line]
    assert any(re.search(r"POST /threads 200 [\d.]+ms key=dev$", line) for line in lines)
    assert any(re.search(r"GET /threads/\{thread_id\} 200 [\d.]+ms key=dev$", line)
               for line in lines)
    assert any(re.search(r"GET /threads/\{thread_id\} 401 [\d.]+ms key=-$", line)
               for line in lines)
    assert any(re.search(r"GET \(unmatched\) 404 [\d.]+ms key=-$", line) for line in lines)
    logged = "\n".join(lines)  # (the dev token is printed once at start, by design)
    assert server.token not in logged and "not-a-key" not in text
    assert thread not in logged and "secret-body-text" not in text and "token=abc" not in text


# -- SIGTERM ----------------------------------------------------------------------------------


def _stream_in_background(server: Server, assistant: str, found: dict[str, Any]) -> \
        threading.Thread:
    """Stream a new run of ``assistant`` in a thread; ``found`` gets its events (and any
    failure), ``found["first"]`` is set once the first token came."""
    first = found["first"] = threading.Event()

    def go() -> None:
        try:
            with httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as http:
                thread = http.post("/threads", json={}).json()["thread_id"]
                body = []
                with http.stream("POST", f"/threads/{thread}/runs/stream", json={
                        "assistant_id": assistant, "input": message("go on"),
                        "stream_mode": ["messages-tuple", "values"],
                        "stream_resumable": True, "on_disconnect": "continue"}) as response:
                    for chunk in response.iter_text():
                        body.append(chunk)
                        if "event: messages" in chunk:
                            first.set()
                found["events"] = events_of("".join(body))
        except Exception as exc:  # the test reads it
            found["failure"] = exc
        finally:
            first.set()

    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    return worker


def _refused(url: str) -> bool:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return False
    except OSError:
        return True


def test_sigterm_lets_the_running_pulse_end_and_exits_0(tmp_path: Path) -> None:
    server = start_server(tmp_path, "--grace", "30", script=script_of(QUICK_CHUNK_DELAY_S))
    try:
        found: dict[str, Any] = {}
        worker = _stream_in_background(server, "slow", found)
        assert found["first"].wait(30) and "failure" not in found, found
        sent = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert _refused(server.url)  # no new connection is accepted
        assert server.process.wait(30) == 0
        worker.join(10)
        took = time.monotonic() - sent
    finally:
        server.stop()
    assert "failure" not in found, found
    events = found["events"]
    text = "".join(e["data"][0]["content"] for e in events if e["event"] == "messages")
    assert text.replace(" ", "") == LONG.replace(" ", "")  # the whole reply, nothing cut
    assert events[-1]["event"] == "end"
    assert events[-2]["event"] == "values"
    assert events[-2]["data"]["messages"][-1]["content"] == LONG
    assert took < 30
    log = (tmp_path / "server.log").read_text()
    assert "draining (1 run(s) under way" in log and "1 run(s) ended, 0 cancelled" in log
    assert "Traceback" not in log


def test_sigterm_cancels_what_outlives_its_grace_and_tells_open_streams(
        tmp_path: Path) -> None:
    server = start_server(tmp_path, "--grace", "1")  # the slow reply (4 s) outlives the grace
    try:
        found: dict[str, Any] = {}
        worker = _stream_in_background(server, "slow", found)
        assert found["first"].wait(30) and "failure" not in found, found
        inbox: list[str] = []

        def follow_inbox() -> None:
            with httpx.stream("GET", f"{server.url}/v1/approvals/stream",
                              headers=server.headers, timeout=60) as response:
                inbox.extend(response.iter_text())

        watcher = threading.Thread(target=follow_inbox, daemon=True)
        watcher.start()
        time.sleep(0.5)
        sent = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(20) == 0
        took = time.monotonic() - sent
        worker.join(10)
        watcher.join(10)
    finally:
        server.stop()
    assert "failure" not in found, found
    events = found["events"]
    assert events[-1]["event"] == "error"  # the run was cut, and the client is told why
    assert events[-1]["data"]["error"] == "SEA850"
    assert "grace period" in events[-1]["data"]["message"]
    assert [e["event"] for e in events].count("metadata") == 1
    told = events_of("".join(inbox))
    assert told[0]["event"] == "inbox" and told[-1]["event"] == "shutdown"
    assert told[-1]["id"] is None and told[-1]["data"]["code"] == "SEA850"
    assert took < 15
    log = (tmp_path / "server.log").read_text()
    assert "0 run(s) ended, 1 cancelled, 1 stream(s) closed" in log


class _Caller:
    """Calls an ASGI app as a server does; the client stays connected until ``leave``."""

    def __init__(self, app: Any) -> None:
        import anyio

        self.app = app
        self.gone = anyio.Event()

    async def get(self, path: str, sent: list[dict[str, Any]]) -> None:
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
                 "query_string": b"", "root_path": "", "headers": [(b"host", b"test")],
                 "server": ("test", 80), "client": ("127.0.0.1", 1)}
        requested = False

        async def receive() -> dict[str, Any]:
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await self.gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await self.app(scope, receive, send)


def _endless_app(stopped: list[bool]) -> Any:
    """An app with an endless SSE stream (``stopped`` gets True when its work stops)."""
    import anyio
    from fastapi import FastAPI
    from fastapi.responses import StreamingResponse

    app = FastAPI()

    @app.get("/forever")
    async def forever() -> StreamingResponse:
        async def body() -> Any:
            try:
                yield b"id: 1\nevent: tick\ndata: 1\n\n"
                await anyio.sleep(3600)
            finally:
                stopped.append(True)

        return StreamingResponse(body(), media_type="text/event-stream")

    @app.get("/ok")
    async def ok() -> dict[str, bool]:
        return {"ok": True}

    return app


def test_a_request_during_the_drain_is_refused_and_open_streams_are_ended() -> None:
    """In process, around a small app of our own: once the drain began, a request (one
    that arrives on a connection opened before) answers 503 SEA850; an open stream gets
    its last event and ends, and the app's work for it stops."""
    import anyio

    from sea.serve import ops
    from sea.serve.metrics import ServerMetrics

    stopped: list[bool] = []
    app = _endless_app(stopped)
    state = ops.Operations(ServerMetrics())
    app.add_middleware(ops.OpsMiddleware, ops=state)
    caller = _Caller(app.build_middleware_stack())

    async def go() -> None:
        streamed: list[dict[str, Any]] = []
        async with anyio.create_task_group() as group:
            group.start_soon(caller.get, "/forever", streamed)
            with anyio.fail_after(10):
                while not any(b"tick" in m.get("body", b"") for m in streamed):
                    await anyio.sleep(0.01)
            assert len(state.streams) == 1
            assert state.metrics.open_streams._value.get() == 1
            state.drain()
            assert await state.end_streams() == 1
            with anyio.fail_after(10):
                while state.streams:
                    await anyio.sleep(0.01)
            caller.gone.set()
        last = streamed[-1]
        assert last["type"] == "http.response.body" and not last.get("more_body")
        told = events_of(last["body"].decode())
        assert [e["event"] for e in told] == ["shutdown"] and told[0]["id"] is None
        assert stopped == [True]  # the app's work for the stream stopped
        assert state.metrics.open_streams._value.get() == 0
        refused: list[dict[str, Any]] = []
        await caller.get("/ok", refused)
        assert refused[0]["status"] == 503
        assert (b"connection", b"close") in refused[0]["headers"]
        assert orjson.loads(refused[1]["body"])["error"]["code"] == "SEA850"

    anyio.run(go)


def test_the_server_tables_take_turns_with_the_sqlite_store_in_process(tmp_path: Path) -> None:
    """Given the store's connection lock, a write to the server's tables waits for the
    store's work in this process (not for SQLite's busy handler's sleeps)."""
    from saimemory.sqlite import SQLiteStore
    from sea.serve.db import ServerDB

    path = tmp_path / "memory.sqlite"
    store = SQLiteStore(path)
    db = ServerDB(str(path), share_lock=store.connection_lock)
    done = threading.Event()

    def write() -> None:
        db.execute("CREATE TABLE IF NOT EXISTS probe (x)")
        done.set()

    try:
        with store.connection_lock:  # the store at work
            writer = threading.Thread(target=write)
            writer.start()
            assert not done.wait(0.3)
        assert done.wait(5)
        writer.join()
        assert ServerDB(str(path), share_lock=None)._lock is not store.connection_lock
    finally:
        db.close()
        store.close()



def test_a_sigterm_as_soon_as_it_says_it_listens_is_a_drain(tmp_path: Path) -> None:
    """The server says it listens once its signal handlers are in place: a SIGTERM sent the
    moment that line is read drains and exits 0 (it was a plain kill, -15, while uvicorn was
    still starting). Three servers at once, each signalled by a thread of its own."""
    roots = [tmp_path / str(attempt) for attempt in range(3)]
    with ThreadPoolExecutor(len(roots)) as pool:
        list(pool.map(_sigterm_once_it_listens, roots))  # raises what an attempt raised


def _sigterm_once_it_listens(root: Path) -> None:
    """Start a server in ``root`` and send it SIGTERM as soon as it says it listens."""
    root.mkdir()
    command, env = serve_command(root)
    process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        said = ""
        while "listening on" not in said:
            line = process.stderr.readline()
            assert line, f"sea serve ended before it listened: {said}"
            said += line
        process.send_signal(signal.SIGTERM)
        rest = process.stderr.read()
        assert process.wait(30) == 0, said + rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "Traceback" not in said + rest
