"""The request guards' options of ``sea serve`` (``--allow-host``, ``--cors-origin``,
``--max-body``, ``--request-timeout``) and the settings they make
(:class:`sea.serve.security.SecurityOptions`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from sea.cli._numbers import positive_count, seconds

if TYPE_CHECKING:
    from sea.serve.security import SecurityOptions

DEFAULT_MAX_BODY = 1024 * 1024  # sea.serve.security.DEFAULT_MAX_BODY, without importing it
DEFAULT_TIMEOUT = 60.0


def add_guard_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the guards' options to ``sea serve``'s parser."""
    parser.add_argument(
        "--allow-host", action="append", default=[], metavar="NAME",
        help="a host name clients call the server by, besides localhost and the address it "
        "listens on (repeatable; *.example.com for a domain, * for any: behind a proxy "
        "that checks it); other Host headers are refused, against DNS rebinding")
    parser.add_argument(
        "--cors-origin", action="append", default=[], metavar="ORIGIN",
        help="a browser origin allowed to call the server, e.g. http://localhost:3000 "
        "(repeatable; default: none, no CORS)")
    parser.add_argument(
        "--max-body", type=positive_count, default=DEFAULT_MAX_BODY, metavar="BYTES",
        help=f"the largest request body accepted (default: {DEFAULT_MAX_BODY}, 1 MiB)")
    parser.add_argument(
        "--request-timeout", type=seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
        help=f"how long a request that neither streams nor waits may take (default: "
        f"{DEFAULT_TIMEOUT:g}; 0: no limit)")


def guard_options(args: argparse.Namespace, host: str) -> SecurityOptions:
    """The guards' settings from the parsed options and the address the server listens on.

    Raises:
        SecurityOptionError: a malformed origin or host name.
    """
    from sea.serve.security import SecurityOptions, served_hosts

    return SecurityOptions(hosts=served_hosts(host, args.allow_host),
                           cors_origins=tuple(args.cors_origin),
                           max_body_bytes=int(args.max_body), timeout=float(args.request_timeout))
