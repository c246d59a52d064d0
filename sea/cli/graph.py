"""``sea graph PLAYBOOK``: print a playbook as Mermaid flowchart text."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sea.cli._flags import Renamed


def register(subparsers: Any) -> None:
    """Add the ``graph`` subcommand."""
    parser = subparsers.add_parser(
        "graph",
        help="print a playbook as a Mermaid flowchart",
        description="Print a playbook (a file, or a name looked up in the --playbooks "
        "directories and the bundled playbooks) as Mermaid text.",
    )
    parser.add_argument("playbook", metavar="PLAYBOOK",
                        help="playbook name or file (NAME.json)")
    parser.add_argument(
        "--playbooks", action="append", default=[], metavar="DIR",
        help="directory searched for playbooks before the bundled ones (repeatable)",
    )
    parser.add_argument("--dir", action=Renamed, new="--playbooks", append=True,
                        dest="playbooks", metavar="DIR")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``sea graph``."""
    from sea.cli._text import printable
    from sea.errors import PlaybookError
    from sea.lang.library import PlaybookLibrary
    from sea.lang.loader import load_playbook_file
    from sea.lang.render import to_mermaid

    target = Path(args.playbook)
    try:
        if target.suffix == ".json" or target.exists():
            playbook = load_playbook_file(target)
        else:
            playbook = PlaybookLibrary.bundled([Path(d) for d in args.playbooks]).get(args.playbook)
    except PlaybookError as exc:
        for diagnostic in exc.diagnostics:
            print(printable(diagnostic.format_human()), file=sys.stderr)
        return 2 if isinstance(exc, LookupError) else 1  # a file that does not exist: 2
    sys.stdout.write(to_mermaid(playbook))
    return 0
