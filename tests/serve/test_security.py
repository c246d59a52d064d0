"""The server's request guards: where it may listen, the Host check, CORS (with Private
Network Access), the body limit and the time limit; every refusal in SEA's error body."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse
from fastapi.testclient import TestClient

from sea.errors import BindRefusedError, SecurityOptionError
from sea.serve.security import (
    SecurityOptions,
    check_bind,
    host_name,
    install,
    is_loopback,
    served_hosts,
)

URL = "http://127.0.0.1:2024"
ORIGIN = "http://localhost:3000"


def guarded(**options: Any) -> tuple[TestClient, list[str]]:
    """An app with a few routes behind the guards, and the list of routes that ran."""
    app = FastAPI()
    ran: list[str] = []

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, int]:
        body = await request.body()
        ran.append("echo")
        return {"bytes": len(body)}

    @app.get("/slow")
    async def slow(seconds: float = 5) -> dict[str, bool]:
        await anyio.sleep(seconds)
        ran.append("slow")
        return {"done": True}

    @app.get("/threads/t1/runs/r1/wait")
    async def wait() -> dict[str, bool]:
        await anyio.sleep(0.4)
        return {"waited": True}

    @app.get("/feed")
    async def events() -> StreamingResponse:
        async def lines() -> AsyncIterator[bytes]:
            for number in range(4):
                await anyio.sleep(0.15)
                yield f"id: {number}\ndata: {number}\n\n".encode()

        return StreamingResponse(lines(), media_type="text/event-stream")

    install(app, SecurityOptions(**options))
    return TestClient(app, base_url=URL, raise_server_exceptions=False), ran


def error_code(answer: Any) -> str:
    body = answer.json()
    assert body["detail"] == body["error"]["message"]
    return str(body["error"]["code"])


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"])
def test_loopback_addresses_need_no_key(host: str) -> None:
    assert is_loopback(host)
    check_bind(host, has_keys=False)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "sea.example.com"])
def test_a_reachable_address_needs_a_key(host: str) -> None:
    with pytest.raises(BindRefusedError, match="sea keys add NAME") as caught:
        check_bind(host, has_keys=False)
    assert caught.value.code == "SEA870"
    check_bind(host, has_keys=True)


def test_the_server_s_connections_send_without_waiting_for_acknowledgements() -> None:
    """The listening socket says it is TCP, so asyncio turns Nagle's algorithm off on each
    connection: a response's small writes are not held for the client's delayed
    acknowledgement (about 40 ms a request)."""
    from sea.cli.serve import _bind

    async def nodelay_of_a_connection() -> int:
        sock = _bind("127.0.0.1", 0)
        found: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def accepted(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            connection = writer.get_extra_info("socket")
            found.set_result(connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        async with await asyncio.start_server(accepted, sock=sock):
            _, client = await asyncio.open_connection(*sock.getsockname()[:2])
            try:
                return await asyncio.wait_for(found, 30)
            finally:
                client.close()

    assert asyncio.run(nodelay_of_a_connection()) != 0


@pytest.mark.parametrize(("header", "name"), [
    ("127.0.0.1:2024", "127.0.0.1"), ("LOCALHOST", "localhost"), ("[::1]:2024", "::1"),
    ("sea.example.com", "sea.example.com"), ("[::1", ""),
])
def test_the_name_of_a_host_header(header: str, name: str) -> None:
    assert host_name(header) == name


def test_only_loopback_names_and_the_names_given_are_answered() -> None:
    client, _ = guarded(hosts=("sea.example.com", "*.example.org"))
    for host in ("127.0.0.1:2024", "localhost:2024", "[::1]:2024", "localhost",
                 "sea.example.com", "api.example.org:443"):
        answer = client.post("/echo", content=b"x", headers={"host": host})
        assert answer.status_code == 200, host
    for host in ("evil.example.net", "127.0.0.1.evil.net", "example.org", "sea.example.com.evil"):
        answer = client.post("/echo", content=b"x", headers={"host": host})
        assert answer.status_code == 400, host
        assert error_code(answer) == "SEA871" and "--allow-host" in answer.json()["error"]["hint"]


def test_the_listening_address_is_answered_unless_it_is_every_address() -> None:
    assert served_hosts("192.168.1.5", ["sea.lan"]) == ("sea.lan", "192.168.1.5")
    assert served_hosts("0.0.0.0", ["sea.lan"]) == ("sea.lan",)
    assert served_hosts("::") == ()
    assert served_hosts("[fd00::5]") == ("fd00::5",)
    client, _ = guarded(hosts=served_hosts("192.168.1.5"))
    assert client.post("/echo", content=b"x",
                       headers={"host": "192.168.1.5:2024"}).status_code == 200


def test_a_star_host_answers_every_name() -> None:
    client, _ = guarded(hosts=("*",))
    assert client.post("/echo", content=b"x", headers={"host": "anything.net"}).status_code == 200


def test_no_cors_without_origins() -> None:
    client, _ = guarded()
    answer = client.post("/echo", content=b"x", headers={"origin": ORIGIN})
    assert "access-control-allow-origin" not in answer.headers
    preflight = client.options("/echo", headers={
        "origin": ORIGIN, "access-control-request-method": "POST"})
    assert "access-control-allow-origin" not in preflight.headers


def test_cors_for_the_origins_given() -> None:
    client, _ = guarded(cors_origins=(ORIGIN,))
    preflight = client.options("/echo", headers={
        "origin": ORIGIN, "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, x-api-key, content-type, last-event-id",
        "access-control-request-private-network": "true"})
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == ORIGIN
    assert preflight.headers["access-control-allow-private-network"] == "true"
    allowed = preflight.headers["access-control-allow-headers"].lower()
    assert all(name in allowed for name in ("authorization", "x-api-key", "last-event-id"))
    simple = client.post("/echo", content=b"x", headers={"origin": ORIGIN})
    assert simple.headers["access-control-allow-origin"] == ORIGIN
    assert simple.headers["access-control-expose-headers"] == "content-location, location"
    assert "access-control-allow-credentials" not in simple.headers


def test_an_origin_given_in_capitals_matches_what_browsers_send() -> None:
    client, _ = guarded(cors_origins=("http://LocalHost:3000",))
    simple = client.post("/echo", content=b"x", headers={"origin": ORIGIN})
    assert simple.headers["access-control-allow-origin"] == ORIGIN


def test_cors_refuses_other_origins() -> None:
    client, _ = guarded(cors_origins=(ORIGIN,))
    preflight = client.options("/echo", headers={
        "origin": "http://evil.example", "access-control-request-method": "POST"})
    assert preflight.status_code == 400
    assert "access-control-allow-origin" not in preflight.headers
    simple = client.post("/echo", content=b"x", headers={"origin": "http://evil.example"})
    assert "access-control-allow-origin" not in simple.headers


@pytest.mark.parametrize("options", [
    {"cors_origins": ("localhost:3000",)}, {"cors_origins": ("http://a.example/path",)},
    {"hosts": ("",)}, {"hosts": ("a b",)}, {"max_body_bytes": 0}, {"timeout": -1},
])
def test_malformed_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(SecurityOptionError) as caught:
        SecurityOptions(**options)
    assert caught.value.code == "SEA874"


def test_a_body_over_the_limit_is_413_by_its_length() -> None:
    client, ran = guarded(max_body_bytes=100, cors_origins=(ORIGIN,))
    assert client.post("/echo", content=b"x" * 100).json() == {"bytes": 100}
    answer = client.post("/echo", content=b"x" * 101, headers={"origin": ORIGIN})
    assert answer.status_code == 413 and error_code(answer) == "SEA872"
    assert answer.headers["access-control-allow-origin"] == ORIGIN  # a browser may read it
    assert ran == ["echo"]


def test_a_body_without_a_length_is_counted_as_it_arrives() -> None:
    client, ran = guarded(max_body_bytes=100)

    def chunks(total: int) -> Iterator[bytes]:
        for _ in range(total // 10):
            yield b"x" * 10

    assert client.post("/echo", content=chunks(100)).json() == {"bytes": 100}
    answer = client.post("/echo", content=chunks(200))
    assert answer.status_code == 413 and error_code(answer) == "SEA872"
    assert ran == ["echo"]


def test_the_default_body_limit_is_one_mebibyte() -> None:
    client, _ = guarded()
    assert client.post("/echo", content=b"x" * (1 << 20)).status_code == 200
    assert client.post("/echo", content=b"x" * ((1 << 20) + 1)).status_code == 413


def test_a_slow_request_is_cut_with_503() -> None:
    client, ran = guarded(timeout=0.2)
    answer = client.get("/slow")
    assert answer.status_code == 503 and error_code(answer) == "SEA873"
    assert "within 0.2 s" in answer.json()["detail"]
    assert ran == []


def test_streams_and_waits_are_not_timed() -> None:
    client, _ = guarded(timeout=0.2)
    assert client.get("/threads/t1/runs/r1/wait").json() == {"waited": True}
    with client.stream("GET", "/feed") as stream:
        text = "".join(stream.iter_text())
    assert text.count("data:") == 4  # 0.6 s in all, past the limit, not cut
    asking = client.get("/slow?seconds=0.4", headers={"accept": "text/event-stream"})
    assert asking.status_code == 200


def test_no_time_limit_when_it_is_zero() -> None:
    client, _ = guarded(timeout=0, untimed_paths=())
    assert client.get("/threads/t1/runs/r1/wait").status_code == 200


def test_the_serve_command_s_guard_options() -> None:
    import argparse

    from sea.cli import _guards
    from sea.serve import security

    assert (_guards.DEFAULT_MAX_BODY, _guards.DEFAULT_TIMEOUT) == (
        security.DEFAULT_MAX_BODY, security.DEFAULT_TIMEOUT)
    parser = argparse.ArgumentParser()
    _guards.add_guard_arguments(parser)
    args = parser.parse_args(["--allow-host", "sea.lan", "--cors-origin", ORIGIN,
                              "--max-body", "2048", "--request-timeout", "5"])
    assert _guards.guard_options(args, "10.0.0.2") == SecurityOptions(
        hosts=("sea.lan", "10.0.0.2"), cors_origins=(ORIGIN,), max_body_bytes=2048, timeout=5.0)
    defaults = _guards.guard_options(parser.parse_args([]), "127.0.0.1")
    assert defaults == SecurityOptions(hosts=("127.0.0.1",))
    with pytest.raises(SecurityOptionError, match="not an origin"):
        _guards.guard_options(parser.parse_args(["--cors-origin", "localhost:3000"]), "::1")
