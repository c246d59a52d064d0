"""``sea lsp``: serve the playbook language to an editor over stdio (Language Server
Protocol).

The library and the tools are those of ``sea validate``: the ``--playbooks`` directories
(and each open file's directory, then the bundled playbooks), the ``--tools`` catalogues
and modules and the ``--mcp`` servers' tools, from the flags, ``SEA_*`` variables or the
project file. Needs the ``lsp`` extra (pygls).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``lsp`` subcommand."""
    parser = subparsers.add_parser(
        "lsp",
        help="serve the playbook language to an editor (Language Server Protocol, stdio)",
        description="Run a language server on stdin and stdout: diagnostics as sea validate "
        "reports them, completion, hover, go to definition, references, rename, quick fixes "
        "and the outline of playbook files. Editors start it themselves (see the editors "
        "guide in the documentation).",
    )
    parser.add_argument(
        "--playbooks", action="append", default=[], metavar="DIR",
        help="directory searched for called playbooks before the open files' directories "
        "and the bundled ones (repeatable)",
    )
    parser.add_argument(
        "--tools", action="append", default=[], metavar="SOURCE",
        help="the host's tools, as for sea validate: a JSON tool catalogue (FILE.json) or a "
        "Python module (MODULE[:ATTR]) (repeatable)",
    )
    parser.add_argument(
        "--mcp", action="append", default=[], metavar="CONFIG.json",
        help="the tools of the MCP servers CONFIG.json names (as for sea validate) "
        "(repeatable)",
    )
    parser.add_argument(
        "--strict", action="store_true",
        help="without --tools, only the built-in tools are known (as for sea validate)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``sea lsp``: serve until the editor says exit.

    Raises:
        UsageError: pygls is not installed (the ``lsp`` extra), or a tool source is invalid.
    """
    from sea.errors import UsageError

    try:
        import pygls  # noqa: F401
    except ImportError:
        raise UsageError("sea lsp needs the `lsp` extra: pip install 'sea-runtime[lsp]'") from None
    from sea.cli.validate import _catalogue
    from sea.lsp import Workspace, build

    tools = _catalogue(args.tools, args.mcp, args.strict)
    workspace = Workspace([Path(d) for d in args.playbooks or []], tools)
    # The protocol has stdout to itself (copies of the descriptors, which the server closes
    # when the editor says exit); a stray print goes to stderr.
    stdin, stdout = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    sys.stdout = sys.stderr
    build(workspace).start_io(stdin, stdout)
    return 0
