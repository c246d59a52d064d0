"""What the queue commands share: opening the queue, the persona and playbook options."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sea.cli._setup import add_db_argument, store_location
from sea.errors import UsageError

T = TypeVar("T")


def add_queue_arguments(parser: argparse.ArgumentParser) -> None:
    """``--db`` (a ``postgresql://`` DSN: the queue lives in the store's database)."""
    add_db_argument(parser)


async def with_queue(
    args: argparse.Namespace, work: Callable[[Any], Awaitable[T]], *, install: bool = True
) -> T:
    """Run ``work(queue)`` on the queue of ``--db``, open for as long as it runs; a command
    that only reads passes ``install=False`` and creates nothing in the database.

    Raises:
        UsageError: ``--db`` is not PostgreSQL, the workers extra is missing, the server
            cannot be reached, or (without ``install``) the schema holds no queue.
    """
    from sea.queue import PulseQueue

    queue = PulseQueue(store_location(args.db))
    await queue.open(install=install)
    try:
        return await work(queue)
    finally:
        await queue.close()


def check_playbook(name: str, dirs: list[str]) -> None:
    """Refuse a playbook that the bundled playbooks and ``--playbooks`` lack (the workers
    look in their own ``--playbooks``; a name unknown here is probably a typo).

    Raises:
        SeaError: the playbook does not exist or is invalid.
    """
    from sea.cli._runtime import search_dirs
    from sea.lang.library import PlaybookLibrary

    PlaybookLibrary.bundled(search_dirs(dirs)).get(name)


def add_persona_arguments(parser: argparse.ArgumentParser) -> None:
    """``--persona`` and ``--persona-file`` (as ``sea run``)."""
    parser.add_argument("--persona", help="persona id (default: the bundled persona, aoi)")
    parser.add_argument("--persona-file", help="JSON file with id, name and system_prompt")
    parser.add_argument(
        "--playbooks", action="append", default=[], metavar="DIR",
        help="directory searched for the playbook before the bundled ones, to check its "
        "name (repeatable; the workers need it too)",
    )


def json_answer(text: str) -> Any:
    """A ``--answer`` or ``--args`` value: JSON text."""
    import orjson

    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc})") from exc


def json_object(text: str) -> dict[str, Any]:
    """An ``--args`` value: a JSON object."""
    value = json_answer(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object, e.g. '{\"topic\": \"cats\"}'")
    return value


def no_empty(value: str, what: str) -> str:
    """Refuse an empty id.

    Raises:
        UsageError: it is empty.
    """
    if not value.strip():
        raise UsageError(f"the {what} is empty", code="SEA364")
    return value
