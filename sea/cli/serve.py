"""``sea serve``: SEA as an HTTP/SSE server (the ``serve`` extra).

The LangGraph-compatible API at the root (so ``langgraph_sdk`` and agent-chat-ui work
unchanged), SEA's own API under ``/v1``; the OpenAPI document at ``/openapi.json``. The
server takes the options ``sea run`` takes (store, models, playbooks, tools, workspace,
budgets, limits) and the project file's settings; its runtime is built by the same builder
as ``sea run``'s. Without API keys it binds to loopback only and accepts one token, printed
at start (and written to ``--token-file``).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import os
import secrets
import socket
import sys
from pathlib import Path
from typing import Any

from sea.cli._numbers import seconds
from sea.errors import UsageError

DEFAULT_PORT = 2024
"""LangGraph's dev port: agent-chat-ui's defaults reach SEA unchanged."""


def register(subparsers: Any) -> None:
    """Add ``sea serve``."""
    from sea.cli.run import DEFAULT_PLAYBOOK, add_busy_arguments, add_model_arguments

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve", help="serve pulses over HTTP/SSE (LangGraph-compatible API and /v1)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: 127.0.0.1; loopback only "
                        "until API keys exist)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port (default: {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--playbook", default=DEFAULT_PLAYBOOK,
                        help=f"the default playbook, the `agent` assistant (default: "
                        f"{DEFAULT_PLAYBOOK})")
    parser.add_argument("--persona", help="the default persona of new conversations "
                        "(default: the bundled persona, aoi)")
    parser.add_argument("--persona-file", help="JSON file with id, name and system_prompt")
    parser.add_argument("--token-file", metavar="FILE",
                        help="also write the server's token to FILE (mode 0600)")
    parser.add_argument("--grace", type=seconds, default=30.0, metavar="SECONDS",
                        help="on SIGTERM: seconds the running pulses get to end before "
                        "they are cancelled (default: 30)")
    parser.add_argument("--no-access-log", dest="access_log", action="store_false",
                        help="no log line per request")
    parser.add_argument("--keepalive", type=seconds, default=15.0, metavar="SECONDS",
                        help="seconds between keep-alive comments on a quiet stream "
                        "(default: 15)")
    add_model_arguments(parser)
    add_busy_arguments(parser)
    parser.set_defaults(func=serve_command)


def serve_command(args: argparse.Namespace) -> int:
    """Run ``sea serve`` until interrupted."""
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise UsageError("sea serve needs the serve extra: pip install 'sea[serve]'") from None
    _check_host(args.host)
    return asyncio.run(_serve(args))  # uvicorn stops on SIGINT/SIGTERM, ending the runs


def _check_host(host: str) -> None:
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise UsageError(f"--host {host}: without API keys the server listens on loopback "
                         "only (127.0.0.1, ::1, localhost)")


async def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from sea import __version__
    from sea.cli._setup import load_persona, store_location
    from sea.cli._toolsources import host_tools
    from sea.cli.run import models_of, playbook_library, runtime_of, writable_store
    from sea.serve.app import create_app
    from sea.serve.context import DEFAULT_TENANT, ServeContext, ServerSettings
    from sea.serve.db import ServerDB
    from sea.serve.drain import Drain, DrainingServer
    from sea.serve.eventlog import MemoryEventLog
    from sea.serve.records import PersonaRow

    library, name = playbook_library(args.playbook, args.playbooks)
    library.get(name)  # a missing or invalid default playbook fails before anything runs
    persona = load_persona(args.persona_file, args.persona)
    models = models_of(args)
    location = store_location(args.db)
    token = secrets.token_urlsafe(24)
    async with host_tools(args.tools, args.mcp) as tools:
        store = writable_store(location)
        db = ServerDB(location, share_lock=getattr(store, "connection_lock", None))
        try:
            runtime = runtime_of(args, store, models, library, location, tools=tools)
            settings = ServerSettings(default_playbook=name, default_persona=persona,
                                      keepalive_s=args.keepalive, version=__version__)
            ctx = ServeContext(runtime, store, db, library, MemoryEventLog(), settings)
            ctx.records.ensure_persona(PersonaRow(persona.id, DEFAULT_TENANT, persona.name,
                                                  persona.system_prompt))
            app = create_app(ctx, token=token)
            sock = _bind(args.host, args.port)
            port = sock.getsockname()[1]
            _announce(args, port, token)
            _log_to_stderr(args.access_log)
            config = uvicorn.Config(app, log_level="warning", lifespan="on",
                                    timeout_graceful_shutdown=5)
            drain = Drain(ctx.hub, app.state.ops, args.grace)
            await DrainingServer(config, drain).serve(sockets=[sock])
        finally:
            db.close()
            store.close()
    return 0


def _log_to_stderr(access_log: bool) -> None:
    """The server's log (``sea.serve``: a line per request, the drain, failures) to
    stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    logger = logging.getLogger("sea.serve")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logging.getLogger("sea.serve.access").setLevel(logging.INFO if access_log
                                                   else logging.WARNING)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def _announce(args: argparse.Namespace, port: int, token: str) -> None:
    if args.token_file:
        path = Path(args.token_file)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(token + "\n")
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"sea serve: listening on http://{host}:{port}", file=sys.stderr)
    print(f"sea serve: token (send as x-api-key or Authorization: Bearer): {token}",
          file=sys.stderr, flush=True)
