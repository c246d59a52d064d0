"""What the CLI commands share: the default data directory, store, persona and playbooks.

The environment is read here for ``SEA_HOME`` (the data directory, default the per-user
data directory) and ``SEA_DB`` (the store, when a command is called without the project
settings' resolution); every other ``SEA_*`` setting, ``SEA_DB`` included, is resolved with
the project file's (:mod:`sea.cli._project.resolve`: a flag, else the variable, else the
file, else the default). The limits of the files a person names are read by
:mod:`sea.cli._filelimits` (light, for ``sea validate``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from saimemory import MessageStore, Persona
from saimemory.errors import MemoryStoreError
from sea.cli._filelimits import file_limit
from sea.errors import SeaError, UsageError
from sea.jsonfile import CONFIG_FILES, read_json

DB_ENV = "SEA_DB"
HOME_ENV = "SEA_HOME"

DEFAULT_PERSONA = Persona(
    id="aoi",
    name="Aoi",
    system_prompt=(
        "You are Aoi, a warm and curious companion. You talk with the user in a friendly, "
        "natural way and keep your answers short."
    ),
)


def data_dir() -> Path:
    """Where the CLI keeps its default store and checkpoints."""
    configured = os.environ.get(HOME_ENV)
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("sea", appauthor=False))


def default_db() -> str:
    """The store to use when ``--db`` is absent: ``$SEA_DB`` or a file in :func:`data_dir`."""
    return os.environ.get(DB_ENV) or str(data_dir() / "memory.sqlite")


def store_location(db: str | None) -> str:
    """The store a command opens: ``--db``, else :func:`default_db` (its directory is made).

    Raises:
        UsageError: a ``--db`` file's directory does not exist (nothing is created on a
            mistyped path), or the data directory cannot be created.
    """
    if db is None:
        location = default_db()
        if "://" not in location:
            directory = Path(location).expanduser().parent
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UsageError(
                    f"cannot create the data directory {directory}: {exc.strerror}; set "
                    f"{HOME_ENV} to a writable directory or give --db"
                ) from None
        return location
    if "://" not in db and not Path(db).expanduser().parent.is_dir():
        raise UsageError(
            f"--db {db}: the directory {Path(db).expanduser().parent} does not exist; "
            "create it first (nothing was created)"
        )
    return db


def checkpoint_location(db: str) -> str:
    """Where the checkpoints of waiting pulses live: in the PostgreSQL database of a
    ``postgresql://`` store (so any process can resume them), else beside the SQLite
    store's file (``memory.checkpoints.sqlite`` for ``memory.sqlite``)."""
    if "://" in db:
        return db
    store = Path(db).expanduser()
    return str(store.with_name(f"{store.stem}.checkpoints.sqlite"))


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--db`` option every store-using command takes."""
    parser.add_argument(
        "--db",
        help=f"SQLite file or postgresql:// DSN (default: ${DB_ENV}, else the project "
        "file's db, else a file in the per-user data directory)",
    )


def load_persona(file: str | None, persona_id: str | None) -> Persona:
    """The persona from ``--persona-file`` (id, name, system_prompt) and ``--persona``.

    Raises:
        UsageError: the file cannot be read (it is not a regular file, or is larger than
            ``SEA_MAX_CONFIG_BYTES``) or lacks a field.
    """
    if file is None:
        if persona_id is None or persona_id == DEFAULT_PERSONA.id:
            return DEFAULT_PERSONA
        return Persona(persona_id, persona_id, DEFAULT_PERSONA.system_prompt.replace(
            DEFAULT_PERSONA.name, persona_id))
    data = read_json(Path(file), "persona file", limit=file_limit(CONFIG_FILES))
    if not isinstance(data, dict):
        raise UsageError(f"{file}: a persona file is a JSON object with id, name, system_prompt")
    unknown = sorted(set(data) - {"id", "name", "system_prompt"})
    if unknown:
        raise UsageError(f"{file}: unknown field {unknown[0]!r} (expected id, name, system_prompt)")
    pid = persona_id or data.get("id")
    if not isinstance(pid, str) or not pid:
        problem = "is missing" if pid is None else f"must be a non-empty string, not {pid!r}"
        raise UsageError(f"{file}: field 'id' {problem} (or give --persona ID)")
    name = data.get("name", pid)
    prompt = data.get("system_prompt", "")
    if not isinstance(name, str) or not isinstance(prompt, str):
        raise UsageError(f"{file}: 'name' and 'system_prompt' must be strings")
    return Persona(pid, name, prompt)


@contextmanager
def opened_store(db: str | None) -> Iterator[MessageStore]:
    """The store of ``--db`` (see :func:`store_location`), closed at the end; a store that
    cannot be opened or used is a clean :class:`~sea.errors.SeaError` with its own code."""
    from saimemory import open_store

    try:
        store = open_store(store_location(db))
    except MemoryStoreError as exc:
        raise SeaError(exc.message, code=exc.code) from None
    try:
        yield store
    except MemoryStoreError as exc:
        raise SeaError(exc.message, code=exc.code) from None
    finally:
        store.close()
