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
import logging
import os
import socket
import sys
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sea.cli._flags import Renamed
from sea.cli._guards import add_guard_arguments
from sea.cli._numbers import seconds
from sea.errors import UsageError

if TYPE_CHECKING:
    from fastapi import FastAPI
    from langchain_core.tools import BaseTool

    from saimemory.records import Persona
    from sea.cli._runtime import RuntimeArgs
    from sea.host.config import RuntimeConfig
    from sea.serve.auth import Auth
    from sea.serve.context import ServeContext
    from sea.serve.db import ServerDB
    from sea.serve.security import SecurityOptions

DEFAULT_PORT = 2024
"""LangGraph's dev port: agent-chat-ui's defaults reach SEA unchanged."""


def register(subparsers: Any) -> None:
    """Add ``sea serve``."""
    from sea.cli.run import (
        DEFAULT_PLAYBOOK,
        add_busy_arguments,
        add_model_arguments,
        add_preempted_argument,
    )

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve", help="serve pulses over HTTP/SSE (LangGraph-compatible API and /v1)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: 127.0.0.1; loopback only "
                        "until API keys exist: sea keys add)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port (default: {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("playbook", nargs="?", default=DEFAULT_PLAYBOOK, metavar="PLAYBOOK",
                        help=f"the default playbook, the `agent` assistant (default: "
                        f"{DEFAULT_PLAYBOOK})")
    parser.add_argument("--playbook", action=Renamed, new="PLAYBOOK (the first argument)",
                        dest="playbook", default=argparse.SUPPRESS, metavar="PLAYBOOK")
    parser.add_argument("--persona", help="the default persona of new conversations "
                        "(default: the bundled persona, aoi)")
    parser.add_argument("--persona-file", help="JSON file with id, name and system_prompt")
    parser.add_argument("--token-file", metavar="FILE",
                        help="also write the dev token to FILE (mode 0600; dev mode only: "
                        "a store without API keys)")
    parser.add_argument("--grace", type=seconds, default=30.0, metavar="SECONDS",
                        help="on SIGTERM: seconds the running pulses get to end before "
                        "they are cancelled (default: 30)")
    parser.add_argument("--no-access-log", dest="access_log", action="store_false",
                        help="no log line per request")
    parser.add_argument("--keepalive", type=seconds, default=15.0, metavar="SECONDS",
                        help="seconds between keep-alive comments on a quiet stream "
                        "(default: 15)")
    parser.add_argument("--workers", action="store_true",
                        help="queue pulses for `sea worker` processes instead of running "
                        "them here (needs a PostgreSQL store)")
    parser.add_argument("--log-ttl", type=seconds, default=900.0, metavar="SECONDS",
                        help="how long a run's events stay after its end, for streams that "
                        "rejoin (default: 900)")
    parser.add_argument("--traces", metavar="DIR",
                        help="directory of recorded traces (sea run --record) the studio's "
                        "regression page replays against the playbooks as they are now")
    parser.add_argument("--evals", metavar="DIR",
                        help="directory of the runs sea eval stored, the studio's Evals page "
                        "shows (default: the project's [eval] runs, else .sea/evals beside "
                        "the project file)")
    add_model_arguments(parser)
    add_busy_arguments(parser)
    add_preempted_argument(parser)
    add_guard_arguments(parser)
    parser.set_defaults(func=serve_command)


def serve_command(args: argparse.Namespace) -> int:
    """Run ``sea serve`` until interrupted."""
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise UsageError("sea serve needs the serve extra: pip install 'sea[serve]'") from None
    return asyncio.run(_serve(args))  # uvicorn stops on SIGINT/SIGTERM, ending the runs


async def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from sea.cli._guards import guard_options
    from sea.cli._runtime import runtime_args
    from sea.cli._setup import load_persona
    from sea.cli._toolsources import host_tools
    from sea.cli.run import playbook_library, writable_store
    from sea.serve.auth import auth_for
    from sea.serve.db import ServerDB
    from sea.serve.drain import Drain, DrainingServer
    from sea.serve.keys import KeyStore
    from sea.serve.security import check_bind

    library, name = playbook_library(args.playbook, args.playbooks)
    library.get(name)  # a missing or invalid default playbook fails before anything runs
    persona = load_persona(args.persona_file, args.persona)
    setup = runtime_args(args, library)
    guards = guard_options(args, args.host)
    if args.traces is not None and not Path(args.traces).expanduser().is_dir():
        raise UsageError(f"--traces {args.traces}: not a directory")
    evals = evals_directory(args)
    async with host_tools(args.tools, args.mcp) as tools, AsyncExitStack() as stack:
        store = writable_store(setup.location)
        db = ServerDB(setup.location, share_lock=getattr(store, "connection_lock", None))
        try:
            auth, token = auth_for(KeyStore(db))
            check_bind(args.host, token is None)  # no keys: loopback only
            ctx = await _context(args, stack, setup, setup.config(store, tools=tools), db,
                                 name, persona)
            app = _app(args, ctx, auth, guards, tools, evals)
            sock = _bind(args.host, args.port)
            _log_to_stderr(args.access_log)
            config = uvicorn.Config(app, log_level="warning", lifespan="on",
                                    timeout_graceful_shutdown=5)
            drain = Drain(ctx.hub, app.state.ops, args.grace)
            port = sock.getsockname()[1]
            await DrainingServer(config, drain, lambda: _announce(args, port, token)).serve(
                sockets=[sock])
        finally:
            setup.flush_telemetry()  # --otel: what the exporter still holds
            db.close()
            store.close()
    return 0


async def _context(args: argparse.Namespace, stack: AsyncExitStack, setup: RuntimeArgs,
                   config: RuntimeConfig, db: ServerDB, playbook: str,
                   persona: Persona) -> ServeContext:
    """The server's parts: the runtime of ``config``, the event log and hub for its store
    (:func:`sea.serve.fleet.fleet_parts`), the default persona's row."""
    from sea import __version__
    from sea.host.runtime import Runtime
    from sea.serve.context import DEFAULT_TENANT, ServeContext, ServerSettings
    from sea.serve.fleet import fleet_parts
    from sea.serve.records import PersonaRow, settle_orphans

    settings = ServerSettings(default_playbook=playbook, default_persona=persona,
                              keepalive_s=args.keepalive, version=__version__)
    parts = await stack.enter_async_context(
        fleet_parts(setup.location, db, workers=args.workers, log_ttl_s=args.log_ttl))
    ctx = ServeContext(Runtime(config), config.store, db, setup.library, parts.log, settings,
                       make_hub=parts.make_hub)
    ctx.records.ensure_persona(PersonaRow(persona.id, DEFAULT_TENANT, persona.name,
                                          persona.system_prompt))
    if db.backend == "sqlite":  # one process runs this database's pulses
        settle_orphans(ctx.records)
    return ctx


def evals_directory(args: argparse.Namespace) -> Path | None:
    """Where the studio finds eval runs: ``--evals`` (or the project's ``eval.runs``), else
    ``.sea/evals`` beside the project file (where ``sea eval`` stores them), else none.

    Raises:
        UsageError: ``--evals`` names something that is not a directory.
    """
    from sea.cli._project.load import project_file

    if args.evals is not None:
        path = Path(args.evals).expanduser()
        if path.exists() and not path.is_dir():
            raise UsageError(f"--evals {args.evals}: not a directory")
        return path
    project = project_file(getattr(args, "project", None), getattr(args, "no_project", False),
                           os.environ, Path.cwd())
    return None if project is None else project.parent / ".sea" / "evals"


def _app(args: argparse.Namespace, ctx: ServeContext, auth: Auth,
         guards: SecurityOptions, tools: Sequence[BaseTool], evals: Path | None) -> FastAPI:
    """The app of ``ctx``, with the request guards, the tools ``/v1/validate`` knows and
    the eval runs directory."""
    from sea.serve.app import create_app
    from sea.serve.v1.common import V1Options

    app = create_app(ctx, auth=auth, security=guards)
    app.state.v1 = V1Options.of(args.workspace, tools if args.tools or args.mcp else None,
                                args.traces, evals)
    return app


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
    """The listening socket. Its protocol is named (TCP): asyncio turns Nagle's algorithm off
    (``TCP_NODELAY``) only on the connections of a socket that says it is TCP; with it on,
    a response written in two parts (headers, body) or a stream's small events waited for
    the client's delayed acknowledgement, about 40 ms each."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def _announce(args: argparse.Namespace, port: int, token: str | None) -> None:
    from sea.serve.auth import dev_banner

    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{port}"
    print(f"sea serve: listening on {url}", file=sys.stderr)
    if token is None:
        if args.token_file:
            print("sea serve: warning: --token-file is for dev mode only; the store holds "
                  "API keys, so no token was made", file=sys.stderr)
        print("sea serve: requests need an API key (sea keys list)", file=sys.stderr,
              flush=True)
        return
    if args.token_file:
        path = Path(args.token_file)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(token + "\n")
    print(dev_banner(token, url), file=sys.stderr, flush=True)
