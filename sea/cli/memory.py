"""``sea memory``: read and move a persona's SAIMemory from the command line.

The store is given by ``--db`` (a SQLite file path or a ``postgresql://`` DSN), else by the
``SEA_DB`` environment variable, else it is the file ``sea run`` uses by default. What the
store holds is printed with its control characters made visible (``--json`` prints JSON).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from saimemory import MemoryStoreError, Message, MessageStore
from saimemory.errors import ImportFormatError
from saimemory.jsonl import export_jsonl, import_jsonl, message_fields
from sea.cli._filelimits import file_limit
from sea.cli._setup import DEFAULT_PERSONA, add_db_argument, opened_store
from sea.cli._text import printable
from sea.errors import SeaError, UsageError
from sea.jsonfile import MEMORY_IMPORTS, bounded_lines, regular_lines

PREVIEW_CHARS = 200


def register(subparsers: Any) -> None:
    """Add ``sea memory`` and its subcommands."""
    parser = subparsers.add_parser("memory", help="inspect, search, export and import SAIMemory")
    sub = parser.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    recent = _command(sub, "recent", "newest messages of a persona", _recent, aliases=["list"])
    recent.add_argument("--limit", type=int, default=20, help="how many (default 20)")
    recent.add_argument("--thread", help="only this thread (default: all threads)")
    pulse = _command(sub, "pulse", "every message one pulse wrote, in order", _pulse)
    pulse.add_argument("pulse_id", metavar="PULSE_ID", help="the pulse id")
    search = _command(sub, "search", "full-text search (Japanese and English)", _search)
    search.add_argument("query", metavar="QUERY", help="words to find (all required, unless --any)")
    search.add_argument("--any", action="store_const", const="any", default="all",
                        dest="match", help="natural-language query: one word suffices, "
                        "punctuation around words is ignored, rare words rank first")
    search.add_argument("--tag", action="append", default=[], help="required tag (repeatable)")
    search.add_argument("--since", help="ISO 8601 time, inclusive")
    search.add_argument("--until", help="ISO 8601 time, exclusive")
    search.add_argument("--limit", type=int, default=20, help="how many hits (default 20)")
    export = _command(sub, "export", "write a persona's messages as JSON lines", _export,
                      json_flag=False)
    export.add_argument("--output", "-o", default="-", help="file to write (default: stdout)")
    imp = _command(sub, "import", "add the messages of a JSON-lines export the store lacks",
                   _import,
                   json_flag=False, persona_required=False)
    imp.add_argument("file", metavar="FILE",
                     help="export file ('-' for stdin), read a line at a time (at "
                     f"most {MEMORY_IMPORTS.max_bytes // 2**30} GiB; ${MEMORY_IMPORTS.setting} "
                     "raises it)")
    imp.add_argument("--allow-system", action="store_true",
                     help="also import role 'system' lines (from your own export); without "
                     "it such a line is refused")
    _command(sub, "threads", "a persona's threads (main first)", _threads, json_flag=False)
    delete = _command(sub, "delete", "delete every message and thread of a persona", _delete,
                      json_flag=False)
    delete.add_argument("--yes", action="store_true", help="confirm the deletion")
    pin = _command(sub, "pin", "pin an item the persona keeps in every conversation "
                   "(at most five)", _pin)
    pin.add_argument("text", metavar="TEXT", help="one fact, goal or preference")
    unpin = _command(sub, "unpin", "drop one of the persona's pinned items", _unpin)
    unpin.add_argument("pin_id", type=int, metavar="PIN_ID",
                       help="the pinned item's id (see `sea memory pins`)")
    _command(sub, "pins", "the persona's pinned items", _pins)
    optimize = sub.add_parser(
        "optimize", help="maintenance: merge the search indexes' pieces, so searches read "
        "less (run when the store is quiet)")
    add_db_argument(optimize)
    optimize.set_defaults(func=_optimize)


def _command(
    sub: Any, name: str, help_text: str, handler: Any, *, aliases: Sequence[str] = (),
    json_flag: bool = True, persona_required: bool = True,
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text, aliases=list(aliases))
    add_db_argument(parser)
    parser.add_argument(
        "--persona", type=_persona_id,
        default=DEFAULT_PERSONA.id if persona_required else None,
        help=f"persona id (default: the bundled persona, {DEFAULT_PERSONA.id})"
        if persona_required else "persona id to import into (default: as in the file)",
    )
    if json_flag:
        parser.add_argument("--json", action="store_true", help="print JSON lines")
    parser.set_defaults(func=handler)
    return parser


def _persona_id(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("a persona id cannot be empty")
    return text


def _format(message: Message) -> str:
    where = f"pulse {message.pulse_id}" if message.pulse_id else "no pulse"
    if message.scope:
        where += f", scope {message.scope}"
    text = message.content.replace("\n", " ")
    if len(text) > PREVIEW_CHARS:
        text = text[:PREVIEW_CHARS] + "…"
    tags = ", ".join(message.tags) or "-"
    return printable(
        f"#{message.id} {message.created_at.isoformat(timespec='seconds')} {message.role} "
        f"[{where}] tags: {tags}\n    {text}")


def _print(messages: Sequence[Message], as_json: bool) -> None:
    for message in messages:
        if as_json:
            print(orjson.dumps(message_fields(message)).decode())
        else:
            print(_format(message))


def _recent(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise UsageError(f"--limit must be >= 0, got {args.limit}", code="SEA321")
    with opened_store(args.db) as store:
        _print(store.recent(args.persona, limit=args.limit, thread=args.thread), args.json)
    return 0


def _pulse(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        messages = store.pulse_messages(args.persona, args.pulse_id)
        if not messages:
            print(printable(f"no messages of pulse {args.pulse_id!r} for {args.persona!r}"),
                  file=sys.stderr)
            return 1
        _print(messages, args.json)
    return 0


def _time(text: str | None, flag: str) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{flag} {text!r} is not an ISO 8601 time", code="SEA321") from None
    if moment.tzinfo is None:
        raise UsageError(f"{flag} {text!r} needs a UTC offset, e.g. {text}+00:00", code="SEA321")
    return moment


def _search(args: argparse.Namespace) -> int:
    since, until = _time(args.since, "--since"), _time(args.until, "--until")
    with opened_store(args.db) as store:
        hits = store.search(args.persona, args.query, tags=args.tag, since=since, until=until,
                            limit=args.limit, match=args.match)
    if args.json:
        _print([hit.message for hit in hits], True)
        return 0
    for hit in hits:
        print(printable(
            f"#{hit.message.id} {hit.message.created_at.isoformat(timespec='seconds')} "
            f"{hit.message.role} (rank {hit.rank:.3f}): {hit.snippet}"))
    return 0


def _export(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        if args.output == "-":
            count = export_jsonl(store, args.persona, sys.stdout.buffer)
            sys.stdout.flush()
        else:
            count = _export_file(store, args.persona, Path(args.output))
    print(f"exported {count} messages of {args.persona!r}", file=sys.stderr)
    return 0


def _export_file(store: MessageStore, persona: str, target: Path) -> int:
    """Export into a temporary file beside ``target``, renamed over it only when complete,
    so a failed export leaves an existing file as it was."""
    partial = target.with_name(f".{target.name}.partial")
    try:
        with partial.open("wb") as out:
            count = export_jsonl(store, persona, out)
        partial.replace(target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UsageError(f"cannot write {target}: {exc.strerror}", code="SEA324") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return count


class _Unreadable(UsageError):
    code = "SEA322"


def _import(args: argparse.Namespace) -> int:
    """``sea memory import``: the file (or standard input) is read a line at a time, up to
    ``SEA_MAX_IMPORT_BYTES``; every line is checked before anything is written."""
    limit = file_limit(MEMORY_IMPORTS)
    with ExitStack() as stack:
        if args.file == "-":
            lines = bounded_lines(sys.stdin.buffer, "(standard input)", "memory export", limit,
                                  error=_Unreadable)
        else:
            lines = stack.enter_context(
                regular_lines(Path(args.file), "memory export", limit, error=_Unreadable))
        return _import_lines(args, lines)


def _import_lines(args: argparse.Namespace, lines: Iterator[bytes]) -> int:
    with opened_store(args.db) as store:
        try:
            result = import_jsonl(store, lines, persona=args.persona,
                                  allow_system=args.allow_system)
        except ImportFormatError as exc:
            raise SeaError(f"{args.file}: {exc.message} (nothing was imported)",
                           code=exc.code) from None
        except MemoryStoreError as exc:
            raise SeaError(f"{args.file}: {exc.message}", code=exc.code) from None
    print(f"imported {len(result.written)} messages ({result.skipped} already present)",
          file=sys.stderr)
    return 0


def _threads(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        for thread in store.threads(args.persona):
            parent = f" (in {thread.parent})" if thread.parent else ""
            state = "  open" if thread.open else ""
            if thread.closed_at is not None:
                state = f"  closed {thread.closed_at.isoformat(timespec='seconds')}"
            print(printable(f"{thread.id}  {thread.title}{parent}  "
                            f"{thread.created_at.isoformat(timespec='seconds')}{state}"))
    return 0


def _delete(args: argparse.Namespace) -> int:
    if not args.yes:
        raise UsageError(
            f"deleting all of {args.persona!r}'s memory cannot be undone; add --yes "
            "(export it first with `sea memory export`)",
            code="SEA323",
        )
    with opened_store(args.db) as store:
        count = store.delete_persona(args.persona)
    print(f"deleted {count} messages of {args.persona!r}", file=sys.stderr)
    return 0


def _print_pins(store: MessageStore, persona: str, as_json: bool) -> None:
    pins = store.pins(persona)
    if as_json:
        for pin in pins:
            print(orjson.dumps({"id": pin.id, "text": pin.text,
                                "created_at": pin.created_at.isoformat()}).decode())
        return
    if not pins:
        print(printable(f"{persona!r} has no pinned items"))
    for pin in pins:
        print(printable(f"#{pin.id} {pin.text}"))


def _pin(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        pinned = store.pin(args.persona, args.text)
        if not args.json:
            print(printable(f"pinned #{pinned.id} for {args.persona!r}"), file=sys.stderr)
        _print_pins(store, args.persona, args.json)
    return 0


def _unpin(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        if not store.unpin(args.persona, args.pin_id):
            pins = store.pins(args.persona)
            which = ("; its pinned items are " + ", ".join(f"#{pin.id}" for pin in pins)
                     + " (`sea memory pins` shows them)") if pins else "; it has none"
            print(printable(f"{args.persona!r} has no pinned item #{args.pin_id}{which}"),
                  file=sys.stderr)
            return 1
        _print_pins(store, args.persona, args.json)
    return 0


def _optimize(args: argparse.Namespace) -> int:
    from time import perf_counter

    with opened_store(args.db) as store:
        started = perf_counter()
        store.optimize()
        print(f"optimized in {perf_counter() - started:.2f} s", file=sys.stderr)
    return 0


def _pins(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        _print_pins(store, args.persona, args.json)
    return 0
